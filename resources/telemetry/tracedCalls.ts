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

export interface PassResults {
  readonly sync: SyncResult;
  readonly refresh: RefreshResult;
}
export type PassKind = keyof PassResults;

const resultAttributes: { readonly [K in PassKind]: (result: PassResults[K]) => SpanAttributes } = {
  sync: passResultAttributes,
  refresh: refreshResultAttributes,
};

/** One cluster's pass in its span: the dependencies it gets trace their I/O and count retries and waits. */
export function passSpan<K extends PassKind>(
  kind: K,
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<PassResults[K]>,
): Promise<PassResults[K]> {
  const clusterName = clusterNameOf(cluster);
  return inSpan(`cluster ${kind} pass`, { [attribute.passKind]: kind, [attribute.clusterResourceId]: cluster.canonical }, async (span) => {
    const counters: PassCounters = { retries: 0, throttled: 0, throttleWaitMs: 0, waitMs: 0 };
    try {
      const result = await run(tracedDependencies(dependencies, cluster, counters));
      span.set({ ...(resultAttributes[kind] as (result: PassResults[K]) => SpanAttributes)(result), ...counterAttributes(counters) });
      return result;
    } catch (error) {
      span.set({ ...passFailureAttributes(error, partialResultOf(error), clusterName), ...counterAttributes(counters) });
      throw error;
    }
  });
}
