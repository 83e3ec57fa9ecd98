/**
 * Free when off: without an OTLP endpoint the provider host loads no OpenTelemetry module, and of
 * the hook's telemetry/ only what decides, through every provider call; with one (the engine's PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT), the first call
 * loads the SDK and the Azure SDK's instrumentation. Checked in a separate Node process over the
 * built package (module loading is what is measured).
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const script = `
const dist = process.argv[1] + "/dist/resources";
const loaded = () => [...new Set(Object.keys(require.cache)
  .map((key) => /node_modules\\/(@opentelemetry\\/[^/]+|@azure\\/opentelemetry-instrumentation-azure-sdk)\\//.exec(key)?.[1] ?? /dist\\/resources\\/(telemetry\\/[^/]+)\\.js$/.exec(key)?.[1])
  .filter((name) => name !== undefined))].sort();
const { implementation } = require(dist + "/providerEntry.js");
const cluster = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c";
(async () => {
  // Settings are missing: check answers with a failure, delete writes nothing; neither reaches Azure.
  await implementation.check({}, { clusterResourceId: cluster });
  await implementation.delete("id", { clusterResourceId: cluster });
  console.log(JSON.stringify(loaded()));
  process.exit(0);
})();
`;

function modulesAfterCalls(environment: Readonly<Record<string, string>>): string[] {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OTEL_") && !name.startsWith("PULUMI_")));
  const output = execFileSync(process.execPath, ["-e", script, resolve(__dirname, "..", "..")], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...inherited, ...environment },
  });
  return JSON.parse(output.trim().split("\n").pop() ?? "[]") as string[];
}

describe("OpenTelemetry modules in the provider host", () => {
  it("loads none without an endpoint, and the SDK, its OTLP exporter and the Azure SDK's instrumentation with one", () => {
    // Of the hook's own telemetry code, only the door and the decision.
    expect(modulesAfterCalls({})).toEqual(["telemetry/providerSpans", "telemetry/tracingSettings"]);
    // Port 9 refuses the connection: only what the calls load matters.
    const withEndpoint = modulesAfterCalls({ PULUMI_OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:9" });
    expect(withEndpoint).toEqual(
      expect.arrayContaining([
        "@opentelemetry/api",
        "@opentelemetry/sdk-trace-node",
        "@opentelemetry/exporter-trace-otlp-grpc",
        "@azure/opentelemetry-instrumentation-azure-sdk",
        "telemetry/otelTracer",
        "telemetry/tracedCalls",
      ]),
    );
  });
});
