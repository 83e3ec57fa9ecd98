/**
 * A span around each provider call and each cluster's pass; they only call through until an
 * endpoint is configured. The dynamic provider host is told neither the URN nor the engine's trace
 * context, so each call starts its own trace and names its resource by project, type and cluster.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ParsedResourceId } from "../core/azureResourceId";
import { tracingOn } from "../logging/spans";
import type { SyncDependencies } from "../sync/syncDependencies";
import { startTracingIfConfigured } from "./startTracing";
import type { PassKind, PassResults } from "./tracedCalls";

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

/** A cluster's pass in its span while tracing is on: a sync (create, update) or a refresh (read). */
export async function tracePass<K extends PassKind>(
  kind: K,
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<PassResults[K]>,
): Promise<PassResults[K]> {
  if (!tracingOn()) return run(dependencies);
  const { passSpan } = await import("./tracedCalls");
  return passSpan(kind, cluster, dependencies, run);
}
