/**
 * The provider's spans (telemetry/) in production's credential mode, one tenant failing and one
 * ARM read throttled, through the real Azure SDK clients against the sandbox: every cluster's
 * pass is there with its outcome and cause, the Azure SDK's own spans sit beneath the hook's, the
 * retried and throttled requests are counted, and no secret leaves in any span. The spans are
 * caught by an in-memory exporter behind the same redaction the OTLP exporter gets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import type { InstalledTracer } from "../../resources/logging/spans";
import { installTracer } from "../../resources/logging/spans";
import { createOtelTracer } from "../../resources/telemetry/otelTracer";
import { useClusterModeSandbox } from "../fixtures/clusterModeSandbox";

const fixture = useClusterModeSandbox({ clusters: 4, identitiesPerCluster: 2 });
const exporter = new InMemorySpanExporter();

let tracer: InstalledTracer;

beforeAll(() => {
  tracer = createOtelTracer(
    { endpoint: "http://127.0.0.1:1", source: "OTEL_EXPORTER_OTLP_ENDPOINT", serviceName: "tracing-test" },
    () => [fixture.sandbox.cosmosKey],
    { exporter },
  );
  installTracer(tracer);
});
afterAll(() => installTracer(undefined));

const parentOf = (span: ReadableSpan, spans: readonly ReadableSpan[]): ReadableSpan | undefined =>
  spans.find((candidate) => candidate.spanContext().spanId === span.parentSpanId);

/** The names of the span's ancestors, nearest first. */
function ancestors(span: ReadableSpan, spans: readonly ReadableSpan[]): string[] {
  const names: string[] = [];
  for (let parent = parentOf(span, spans); parent !== undefined; parent = parentOf(parent, spans)) names.push(parent.name);
  return names;
}

