/**
 * The OpenTelemetry side (telemetry/otelTracer.ts) with an in-memory exporter behind the same
 * redaction the OTLP exporter gets: what a span carries leaves redacted, a failure sets the error
 * status and the failure's cause, and the SDK's sampler follows OTEL_TRACES_SAMPLER.
 */
import { afterEach, describe, expect, it } from "vitest";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { createOtelTracer } from "../../../resources/telemetry/otelTracer";

const settings = { endpoint: "http://127.0.0.1:1", source: "OTEL_EXPORTER_OTLP_ENDPOINT", serviceName: "unit" } as const;
const secretSetting = "a-cosmos-key-from-the-stack-config";
const jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQuYXp1cmUuY29tIn0.c2lnbmF0dXJlLWJ5dGVz";

afterEach(() => {
  delete process.env.OTEL_TRACES_SAMPLER;
});

describe("createOtelTracer", () => {
  it("exports every span redacted: attributes, status message and name; the span's identity unchanged", async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = createOtelTracer(settings, () => [secretSetting], { exporter });
    await tracer
      .inSpan(
        "outer",
        { "http.url": "https://identity.example/credentials?tid=tenant&oid=object&api-version=2024-01-01", setting: `key ${secretSetting}` },
        (span) => {
          span.set({ token: `Bearer ${jwt}`, count: 2, absent: undefined });
          return tracer.inSpan("inner", {}, () => Promise.reject(new Error(`refused with ${secretSetting}. Cluster s/r/c: nothing was written.`)));
        },
      )
      .catch(() => undefined);
    await tracer.flush();
    const spans = exporter.getFinishedSpans();
    const outer = spans.find((span) => span.name === "outer");
    const inner = spans.find((span) => span.name === "inner");
    expect(outer?.attributes).toEqual({
      "http.url": "https://identity.example/credentials?tid=[redacted]&oid=[redacted]&api-version=2024-01-01",
      setting: "key [redacted]",
      token: "Bearer [redacted]",
      count: 2,
    });
    expect(inner?.status).toEqual({ code: 2, message: "Error: refused with [redacted]" });
    expect(inner?.parentSpanId).toBe(outer?.spanContext().spanId);
    expect(JSON.stringify(spans.map((span) => [span.attributes, span.status, span.events]))).not.toContain(secretSetting);
  });

  it("records nothing when OTEL_TRACES_SAMPLER says always_off", async () => {
    process.env.OTEL_TRACES_SAMPLER = "always_off";
    const exporter = new InMemorySpanExporter();
    const tracer = createOtelTracer(settings, () => [], { exporter });
    expect(await tracer.inSpan("sampled out", {}, () => Promise.resolve("ran"))).toBe("ran");
    await tracer.flush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
