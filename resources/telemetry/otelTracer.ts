/**
 * The OpenTelemetry side of the spans, loaded only when an endpoint is configured: a process-wide
 * Node tracer provider (the Azure SDK's spans nest beneath the hook's), OTLP/gRPC through a batch
 * processor, every span redacted on its way out; the sampler from `OTEL_TRACES_SAMPLER`.
 */
import { context, SpanStatusCode } from "@opentelemetry/api";
import type { Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { AzureSdkInstrumentation } from "@azure/opentelemetry-instrumentation-azure-sdk";
import { failureCauseOf } from "../core/failureCause";
import { log } from "../logging/logger";
import type { InstalledTracer, SpanAttributes } from "../logging/spans";
import type { TracingSettings } from "./tracingSettings";
import { redactAttributes, redactSpanText, secretValuesOf } from "./redaction";

const scopeName = "aro-hcp-identity-status";

/** Attributes without the undefined ones, which OpenTelemetry would drop with a warning. */
function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) result[name] = value;
  return result;
}

/** A copy of the span as the exporter reads it, every text redacted. */
function redactedSpan(span: ReadableSpan, secrets: readonly string[]): ReadableSpan {
  return Object.create(span, {
    name: { value: redactSpanText(span.name, secrets) },
    attributes: { value: redactAttributes(span.attributes, secrets) },
    events: {
      value: span.events.map((event) => ({
        ...event,
        name: redactSpanText(event.name, secrets),
        ...(event.attributes === undefined ? {} : { attributes: redactAttributes(event.attributes, secrets) }),
      })),
    },
    status: { value: span.status.message === undefined ? span.status : { ...span.status, message: redactSpanText(span.status.message, secrets) } },
  }) as ReadableSpan;
}

/** An exporter that can say when the exports it started have all answered. */
interface SettlingExporter extends SpanExporter {
  /** Resolves when every export started so far has answered (or failed). */
  settled(): Promise<void>;
}

/** Redacts, then hands over to `inner`, keeping exports in flight so the process does not end before they are answered. */
function redactingExporter(inner: SpanExporter, secretValues: () => readonly string[]): SettlingExporter {
  const inFlight = new Set<Promise<void>>();
  return {
    export(spans: ReadableSpan[], resultCallback: Parameters<SpanExporter["export"]>[1]) {
      const secrets = secretValues();
      let answered: () => void = () => undefined;
      const exported = new Promise<void>((resolve) => (answered = resolve));
      inFlight.add(exported);
      inner.export(
        spans.map((span) => redactedSpan(span, secrets)),
        (result) => {
          inFlight.delete(exported);
          answered();
          resultCallback(result);
        },
      );
    },
    settled: async () => {
      await Promise.all([...inFlight]);
    },
    shutdown: () => inner.shutdown(),
    ...(inner.forceFlush === undefined ? {} : { forceFlush: () => (inner.forceFlush as () => Promise<void>).call(inner) }),
  };
}

/** Points the Azure SDK's tracing at OpenTelemetry, whether or not @azure/core-tracing is loaded yet. */
function instrumentAzureSdk(): void {
  const instrumentation = new AzureSdkInstrumentation();
  // The instrumentation patches @azure/core-tracing when it is first required; a module loaded
  // before tracing started is patched here, by the instrumentation's own definition.
  for (const definition of instrumentation.getModuleDefinitions()) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module the instrumentation patches, loaded by name
    definition.patch?.(require(definition.name) as never);
  }
}

interface OtelTracerOptions {
  /** Replaces the OTLP exporter (tests). */
  readonly exporter?: SpanExporter;
  /** Sends pending spans when the engine interrupts the plugin (SIGINT, a kill follows), then lets the signal end it. */
  readonly flushOnInterrupt?: boolean;
}

/** At most this long for the last spans when interrupted: within the engine's 5 s. */
const interruptFlushLimitMs = 3_000;

/** Builds the tracer and registers its provider; `secretValues` are setting values no span may carry. */
export function createOtelTracer(settings: TracingSettings, secretValues: () => readonly string[], options: OtelTracerOptions = {}): InstalledTracer {
  const resource = Resource.default().merge(new Resource({ "service.name": settings.serviceName }));
  const provider = new NodeTracerProvider({ resource });
  const target = options.exporter ?? new OTLPTraceExporter({ url: settings.endpoint });
  const exporter = redactingExporter(target, () => [...secretValuesOf(process.env), ...secretValues()]);
  const processor = new BatchSpanProcessor(
    exporter,
    // Sent in the background every fifth of a second; no provider call waits for it.
    { scheduledDelayMillis: 200 },
  );
  provider.addSpanProcessor(processor);
  provider.register();
  instrumentAzureSdk();
  // Every ended span sent and answered: the batch the timer sent included.
  const sendAll = async (): Promise<void> => {
    await processor.forceFlush().finally(() => exporter.settled());
  };
  if (options.flushOnInterrupt === true) {
    const flushThenStop = (signal: NodeJS.Signals): void => {
      const limit = new Promise<void>((resolve) => setTimeout(resolve, interruptFlushLimitMs).unref());
      // Once: the listener is gone, so the signal raised again ends the process as it would have.
      void Promise.race([sendAll().catch(() => undefined), limit]).then(() => process.kill(process.pid, signal));
    };
    process.once("SIGINT", flushThenStop);
    process.once("SIGTERM", flushThenStop);
  }
  // The provider's own tracer: the hook's spans go to this exporter even where another provider is registered for the process.
  const tracer = provider.getTracer(scopeName);
  // A context that falls back to the active one (azure/assertionTokenCredential.ts, requestCredentialOptions) may itself be
  // the active one, inside the SDK's own spans: a lookup never asks itself again.
  let lookingUp = false;
  let exportFailureReported = false;
  return {
    inSpan(name, attributes, run) {
      return tracer.startActiveSpan(name, { attributes: defined(attributes) }, async (span: Span) => {
        try {
          return await run({ set: (more) => span.setAttributes(defined(more)) });
        } catch (error) {
          const message = error instanceof Error ? `${error.name}: ${failureCauseOf(error.message)}` : "failed";
          span.setStatus({ code: SpanStatusCode.ERROR, message });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    contextValue(key) {
      if (lookingUp) return undefined;
      lookingUp = true;
      try {
        return context.active().getValue(key);
      } finally {
        lookingUp = false;
      }
    },
    // Tracing never fails a call: an endpoint that does not answer costs the spans, said once.
    flush: () =>
      sendAll().catch((error: unknown) => {
        if (exportFailureReported) return;
        exportFailureReported = true;
        log("warning", "tracing", settings.source, `spans could not be exported: ${redactSpanText(error instanceof Error ? error.message : String(error))}`);
      }),
  };
}
