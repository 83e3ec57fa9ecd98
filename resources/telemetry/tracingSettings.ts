/**
 * Whether and where spans are exported: `PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT` (the engine's receiver
 * under `--otel-traces`), else the standard OTLP/gRPC variables. `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turn it off; `OTEL_SERVICE_NAME` names the service.
 */

/** The service name spans carry unless `OTEL_SERVICE_NAME` says otherwise. */
const defaultServiceName = "aro-hcp-identity-status";

export interface TracingSettings {
  /** The OTLP/gRPC endpoint, as a URL (`http://host:port` is gRPC without TLS, `https://…` with it). */
  readonly endpoint: string;
  /** Which variable named it, for messages. */
  readonly source: "PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_EXPORTER_OTLP_ENDPOINT";
  readonly serviceName: string;
}

/** Tracing off, or on with its settings, or refused with the reason (a protocol this package does not speak). */
export type TracingDecision =
  { readonly kind: "off" } | { readonly kind: "on"; readonly settings: TracingSettings } | { readonly kind: "refused"; readonly reason: string };

type Environment = Readonly<Record<string, string | undefined>>;

/** The variables the decision reads, joined: the provider decides again only when it changes. */
export function tracingEnvironmentKey(environment: Environment): string {
  return [
    environment.PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT,
    environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    environment.OTEL_EXPORTER_OTLP_ENDPOINT,
    environment.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    environment.OTEL_EXPORTER_OTLP_PROTOCOL,
    environment.OTEL_SDK_DISABLED,
    environment.OTEL_TRACES_EXPORTER,
    environment.OTEL_SERVICE_NAME,
  ].join("\u0000");
}

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value.trim() === "" ? undefined : value.trim());

/** A `host:port` (the engine's form) as a URL; a URL as it is. */
function asUrl(endpoint: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`;
}

export function tracingDecision(environment: Environment): TracingDecision {
  if (nonEmpty(environment.OTEL_SDK_DISABLED)?.toLowerCase() === "true") return { kind: "off" };
  if (nonEmpty(environment.OTEL_TRACES_EXPORTER)?.toLowerCase() === "none") return { kind: "off" };
  const serviceName = nonEmpty(environment.OTEL_SERVICE_NAME) ?? defaultServiceName;
  const pulumiEndpoint = nonEmpty(environment.PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT);
  if (pulumiEndpoint !== undefined) {
    return { kind: "on", settings: { endpoint: asUrl(pulumiEndpoint), source: "PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT", serviceName } };
  }
  const tracesEndpoint = nonEmpty(environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = tracesEndpoint ?? nonEmpty(environment.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (endpoint === undefined) return { kind: "off" };
  const source = tracesEndpoint === undefined ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
  const protocolVariable =
    nonEmpty(environment.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) === undefined ? "OTEL_EXPORTER_OTLP_PROTOCOL" : "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
  const protocol = nonEmpty(environment[protocolVariable]);
  if (protocol !== undefined && protocol.toLowerCase() !== "grpc") {
    return {
      kind: "refused",
      reason: `${protocolVariable} is '${protocol}': aro-hcp-identity-status exports spans over OTLP/gRPC only; set it to 'grpc' (or unset it) and point ${source} at the collector's gRPC port (4317 by default)`,
    };
  }
  return { kind: "on", settings: { endpoint: asUrl(endpoint), source, serviceName } };
}
