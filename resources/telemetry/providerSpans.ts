/**
 * A span around each provider call and each cluster's pass; they only call through until an
 * endpoint is configured, and the OpenTelemetry SDK is loaded only then. The dynamic provider host is
 * told neither the URN nor the engine's trace context, so each call starts its own trace and names
 * its resource by project, type and cluster.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { ParsedResourceId } from "../core/azureResourceId";
import { log } from "../logging/logger";
import { installTracer, tracingOn } from "../logging/spans";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { PassKind, PassResults } from "./tracedCalls";
import { tracingDecision, tracingEnvironmentKey } from "./tracingSettings";
import { messageOf } from "../core/clusterMessage";

type Provider<I, O> = pulumi.dynamic.ResourceProvider<I, O>;

let decidedFor: string | undefined;
let starting: Promise<void> | undefined;

/** Values no span may carry besides the environment's secrets (the Cosmos key from the stack config). */
const secretSettings: Set<string> = new Set();

/** Adds the values of secret settings (8 characters or more) that redaction takes out of every span. */
export function addSecretSettingValues(values: ReadonlyArray<string | undefined>): void {
  for (const value of values) if (value !== undefined && value.length >= 8) secretSettings.add(value);
}

/** Starts tracing once, when the environment names an endpoint; resolves once the tracer is installed (or refused). */
function startTracingIfConfigured(environment: Readonly<Record<string, string | undefined>>): Promise<void> {
  const key = tracingEnvironmentKey(environment);
  if (starting !== undefined || key === decidedFor) return starting ?? Promise.resolve();
  decidedFor = key;
  const decision = tracingDecision(environment);
  if (decision.kind === "refused") log("warning", "tracing", decision.reason, "no spans are exported");
  if (decision.kind !== "on") return Promise.resolve();
  starting = import("./otelTracer")
    .then(({ createOtelTracer }) => installTracer(createOtelTracer(decision.settings, () => [...secretSettings], { flushOnInterrupt: true })))
    .catch((error: unknown) => {
      // Tracing never fails a run: the provider goes on without spans.
      log("warning", "tracing", decision.settings.source, `spans cannot be exported: ${messageOf(error)}`);
    });
  return starting;
}

/** The cluster resource ID the first of a call's arguments that names one names (the news before the olds). */
const clusterIdOf = (bags: readonly unknown[]): string | undefined =>
  bags.map((bag) => (bag as { clusterResourceId?: unknown } | undefined)?.clusterResourceId).find((value): value is string => typeof value === "string");

/** The provider with a span around each call; see the module comment. */
export function traceProviderCalls<I, O>(provider: Provider<I, O>): Provider<I, O> {
  const traced: Record<string, unknown> = provider.configure === undefined ? {} : { configure: provider.configure.bind(provider) };
  for (const method of ["check", "diff", "create", "update", "read", "delete"] as const) {
    const call = provider[method] as ((...args: unknown[]) => Promise<unknown>) | undefined;
    if (call === undefined) continue;
    // The spans go out in the background (otelTracer.ts); the inputs come last, so the arguments are searched from the end.
    traced[method] = async (...args: unknown[]) => {
      await startTracingIfConfigured(process.env);
      const run = () => call.apply(provider, args);
      if (!tracingOn()) return run();
      const { callSpan } = await import("./tracedCalls");
      return callSpan(method, clusterIdOf([...args].reverse()), run);
    };
  }
  return traced as unknown as Provider<I, O>;
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
