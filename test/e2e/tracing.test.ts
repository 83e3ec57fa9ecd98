/**
 * Traces of a fleet run through Pulumi's own flag: the literal `pulumi up --otel-traces=…` in the
 * project directory (and `npm run pulumi -- up --otel-traces=…`), in production's credential mode (each cluster in its own tenant, read as its
 * own service managed identity) with one tenant refusing every token and one ARM read throttled.
 * The engine starts its OTLP receiver and hands it to the provider host, which exports the hook's
 * spans there; the engine writes them to a file together with its own, or forwards them to a
 * collector. Asserted on what arrives: every cluster's pass with its outcome and the cause the
 * engine's message names, the Azure SDK's spans beneath the hook's, the engine's spans beside
 * them, and no secret anywhere.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedTenantFleet } from "../../sandbox/seed";
import { failureCauseOf } from "../../resources/core/clusterMessage";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { initLiteralStack, removeLiteralStack, runLiteralPulumi } from "./engineHelpers";
import type { ExportedSpan, TraceCollector } from "./otlpSpans";
import { ancestorsOf, readSpanFile, startTraceCollector } from "./otlpSpans";

const stackName = `tracing-${process.pid}`;
const projectDirectory = join(__dirname, "..", "..");

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let environment: NodeJS.ProcessEnv;
let collector: TraceCollector | undefined;

/** The name of a cluster's resource in the project's program (program/declareFleet.ts). */
const resourceNameOf = (cluster: FleetClusterDescription): string => {
  const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
  return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
};

/** `pulumi up` with `--continue-on-error`: it fails (one cluster does); its output either way. */
async function upWithFailures(...flags: string[]): Promise<string> {
  try {
    return await runLiteralPulumi(projectDirectory, environment, stackName, "up", "--yes", "--skip-preview", "--continue-on-error", ...flags);
  } catch (error) {
    return (error as Error).message;
  }
}

/** The engine's error line for a cluster: the message the CLI's summary groups by. */
function engineMessageOf(output: string, cluster: FleetClusterDescription): string {
  const marker = `Cluster ${resourceNameOf(cluster)}:`;
  const line = output.split("\n").find((candidate) => candidate.includes(marker) && (candidate.includes("error:") || /^\s*\* /.test(candidate)));
  expect(line, `the engine's error for ${resourceNameOf(cluster)}`).toBeDefined();
  // A failed create or update is listed under "1 error occurred:" (its outputs stored beside it); a refresh's follows "error: ".
  const listed = /^\s*\* (.*)$/.exec(line ?? "");
  return listed === null ? (line ?? "").replace(/^.*?error: /, "") : listed[1];
}

/**
 * What a run's spans must show: see the module comment. `outcomes` gives each cluster's expected
 * outcome, `requestSpans` the hook's spans the Azure SDK's request spans must sit beneath.
 */