describe("spans of a fleet pass", () => {
  it("records each cluster's pass with its outcome, cause, retries and throttling, the SDK's spans beneath, and no secret", async () => {
    const { sandbox, clusters } = fixture;
    const [healthy, failing, throttled, refused] = clusters;
    sandbox.faults.add({
      target: "entra",
      kind: "status",
      statusCode: 400,
      errorCode: "invalid_client",
      message: "tenant disabled",
      count: 50,
      match: { tenantId: failing.tenantId },
    });
    sandbox.faults.add({
      target: "arm",
      kind: "throttle",
      retryAfterSeconds: 1,
      count: 1,
      match: { resourceId: Object.values(throttled.dataPlaneOperators)[0] },
    });
    // An answer that says nothing definitive about one identity: the rest is written, its stored IDs are kept.
    sandbox.faults.add({
      target: "arm",
      kind: "status",
      statusCode: 400,
      errorCode: "InvalidRequest",
      count: 10,
      match: { resourceId: Object.values(refused.dataPlaneOperators)[0] },
    });
    const provider = fixture.provider();
    const outcomes = await Promise.allSettled(clusters.map((cluster) => provider.create({ clusterResourceId: cluster.clusterResourceId })));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected"]);
    await tracer.flush();
    const spans = exporter.getFinishedSpans();

    const passOf = (cluster: (typeof clusters)[number]) => {
      const pass = spans.find((span) => span.name === "cluster sync pass" && span.attributes["aro_hcp.cluster.resource_id"] === cluster.clusterResourceId);
      expect(pass, cluster.clusterResourceId).toBeDefined();
      return pass as ReadableSpan;
    };
    expect(passOf(healthy).attributes).toMatchObject({ "aro_hcp.outcome": "written", "aro_hcp.retries": 0 });
    // The tenant refuses the first party for both halves (the SMI's credential and the MSI half's answer): the span
    // names the halves the stack output's `failure` names.
    expect(passOf(failing).attributes).toMatchObject({ "aro_hcp.outcome": "failed", "aro_hcp.failure.half": "both" });
    expect(((outcomes[1] as PromiseRejectedResult).reason as { properties: { failure: { halves: unknown } } }).properties.failure.halves).toEqual([
      "dataPlaneOperators",
      "msiIdentities",
    ]);
    expect(String(passOf(failing).attributes["aro_hcp.failure.cause"])).not.toContain(failing.clusterResourceId);
    expect(passOf(failing).attributes["aro_hcp.failure.class"]).toBeTypeOf("string");
    expect(passOf(throttled).attributes).toMatchObject({
      "aro_hcp.outcome": "written",
      "aro_hcp.retries": 1,
      "aro_hcp.throttled": 1,
      "aro_hcp.throttle_wait_ms": 1000,
    });
    expect(Number(passOf(throttled).attributes["aro_hcp.wait_ms"])).toBeGreaterThanOrEqual(1000);
    expect(passOf(refused).attributes).toMatchObject({
      "aro_hcp.outcome": "kept",
      "aro_hcp.failure.class": "UserAssignedIdentityReadError",
      "aro_hcp.failure.half": "data plane",
      "aro_hcp.failure.codes": "InvalidRequest (HTTP 400)",
      "aro_hcp.identities.failed": 1,
      "aro_hcp.lookups": 2,
    });
    expect(passOf(refused).attributes["aro_hcp.failure.cause"]).toBe("a data plane operator managed identity could not be read: InvalidRequest (HTTP 400)");
    // What the outcome says is what Cosmos holds: the other identity written, the failed one recorded beside no ID.
    const document = sandbox.documents.read(refused.partitionKey, refused.serviceProviderClusterDocumentId) as unknown as {
      properties: { status: { dataPlaneOperatorsManagedIdentities: { identities: Record<string, { clientId?: string; retrievalError?: string }> } } };
    };
    const [failedId, readId] = Object.values(refused.dataPlaneOperators).map((id) => id.toLowerCase());
    const identities = document.properties.status.dataPlaneOperatorsManagedIdentities.identities;
    expect(identities[failedId]?.retrievalError).toMatch(/^InvalidRequest \(HTTP 400\)/);
    expect(identities[readId]?.clientId).toBe(sandbox.identities.get(Object.values(refused.dataPlaneOperators)[1])?.clientId);
    for (const cluster of clusters) expect(ancestors(passOf(cluster), spans)).toEqual(["provider create"]);

    // The hook's own I/O spans beneath the pass, and the Azure SDK's beneath those (Entra, ARM and
    // the data plane; @azure/cosmos with a key makes no spans of its own).
    const healthyPass = passOf(healthy);
    const inHealthyPass = spans.filter((span) => isBeneath(span, healthyPass, spans));
    const names = new Set(inHealthyPass.map((span) => span.name));
    for (const name of ["cosmos read document", "cluster credential", "arm read identity", "data plane request", "cosmos write status"])
      expect(names, name).toContain(name);
    const sdkSpans = inHealthyPass.filter((span) => typeof span.attributes["az.namespace"] === "string");
    expect(sdkSpans.length).toBeGreaterThan(0);
    const httpUnder = (hookSpan: string) =>
      sdkSpans.some((span) => ancestors(span, spans).includes(hookSpan) && typeof span.attributes["http.url"] === "string");
    expect(httpUnder("arm read identity")).toBe(true);
    expect(httpUnder("data plane request")).toBe(true);
    expect(httpUnder("cluster credential")).toBe(true);

    // No secret anywhere: the Cosmos key, a token, a certificate, an identity URL's query string.
    const text = JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })));
    expect(text).not.toContain(sandbox.cosmosKey);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\./);
    expect(text).not.toContain("BEGIN CERTIFICATE");
    expect(text).not.toContain("PRIVATE KEY");
    for (const span of spans) {
      const url = span.attributes["http.url"];
      if (typeof url === "string" && url.includes("?"))
        expect(url.split("?")[1]).toMatch(/^(api-version=[^&]*|[a-z_-]+=\[redacted\])(&(api-version=[^&]*|[A-Za-z_-]+=\[redacted\]))*$/i);
    }
  }, 60_000);
});

function isBeneath(span: ReadableSpan, ancestor: ReadableSpan, spans: readonly ReadableSpan[]): boolean {
  for (let parent = parentOf(span, spans); parent !== undefined; parent = parentOf(parent, spans)) if (parent === ancestor) return true;
  return false;
}
