/**
 * The OpenTelemetry side of the spans, loaded only when an endpoint is configured: a process-wide
 * Node tracer provider (the Azure SDK's spans nest beneath the hook's), OTLP/gRPC through a batch
 * processor, every span redacted on its way out; the sampler from `OTEL_TRACES_SAMPLER`.
 */
import { context, SpanStatusCode } from "@opentelemetry/api";
import type { Attributes, Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { AzureSdkInstrumentation } from "@azure/opentelemetry-instrumentation-azure-sdk";
import { failureCauseOf } from "../core/clusterMessage";
import type { InstalledTracer, SpanAttributes } from "../logging/spans";
import type { TracingSettings } from "./tracingSettings";
import { redactAttributes, redactSpanText, secretValuesOf } from "./redaction";

const scopeName = "aro-hcp-identity-status";

/** Attributes without the undefined ones, which OpenTelemetry would drop with a warning. */
const defined = (attributes: SpanAttributes): Attributes => Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined));

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

/** Redacts, then hands over to `inner`; `settled` resolves when every export started so far has answered, so the process does not end before. */
function redactingExporter(inner: SpanExporter, secretValues: () => readonly string[]): SpanExporter & { settled(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  return {
    export(spans, resultCallback) {
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
    settled: () => Promise.all([...inFlight]).then(() => undefined),
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
  const provider = new NodeTracerProvider({ resource: Resource.default().merge(new Resource({ "service.name": settings.serviceName })) });
  const target = options.exporter ?? new OTLPTraceExporter({ url: settings.endpoint });
  const exporter = redactingExporter(target, () => [...secretValuesOf(process.env), ...secretValues()]);
  // Sent in the background; no provider call waits for it.
  const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: 200 });
  provider.addSpanProcessor(processor);
  provider.register();
  instrumentAzureSdk();
  // Every ended span sent and answered: the batch the timer sent included.
  const sendAll = (): Promise<void> => processor.forceFlush().finally(() => exporter.settled());
  if (options.flushOnInterrupt === true) {
    const flushThenStop = (signal: NodeJS.Signals): void => {
      const limit = new Promise<void>((resolve) => setTimeout(resolve, interruptFlushLimitMs).unref());
      // Once: the listener is gone, so the signal raised again ends the process as it would have.
      void Promise.race([sendAll().catch(() => undefined), limit]).then(() => process.kill(process.pid, signal));
    };
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, flushThenStop);
  }
  // The provider's own tracer: the hook's spans go to this exporter even where another provider is registered for the process.
  const tracer = provider.getTracer(scopeName);
  // A context that falls back to the active one (azure/assertionTokenCredential.ts, requestCredentialOptions) may itself be
  // the active one, inside the SDK's own spans: a lookup never asks itself again.
  let lookingUp = false;
  return {
    inSpan(name, attributes, run, failed) {
      return tracer.startActiveSpan(name, { attributes: defined(attributes) }, async (span: Span) => {
        try {
          return await run({ set: (more) => span.setAttributes(defined(more)) });
        } catch (error) {
          if (failed !== undefined) span.setAttributes(defined(failed(error)));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? `${error.name}: ${failureCauseOf(error.message)}` : "failed" });
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
    flush: sendAll,
  };
}