function expectFleetTrace(
  spans: readonly ExportedSpan[],
  output: string,
  outcomes: ReadonlyMap<FleetClusterDescription, readonly string[]>,
  requestSpans: readonly string[],
): void {
  const hookSpans = spans.filter((span) => span.service === "aro-hcp-identity-status");
  for (const [cluster, expected] of outcomes) {
    const passes = hookSpans.filter(
      (span) => span.name.startsWith("cluster ") && span.name.endsWith(" pass") && span.attributes["aro_hcp.cluster.resource_id"] === cluster.clusterResourceId,
    );
    expect(passes.length, `passes of ${cluster.clusterResourceId}`).toBeGreaterThan(0);
    for (const pass of passes) {
      expect(expected, `outcome of ${cluster.clusterResourceId}`).toContain(pass.attributes["aro_hcp.outcome"]);
      const call = ancestorsOf(pass, spans)[0];
      expect(["provider create", "provider update", "provider read"]).toContain(call?.name);
      // All of the resource's URN the provider host is told: the project, the type, the cluster.
      expect(call?.attributes).toMatchObject({
        "pulumi.project": "aro-hcp-identity-status",
        "pulumi.resource.type": resourceTypeToken,
        "aro_hcp.cluster.resource_id": cluster.clusterResourceId,
      });
      if (pass.attributes["aro_hcp.outcome"] === "failed") {
        // The same cause as the engine's message for that cluster (and so as the CLI's summary).
        expect(pass.attributes["aro_hcp.failure.cause"]).toBe(failureCauseOf(engineMessageOf(output, cluster), resourceNameOf(cluster)));
        // The update asks both halves (its data plane half fails first); a refresh of a cluster whose create stored no status asks only the MSI half.
        expect(pass.attributes["aro_hcp.failure.class"]).toBe(pass.name === "cluster refresh pass" ? "MsiIdentitiesError" : "AzureAccessError");
        expect(pass.statusCode).toBe(2);
      }
    }
  }
  // The Azure SDK's own spans (Entra, ARM, the data plane) beneath the hook's I/O spans.
  const sdkSpans = spans.filter((span) => typeof span.attributes["az.namespace"] === "string" && typeof span.attributes["http.url"] === "string");
  for (const hookSpan of requestSpans) {
    expect(
      sdkSpans.some((span) => ancestorsOf(span, spans).some((ancestor) => ancestor.name === hookSpan)),
      `an Azure SDK request span beneath '${hookSpan}'`,
    ).toBe(true);
  }
  // The engine's own spans in the same export.
  expect(spans.some((span) => span.service !== "aro-hcp-identity-status" && span.name === "pulumi")).toBe(true);
}

/** No token, key, certificate, identity URL query string or secret setting in `text`. */
function expectNoSecret(text: string): void {
  expect(text.includes(sandbox.cosmosKey), "the Cosmos key").toBe(false);
  expect(text.includes(String(environment.PULUMI_CONFIG_PASSPHRASE)), "the stack's passphrase").toBe(false);
  expect(text, "a JWT").not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
  expect(text, "a certificate or key").not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY|RSA PRIVATE KEY)/);
  expect(text, "a bearer token").not.toMatch(/Bearer [A-Za-z0-9._~+/-]{8,}/i);
  for (const cluster of fleet) {
    const query = new URL(cluster.identityUrl ?? "https://x/").search.slice(1);
    for (const parameter of query.split("&").filter((part) => part !== "" && !part.startsWith("api-version="))) {
      expect(text.includes(parameter), `the identity URL's query parameter ${parameter.split("=")[0]}`).toBe(false);
    }
  }
}

beforeAll(async () => {
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-tracing-")));
  sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca"), perClusterCredentials: true });
  fleet = seedTenantFleet(sandbox, { clusters: 3, identitiesPerCluster: 2 });
  environment = await initLiteralStack(
    sandbox,
    scratchDirectory,
    stackName,
    fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators })),
  );
  environment = { ...environment, PULUMI_NODEJS_TRANSPILE_ONLY: "true" };
}, 300_000);

