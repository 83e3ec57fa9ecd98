/**
 * What no exported span may carry (telemetry/redaction.ts), and the spans that leave through the
 * redacting exporter (telemetry/otelTracer.ts): tokens, keys, certificates, identity URL query
 * strings and secret settings are cut; resource IDs, GUIDs, codes and causes stay readable.
 */
import { describe, expect, it } from "vitest";
import { redactAttributes, redactSpanText, secretValuesOf } from "../../../resources/telemetry/redaction";
import { tracingDecision } from "../../../resources/telemetry/tracingSettings";
import { failureCauseOf, halvesOfFailure } from "../../../resources/core/clusterMessage";

const cosmosKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";
const jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQuYXp1cmUuY29tIn0.c2lnbmF0dXJlLWJ5dGVz";
const certificate = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUW3Kq\n-----END CERTIFICATE-----";
const resourceId =
  "/subscriptions/0d3c6a1e-8b2f-4e7a-9c5d-1f2e3a4b5c01/resourceGroups/tenant-rg-0/providers/Microsoft.ManagedIdentity/userAssignedIdentities/tenant-cluster-0-operator-0";

describe("redactSpanText", () => {
  it("cuts tokens, keys, certificates and the query string of an identity URL", () => {
    const text = [
      `Authorization: Bearer ${jwt}`,
      `token ${jwt}`,
      `AccountKey=${cosmosKey};`,
      `key material ${cosmosKey}`,
      certificate,
      "https://identity.sandbox.local/subscriptions/s/resourcegroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/credentials?tid=0d3c6a1e&oid=secret-object&aid=app&api-version=2024-01-01",
    ].join("\n");
    const result = redactSpanText(text);
    expect(result).not.toContain(jwt.split(".")[0].slice(4));
    expect(result).not.toContain(cosmosKey);
    expect(result).not.toContain("MIIBszCCAVmgAwIBAgIUW3Kq");
    expect(result).not.toContain("secret-object");
    expect(result).not.toContain("tid=0d3c6a1e");
    expect(result).toContain("api-version=2024-01-01");
    expect(result).toContain(
      "https://identity.sandbox.local/subscriptions/s/resourcegroups/r/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/credentials?",
    );
  });

  it("cuts the value of a secret setting wherever it appears, and the environment's secrets", () => {
    const secret = "plain-secret-value";
    expect(redactSpanText(`the key is ${secret}.`, [secret])).toBe("the key is [redacted].");
    expect(secretValuesOf({ COSMOS_KEY: secret, AZURE_CLIENT_SECRET: "another-secret", PATH: "/usr/bin:/bin", SHORT_KEY: "abc" })).toEqual([
      secret,
      "another-secret",
    ]);
  });

  it("keeps resource IDs, GUIDs, error codes and causes readable", () => {
    const text = `AuthorizationFailed (HTTP 403): the client may not read ${resourceId}; request 8f0e5a2c-1b3d-4e6f-9a7b-0c1d2e3f4a5b`;
    expect(redactSpanText(text)).toBe(text);
    expect(redactSpanText("ManagedServiceIdentityClient.userAssignedIdentities.get")).toBe("ManagedServiceIdentityClient.userAssignedIdentities.get");
  });

  it("redacts every string of an attribute bag and leaves numbers and booleans", () => {
    expect(
      redactAttributes({ "http.url": "https://arm.local/x?api-version=1&sig=abc", token: `Bearer ${jwt}`, count: 3, ok: true, list: [cosmosKey, "kept"] }),
    ).toEqual({
      "http.url": "https://arm.local/x?api-version=1&sig=[redacted]",
      token: "Bearer [redacted]",
      count: 3,
      ok: true,
      list: ["[redacted]", "kept"],
    });
  });
});

describe("tracingDecision", () => {
  it("is off without an endpoint, and when the SDK or the traces exporter is disabled", () => {
    expect(tracingDecision({})).toEqual({ kind: "off" });
    expect(tracingDecision({ PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4317", OTEL_SDK_DISABLED: "true" })).toEqual({ kind: "off" });
    expect(tracingDecision({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317", OTEL_TRACES_EXPORTER: "none" })).toEqual({ kind: "off" });
  });

  it("prefers the engine's receiver, as a gRPC URL without TLS, and names the service as OTEL_SERVICE_NAME says", () => {
    expect(tracingDecision({ PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:39123", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4317" })).toEqual({
      kind: "on",
      settings: { endpoint: "http://localhost:39123", source: "PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT", serviceName: "aro-hcp-identity-status" },
    });
    expect(tracingDecision({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector:4317", OTEL_SERVICE_NAME: "fleet-ci" })).toEqual({
      kind: "on",
      settings: { endpoint: "https://collector:4317", source: "OTEL_EXPORTER_OTLP_ENDPOINT", serviceName: "fleet-ci" },
    });
  });

  it("refuses a protocol other than gRPC, naming the variable and its value", () => {
    const decision = tracingDecision({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" });
    expect(decision.kind).toBe("refused");
    expect(decision.kind === "refused" ? decision.reason : "").toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL is 'http\/protobuf'.*OTLP\/gRPC only/);
  });
});

describe("failureCauseOf", () => {
  it("names a cause as the CLI's summary does: the text before the cluster, IDs taken out", () => {
    const message = `the cluster's service managed identity could not get a token from ${resourceId}. Cluster sub/rg/c: nothing was written. [x]`;
    expect(failureCauseOf(message, "sub/rg/c")).toBe("the cluster's service managed identity could not get a token from <id>");
  });
});

describe("halvesOfFailure", () => {
  const failure = (name: string, message = "x"): Error => Object.assign(new Error(message), { name });
  it("gives each half its own errors, and both to two halves' errors joined or to a failure of the whole pass", () => {
    expect(halvesOfFailure(failure("UserAssignedIdentityReadError"))).toEqual({ dataPlane: true, msi: false });
    expect(halvesOfFailure(failure("AzureAccessError"))).toEqual({ dataPlane: true, msi: false });
    expect(halvesOfFailure(failure("MsiIdentitiesError"))).toEqual({ dataPlane: false, msi: true });
    expect(halvesOfFailure(failure("DataPlaneError"))).toEqual({ dataPlane: false, msi: true });
    expect(halvesOfFailure(failure("AzureAccessError", "refused\nand: the data plane refused"))).toEqual({ dataPlane: true, msi: true });
    expect(halvesOfFailure(failure("CosmosDocumentError"))).toEqual({ dataPlane: true, msi: true });
    expect(halvesOfFailure("not an error")).toEqual({ dataPlane: true, msi: true });
  });
});
