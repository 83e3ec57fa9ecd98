/**
 * The provider's two hooks into tracing: a span around each call the engine makes (check, diff,
 * create, update, read, delete) and a span around each cluster's pass inside it. Both only call
 * through while tracing is off; the first call with an endpoint configured loads the
 * OpenTelemetry SDK (startTracing.ts) and the spans' code (tracedCalls.ts).
 *
 * The provider host is not told the call's URN, nor the engine's trace context: @pulumi/pulumi's
 * dynamic provider host hands a ResourceProvider only the inputs and outputs, although the engine
 * puts a `traceparent` in each call's gRPC metadata (docs/operations.md, "Traces"). So each
 * provider call's span starts a trace of its own and names its resource by project, type and
 * cluster ID: all of its URN but the stack, which the host is not told either.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ParsedResourceId } from "../core/azureResourceId";
import { tracingOn } from "../logging/spans";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";
import { startTracingIfConfigured } from "./startTracing";

type Provider<I, O> = pulumi.dynamic.ResourceProvider<I, O>;

/** The cluster resource ID a call's inputs or outputs name, if any. */
function clusterIdOf(...bags: unknown[]): string | undefined {
  for (const bag of bags) {
    const value = (bag as { clusterResourceId?: unknown } | undefined)?.clusterResourceId;
    if (typeof value === "string") return value;
  }
  return undefined;
}

/** Runs one provider call, in its span while tracing is on (the spans go out in the background: otelTracer.ts). */
async function providerCall<T>(method: string, clusterResourceId: string | undefined, run: () => Promise<T>): Promise<T> {
  await startTracingIfConfigured(process.env);
  if (!tracingOn()) return run();
  const { callSpan } = await import("./tracedCalls");
  return callSpan(method, clusterResourceId, run);
}

/** The provider with a span around each call; see the module comment. */
export function traceProviderCalls<I, O>(provider: Provider<I, O>): Provider<I, O> {
  const check = provider.check?.bind(provider);
  const diff = provider.diff?.bind(provider);
  const update = provider.update?.bind(provider);
  const read = provider.read?.bind(provider);
  const remove = provider.delete?.bind(provider);
  return {
    ...(provider.configure === undefined ? {} : { configure: provider.configure.bind(provider) }),
    ...(check === undefined ? {} : { check: (olds: I, news: I) => providerCall("check", clusterIdOf(news, olds), () => check(olds, news)) }),
    ...(diff === undefined ? {} : { diff: (id: string, olds: O, news: I) => providerCall("diff", clusterIdOf(news, olds), () => diff(id, olds, news)) }),
    create: (inputs: I) => providerCall("create", clusterIdOf(inputs), () => provider.create(inputs)),
    ...(update === undefined
      ? {}
      : { update: (id: string, olds: O, news: I) => providerCall("update", clusterIdOf(news, olds), () => update(id, olds, news)) }),
    ...(read === undefined ? {} : { read: (id: string, props?: O) => providerCall("read", clusterIdOf(props), () => read(id, props)) }),
    ...(remove === undefined ? {} : { delete: (id: string, props: O) => providerCall("delete", clusterIdOf(props), () => remove(id, props)) }),
  };
}

/** A sync pass (create, update), in its span while tracing is on. */
export async function traceSyncPass(
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<SyncResult>,
): Promise<SyncResult> {
  if (!tracingOn()) return run(dependencies);
  const { syncPassSpan } = await import("./tracedCalls");
  return syncPassSpan(cluster, dependencies, run);
}

/** A refresh (read), in its span while tracing is on. */
export async function traceRefreshPass(
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<RefreshResult>,
): Promise<RefreshResult> {
  if (!tracingOn()) return run(dependencies);
  const { refreshPassSpan } = await import("./tracedCalls");
  return refreshPassSpan(cluster, dependencies, run);
}
