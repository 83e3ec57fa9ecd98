/** Starts tracing once when the environment names an OTLP endpoint, loading the OpenTelemetry SDK only then. */
import { log } from "../logging/logger";
import { installTracer } from "../logging/spans";
import { tracingDecision, tracingEnvironmentKey } from "./tracingSettings";

let decidedFor: string | undefined;
let starting: Promise<void> | undefined;
let started = false;

/** Values no span may carry besides the environment's secrets (the Cosmos key from the stack config). */
const secretSettings: Set<string> = new Set();

/** Adds the values of secret settings (8 characters or more) that redaction takes out of every span. */
export function addSecretSettingValues(values: ReadonlyArray<string | undefined>): void {
  for (const value of values) if (value !== undefined && value.length >= 8) secretSettings.add(value);
}

/** Starts tracing if configured and not started yet; resolves once the tracer is installed (or refused). */
export function startTracingIfConfigured(environment: Readonly<Record<string, string | undefined>>): Promise<void> {
  if (started) return starting ?? Promise.resolve();
  const key = tracingEnvironmentKey(environment);
  if (key === decidedFor) return starting ?? Promise.resolve();
  decidedFor = key;
  const decision = tracingDecision(environment);
  if (decision.kind === "refused") {
    log("warning", "tracing", decision.reason, "no spans are exported");
    return Promise.resolve();
  }
  if (decision.kind === "off") return Promise.resolve();
  started = true;
  starting = import("./otelTracer")
    .then(({ createOtelTracer }) => installTracer(createOtelTracer(decision.settings, () => [...secretSettings], { flushOnInterrupt: true })))
    .catch((error: unknown) => {
      // Tracing never fails a run: the provider goes on without spans.
      log("warning", "tracing", decision.settings.source, `spans cannot be exported: ${error instanceof Error ? error.message : String(error)}`);
    });
  return starting;
}