afterAll(async () => {
  await collector?.stop();
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("pulumi up --otel-traces through the literal CLI, one tenant failing", () => {
  it("writes every cluster's pass, the Azure SDK's spans beneath and the engine's beside them to a file, and to a gRPC collector, with no secret", async () => {
    const [healthy, failing, throttled] = fleet;
    sandbox.faults.add({
      target: "entra",
      kind: "status",
      statusCode: 400,
      errorCode: "invalid_client",
      message: "the tenant refuses this application",
      probability: 1,
      match: { tenantId: failing.tenantId },
    });
    sandbox.faults.add({
      target: "arm",
      kind: "throttle",
      retryAfterSeconds: 1,
      count: 1,
      match: { resourceId: Object.values(throttled.dataPlaneOperators)[0] },
    });

    const traceFile = join(scratchDirectory, "traces.json");
    const output = await upWithFailures(`--otel-traces=file://${traceFile}`);
    // The stack and the two clusters whose tenants answer.
    expect(output).toMatch(/\+ 3 created/);
    const spans = readSpanFile(traceFile);
    expectFleetTrace(
      spans,
      output,
      new Map([
        [healthy, ["written"]],
        [failing, ["failed"]],
        [throttled, ["written"]],
      ]),
      ["arm read identity", "data plane request", "cluster credential"],
    );
    const throttledPass = spans.find(
      (span) => span.name === "cluster sync pass" && span.attributes["aro_hcp.cluster.resource_id"] === throttled.clusterResourceId,
    );
    expect(throttledPass?.attributes).toMatchObject({ "aro_hcp.retries": 1, "aro_hcp.throttled": 1, "aro_hcp.throttle_wait_ms": 1000 });
    expectNoSecret(readFileSync(traceFile, "utf8"));

    // The same through a collector, with `--refresh`: the clusters in state each run a refresh pass,
    // the failing one (stored by the first run with its failure and no status) a refresh and its update again.
    collector = await startTraceCollector();
    const again = await upWithFailures("--refresh", `--otel-traces=grpc://${collector.address}`);
    expect(collector.refused).toBe(0);
    expectFleetTrace(
      collector.spans,
      again,
      new Map([
        [healthy, ["current"]],
        [failing, ["failed"]],
        [throttled, ["current"]],
      ]),
      // A refresh inside the recheck window reads no identity; the failing cluster's refresh asks the data plane
      // (Entra refuses the first party there; its update, in the same process, is refused without asking again).
      ["data plane request"],
    );
    expectNoSecret(JSON.stringify(collector.spans));

    // Without the flag, the standard variables: the hook's spans go to the collector under the
    // service name given, the engine's nowhere.
    // The refresh fails on the failing cluster, which the first run stored with its failure.
    const before = collector.spans.length;
    const refreshed = await runLiteralPulumi(
      projectDirectory,
      { ...environment, OTEL_EXPORTER_OTLP_ENDPOINT: `http://${collector.address}`, OTEL_SERVICE_NAME: "fleet-ci" },
      stackName,
      "refresh",
      "--yes",
    ).then(
      () => "",
      (error: unknown) => String(error),
    );
    expect(refreshed).toContain(resourceNameOf(failing));
    const standard = collector.spans.slice(before);
    for (const cluster of [healthy, throttled]) {
      const pass = standard.find(
        (span) => span.name === "cluster refresh pass" && span.attributes["aro_hcp.cluster.resource_id"] === cluster.clusterResourceId,
      );
      expect(pass?.service, cluster.clusterResourceId).toBe("fleet-ci");
    }
    expect(standard.every((span) => span.service === "fleet-ci")).toBe(true);

    // And through `npm run pulumi` (the Automation API, which has no option for the flag: cli/otelTraces.ts).
    const wrapperFile = join(scratchDirectory, "wrapper-traces.json");
    // Asynchronous: the in-process sandbox answers from this event loop.
    const wrapped = await new Promise<{ status: number | null; output: string }>((resolveRun) => {
      const child = execFile(
        process.execPath,
        [join(projectDirectory, "dist", "cli", "pulumi.js"), "up", "--stack", stackName, "--continue-on-error", `--otel-traces=file://${wrapperFile}`],
        { cwd: projectDirectory, env: environment, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 300_000 },
        (_error, stdout, stderr) => resolveRun({ status: child.exitCode, output: `${stdout}${stderr}` }),
      );
    });
    const wrapperOutput = wrapped.output;
    expect(wrapped.status, wrapperOutput).toBe(1);
    expectFleetTrace(readSpanFile(wrapperFile), wrapperOutput, new Map([[failing, ["failed"]]]), ["cluster credential"]);
    expectNoSecret(readFileSync(wrapperFile, "utf8"));
  }, 600_000);
});
