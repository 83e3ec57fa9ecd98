/**
 * Reading what `pulumi … --otel-traces=<file://…|grpc://…>` exports, for the tracing e2e tests:
 * the engine's file (OTLP/JSON, one ExportTraceServiceRequest a line) and a real OTLP/gRPC trace
 * collector (opentelemetry.proto.collector.trace.v1.TraceService/Export, each request decoded with
 * the OTLP protobuf definitions; a request that does not decode is refused), both flattened to one
 * list of spans; and the questions the tests ask of it.
 */
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";

/** One span, whoever exported it. */
export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** `service.name` of the span's resource. */
  readonly service: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly statusCode: number;
  readonly statusMessage: string;
}

interface AnyValue {
  readonly stringValue?: string;
  readonly intValue?: string | number | { toNumber(): number };
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
}
interface KeyValue {
  readonly key: string;
  readonly value?: AnyValue;
}
interface OtlpSpan {
  readonly traceId: string | Uint8Array;
  readonly spanId: string | Uint8Array;
  readonly parentSpanId?: string | Uint8Array | null;
  readonly name: string;
  readonly attributes?: readonly KeyValue[];
  readonly status?: { readonly code?: number | string; readonly message?: string };
}
interface ExportRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: readonly KeyValue[] };
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: readonly OtlpSpan[] }>;
  }>;
}

function valueOf(value: AnyValue | undefined): string | number | boolean {
  if (value?.stringValue !== undefined) return value.stringValue;
  if (value?.boolValue !== undefined) return value.boolValue;
  if (value?.doubleValue !== undefined) return value.doubleValue;
  const integer = value?.intValue;
  if (integer !== undefined) return typeof integer === "object" ? integer.toNumber() : Number(integer);
  return "";
}

/** An ID as hex: the file has it so; protobuf decodes bytes (and null for an absent parent). */
const hex = (id: string | Uint8Array | null | undefined): string =>
  id === undefined || id === null ? "" : typeof id === "string" ? id : Buffer.from(id).toString("hex");

const statusCodeOf = (code: number | string | undefined): number =>
  typeof code === "number" ? code : code === "STATUS_CODE_ERROR" ? 2 : code === "STATUS_CODE_OK" ? 1 : 0;

/** The spans of one export request. */
export function spansOf(request: ExportRequest): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = String(valueOf(resourceSpans.resource?.attributes?.find(({ key }) => key === "service.name")?.value));
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          service,
          attributes: Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, valueOf(value)])),
          statusCode: statusCodeOf(span.status?.code),
          statusMessage: span.status?.message ?? "",
        });
      }
    }
  }
  return spans;
}

/** The spans of the engine's `file://` export: OTLP/JSON, one request per line. */
export function readSpanFile(path: string): ExportedSpan[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => spansOf(JSON.parse(line) as ExportRequest));
}

interface TraceServiceMessages {
  readonly ExportTraceServiceRequest: { decode(bytes: Uint8Array): ExportRequest };
  readonly ExportTraceServiceResponse: { encode(message: object): { finish(): Uint8Array } };
}

/** The OTLP protobuf definitions @opentelemetry/otlp-transformer generates (protobufjs). */
function traceServiceMessages(): TraceServiceMessages {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the generated module has no typed entry point
  const root = require("@opentelemetry/otlp-transformer/build/src/generated/root") as {
    opentelemetry: { proto: { collector: { trace: { v1: TraceServiceMessages } } } };
  };
  return root.opentelemetry.proto.collector.trace.v1;
}

/** A running OTLP/gRPC trace collector. */
export interface TraceCollector {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Every span received so far. */
  readonly spans: ExportedSpan[];
  /** Export requests that did not decode (refused with INVALID_ARGUMENT). */
  readonly refused: number;
  stop(): Promise<void>;
}

/** Starts a collector on a free port of 127.0.0.1, without TLS. */
export async function startTraceCollector(): Promise<TraceCollector> {
  const messages = traceServiceMessages();
  const spans: ExportedSpan[] = [];
  const state = { refused: 0 };
  // No limit on a request's size: the engine forwards a run's spans in few, large requests.
  const server = new grpc.Server({ "grpc.max_receive_message_length": -1 });
  server.addService(
    {
      Export: {
        path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: Buffer) => value,
        requestDeserialize: (bytes: Buffer) => bytes,
        responseSerialize: (value: object) => Buffer.from(messages.ExportTraceServiceResponse.encode(value).finish()),
        responseDeserialize: (bytes: Buffer) => bytes,
      },
    },
    {
      Export: (call: grpc.ServerUnaryCall<Buffer, object>, callback: grpc.sendUnaryData<object>) => {
        let request: ExportRequest;
        try {
          request = messages.ExportTraceServiceRequest.decode(call.request);
        } catch (error) {
          state.refused += 1;
          callback({ code: grpc.status.INVALID_ARGUMENT, details: `not an ExportTraceServiceRequest: ${String(error)}` });
          return;
        }
        spans.push(...spansOf(request));
        callback(null, {});
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error === null ? resolve(bound) : reject(error))),
  );
  return {
    address: `127.0.0.1:${port}`,
    spans,
    get refused() {
      return state.refused;
    },
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** The span's ancestors, nearest first. */
export function ancestorsOf(span: ExportedSpan, spans: readonly ExportedSpan[]): ExportedSpan[] {
  const byId = new Map(spans.map((candidate) => [candidate.spanId, candidate]));
  const result: ExportedSpan[] = [];
  for (let parent = byId.get(span.parentSpanId); parent !== undefined && !result.includes(parent); parent = byId.get(parent.parentSpanId)) result.push(parent);
  return result;
}
