/** The hook's spans: a door that does nothing until a tracer is installed, so a run without tracing loads no OpenTelemetry. */

/** A span's attributes; an `undefined` value leaves the attribute out. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** The span a function runs in: it may add attributes while it runs. */
export interface SpanScope {
  set(attributes: SpanAttributes): void;
}

/** The attributes a failure adds to the span it ended. */
type FailureAttributes = (error: unknown) => SpanAttributes;

/** What the OpenTelemetry side implements (telemetry/otelTracer.ts). */
export interface InstalledTracer {
  /** Runs `run` in a child span of the active one, ended when it settles; a rejection sets an error status and `failed`'s attributes. */
  inSpan<T>(name: string, attributes: SpanAttributes, run: (span: SpanScope) => Promise<T>, failed?: FailureAttributes): Promise<T>;
  /** A value of the active tracing context (the Azure SDK's per-request store falls back to it). */
  contextValue(key: symbol): unknown;
  /** Sends every ended span and resolves when the endpoint answered (tests: the provider's spans go out in the background). */
  flush(): Promise<void>;
}

const noScope: SpanScope = { set: () => undefined };

let installed: InstalledTracer | undefined;

/** Installs the tracer every later span goes to; `undefined` turns spans off again (tests). */
export function installTracer(tracer: InstalledTracer | undefined): void {
  installed = tracer;
}

export function tracingOn(): boolean {
  return installed !== undefined;
}

/** Runs `run` in a span named `name` when tracing is on; otherwise just runs it. */
export function inSpan<T>(name: string, attributes: SpanAttributes, run: (span: SpanScope) => Promise<T>, failed?: FailureAttributes): Promise<T> {
  return installed === undefined ? run(noScope) : installed.inSpan(name, attributes, run, failed);
}

/** A value of the active tracing context; `undefined` when tracing is off. */
export function activeContextValue(key: symbol): unknown {
  return installed?.contextValue(key);
}
