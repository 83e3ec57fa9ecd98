/**
 * Whether and where spans are exported: `PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT` (the engine's receiver
 * under `--otel-traces`), else the standard OTLP/gRPC variables. `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turn it off; `OTEL_SERVICE_NAME` names the service.
 */
import type { Environment } from "../core/settingsKeys";

/** The variables that name the endpoint, the first set one winning. */
const endpointVariables = ["PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"] as const;
const variables = [
  ...endpointVariables,
  "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_SDK_DISABLED",
  "OTEL_TRACES_EXPORTER",
  "OTEL_SERVICE_NAME",
] as const;

export interface TracingSettings {
  /** The OTLP/gRPC endpoint, as a URL (`http://host:port` is gRPC without TLS, `https://…` with it). */
  readonly endpoint: string;
  /** Which variable named it, for messages. */
  readonly source: (typeof endpointVariables)[number];
  readonly serviceName: string;
}

/** Tracing off, or on with its settings, or refused with the reason (a protocol this package does not speak). */
type TracingDecision =
  { readonly kind: "off" } | { readonly kind: "on"; readonly settings: TracingSettings } | { readonly kind: "refused"; readonly reason: string };

/** The variables the decision reads, joined: the provider decides again only when it changes. */
export function tracingEnvironmentKey(environment: Environment): string {
  return variables.map((variable) => environment[variable]).join("\u0000");
}

/** A `host:port` (the engine's form) as a URL; a URL as it is. */
function asUrl(endpoint: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`;
}

export function tracingDecision(environment: Environment): TracingDecision {
  const value = (variable: (typeof variables)[number]): string | undefined => environment[variable]?.trim() || undefined;
  if (value("OTEL_SDK_DISABLED")?.toLowerCase() === "true" || value("OTEL_TRACES_EXPORTER")?.toLowerCase() === "none") return { kind: "off" };
  const source = endpointVariables.find((variable) => value(variable) !== undefined);
  if (source === undefined) return { kind: "off" };
  const settings = { endpoint: asUrl(value(source) ?? ""), source, serviceName: value("OTEL_SERVICE_NAME") ?? "aro-hcp-identity-status" };
  // The engine's receiver speaks OTLP/gRPC whatever the standard variables say.
  if (source === "PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT") return { kind: "on", settings };
  const protocolVariable = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") === undefined ? "OTEL_EXPORTER_OTLP_PROTOCOL" : "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
  const protocol = value(protocolVariable);
  if (protocol !== undefined && protocol.toLowerCase() !== "grpc") {
    return {
      kind: "refused",
      reason: `${protocolVariable} is '${protocol}': aro-hcp-identity-status exports spans over OTLP/gRPC only; set it to 'grpc' (or unset it) and point ${source} at the collector's gRPC port (4317 by default)`,
    };
  }
  return { kind: "on", settings };
}
