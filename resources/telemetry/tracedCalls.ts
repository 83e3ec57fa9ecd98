/** The spans of a provider call and of a pass, loaded only while tracing is on. */
import type { ParsedResourceId } from "../core/azureResourceId";
import { clusterNameOf } from "../core/clusterMessage";
import type { SpanAttributes } from "../logging/spans";
import { inSpan } from "../logging/spans";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";
import { partialResultOf } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";
import { attribute, failureAttributes, passFailureAttributes, passResultAttributes, refreshResultAttributes } from "./passAttributes";
import type { PassCounters } from "./tracedDependencies";
import { counterAttributes, tracedDependencies } from "./tracedDependencies";

/** The resource's type token (serviceProviderClusterIdentityStatus.ts; not imported: that module is above this one). */
const resourceType = "pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus";

/** One provider call in its span, named by all of the resource's URN the provider host is told. */
export function callSpan<T>(method: string, clusterResourceId: string | undefined, run: () => Promise<T>): Promise<T> {
  return inSpan(
    `provider ${method}`,
    {
      [attribute.providerMethod]: method,
      [attribute.resourceType]: resourceType,
      // The engine names the project to its plugins; the stack it does not.
      [attribute.project]: process.env.PULUMI_PROJECT,
      [attribute.clusterResourceId]: clusterResourceId,
    },
    async (span) => {
      try {
        return await run();
      } catch (error) {
        span.set(failureAttributes(error));
        throw error;
      }
    },
  );
}

/** One cluster's pass in its span: the dependencies it gets trace their I/O and count retries and waits. */
function passSpan<R>(
  kind: "sync" | "refresh",
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<R>,
  resultAttributes: (result: R) => SpanAttributes,
): Promise<R> {
  const clusterName = clusterNameOf(cluster);
  return inSpan(`cluster ${kind} pass`, { [attribute.passKind]: kind, [attribute.clusterResourceId]: cluster.canonical }, async (span) => {
    const counters: PassCounters = { retries: 0, throttled: 0, throttleWaitMs: 0, waitMs: 0 };
    try {
      const result = await run(tracedDependencies(dependencies, cluster, counters));
      span.set({ ...resultAttributes(result), ...counterAttributes(counters) });
      return result;
    } catch (error) {
      span.set({ ...passFailureAttributes(error, partialResultOf(error), clusterName), ...counterAttributes(counters) });
      throw error;
    }
  });
}

/** A sync pass (create, update) in its span. */
export function syncPassSpan(
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<SyncResult>,
): Promise<SyncResult> {
  return passSpan("sync", cluster, dependencies, run, passResultAttributes);
}

/** A refresh (read) in its span. */
export function refreshPassSpan(
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<RefreshResult>,
): Promise<RefreshResult> {
  return passSpan("refresh", cluster, dependencies, run, refreshResultAttributes);
}
