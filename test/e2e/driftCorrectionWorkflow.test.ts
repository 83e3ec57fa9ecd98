/**
 * The example drift-correction workflow (examples/workflows/drift-correction.yml) on a bad day:
 * its steps' commands, read from the YAML (never copied), run with bash against the sandbox through
 * the literal `pulumi` CLI over the project's Pulumi.yaml, in production's credential mode, while
 * Entra ID refuses every token in the tenant of two of the three demo clusters. Every cluster had
 * its stored IDs changed outside Pulumi. The job must correct the cluster it can, go red, its run
 * report must name the tenant's two clusters under one cause, and the stack's `clusters` output
 * must say failed for both halves of those two; Cosmos is read back.
 * GitHub's own pieces are stand-ins: `az` copies the sandbox's first-party certificate where the
 * step asks, `curl` answers a federated token nobody reads (the sandbox's credentials are in the
 * environment), RUNNER_TEMP, GITHUB_ENV and GITHUB_STEP_SUMMARY are files of the test.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { demoTenantIds } from "../../sandbox/seed";
import { removeLiteralStack, revokedCertificateFault, runLiteralPulumi, startLiteralDemoFleet } from "./engineHelpers";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require("js-yaml") as { load(text: string): unknown };

const projectDirectory = resolve(__dirname, "..", "..");
const workflowFile = join(projectDirectory, "examples", "workflows", "drift-correction.yml");
const stackName = `drift-workflow-${process.pid}`;
const wrongClientId = "0badc0de-0000-4000-8000-000000000000";

interface Step {
  readonly name?: string;
  readonly run?: string;
}

/** The `run` script of the workflow step named `name`. */
function stepScript(name: string): string {
  const workflow = yaml.load(readFileSync(workflowFile, "utf8")) as { jobs: Record<string, { steps: Step[] }> };
  const step = Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .find((candidate) => candidate.name === name);
  if (step?.run === undefined) throw new Error(`${workflowFile} has no step named '${name}' with a run script`);
  return step.run;
}

/** Runs a step's script with bash in the project directory, as the runner does; never rejects. */
function runStep(script: string, environment: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolveRun) => {
    execFile(
      "bash",
      ["-e", "-c", script],
      { cwd: projectDirectory, env: environment, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 540_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolveRun({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** `KEY=VALUE` lines a step appended to GITHUB_ENV, for the steps after it. */
function githubEnvironment(file: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

type Entry = { readonly clientId?: string; readonly principalId?: string };

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let environment: NodeJS.ProcessEnv;

/** The key of a cluster's first data plane operator identity in the status (lowercased ID). */
function firstIdentity(cluster: FleetClusterDescription): string {
  return (Object.values(cluster.dataPlaneOperators)[0] ?? "").toLowerCase();
}

async function storedEntry(cluster: FleetClusterDescription): Promise<Entry | undefined> {
  const { resource } = await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<{
    properties?: { status?: { dataPlaneOperatorsManagedIdentities?: { identities?: Record<string, Entry> } } };
  }>();
  return resource?.properties?.status?.dataPlaneOperatorsManagedIdentities?.identities?.[firstIdentity(cluster)];
}

function pointerTo(...tokens: string[]): string {
  return `/${tokens.map((token) => token.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
}

beforeAll(async () => {
  ({ scratchDirectory, sandbox, fleet, environment } = await startLiteralDemoFleet("aro-hcp-drift-workflow-", stackName));
  // As the workflow's comments ask: the certificate file comes from the job (ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE), not the stack.
  await runLiteralPulumi(projectDirectory, environment, stackName, "config", "rm", "aro-hcp-identity-status:firstPartyCertificateFile");
  await runLiteralPulumi(
    projectDirectory,
    { ...environment, ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE: sandbox.credentialChain.firstPartyApplication.certificateBundlePath },
    stackName,
    "up",
    "--yes",
    "--skip-preview",
  );
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("the drift-correction workflow's commands, one tenant refused", () => {
  it("corrects every other cluster, fails the job, and reports the tenant's clusters under one cause", async () => {
    // Someone changed every cluster's first identity in Cosmos; the refused tenant's clusters are due for their recheck.
    for (const cluster of fleet) {
      const path = ["properties", "status", "dataPlaneOperatorsManagedIdentities"];
      sandbox.documents.patch(
        cluster.partitionKey,
        cluster.serviceProviderClusterDocumentId,
        pointerTo(...path, "identities", firstIdentity(cluster), "clientId"),
        wrongClientId,
      );
      if (cluster.tenantId === demoTenantIds[0]) {
        sandbox.documents.patch(
          cluster.partitionKey,
          cluster.serviceProviderClusterDocumentId,
          pointerTo(...path, "earliestRecheckTime"),
          "2000-01-01T00:00:00Z",
        );
      }
    }
    const refused = fleet.filter((cluster) => cluster.tenantId === demoTenantIds[0]);
    const others = fleet.filter((cluster) => cluster.tenantId !== demoTenantIds[0]);
    expect(refused).toHaveLength(2);
    expect(others).toHaveLength(1);
    sandbox.faults.add(revokedCertificateFault(demoTenantIds[0]));

    // The runner's files and GitHub's tools, as stand-ins.
    const runnerTemp = join(scratchDirectory, "runner-temp");
    const tools = join(scratchDirectory, "tools");
    for (const directory of [runnerTemp, tools]) mkdirSync(directory, { recursive: true });
    const githubEnv = join(runnerTemp, "github-env");
    const stepSummary = join(runnerTemp, "step-summary.md");
    writeFileSync(githubEnv, "");
    writeFileSync(
      join(tools, "az"),
      `#!/bin/bash\n# az keyvault secret download … --file <path>: the sandbox's first-party certificate.\nwhile [ $# -gt 0 ]; do if [ "$1" = "--file" ]; then cp "${sandbox.credentialChain.firstPartyApplication.certificateBundlePath}" "$2"; fi; shift; done\n`,
    );
    writeFileSync(join(tools, "curl"), `#!/bin/bash\necho '{"value":"federated-token-stand-in"}'\n`);
    for (const tool of ["az", "curl"]) chmodSync(join(tools, tool), 0o755);
    const job: NodeJS.ProcessEnv = {
      ...environment,
      PATH: `${tools}:${environment.PATH ?? ""}`,
      RUNNER_TEMP: runnerTemp,
      GITHUB_ENV: githubEnv,
      GITHUB_STEP_SUMMARY: stepSummary,
      KEY_VAULT: "kv-stand-in",
      CERTIFICATE: "first-party",
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: "stand-in",
      ACTIONS_ID_TOKEN_REQUEST_URL: "https://stand-in.invalid/token?x=1",
      AZURE_FEDERATED_TOKEN_FILE: join(runnerTemp, "azure-federated-token"),
      ARO_HCP_RECHECK: "",
      STACK: stackName,
    };

    const fetched = await runStep(stepScript("Fetch the first-party certificate"), job);
    expect(fetched.code, fetched.output).toBe(0);
    const corrected = await runStep(stepScript("Refresh, then correct drift"), { ...job, ...githubEnvironment(githubEnv) });

    // The job is red.
    expect(corrected.code, corrected.output).not.toBe(0);
    // The other tenant's cluster was corrected; the refused tenant's clusters hold what they held: nothing was written.
    for (const cluster of others) {
      expect(await storedEntry(cluster), cluster.clusterResourceId).toMatchObject({
        clientId: sandbox.identities.get(Object.values(cluster.dataPlaneOperators)[0])?.clientId,
      });
    }
    for (const cluster of refused) {
      expect((await storedEntry(cluster))?.clientId, cluster.clusterResourceId).toBe(wrongClientId);
    }
    // The report: failed, the two clusters under one cause naming the tenant, the other corrected.
    const report = JSON.parse(readFileSync(join(runnerTemp, "run-report.json"), "utf8")) as {
      verdict: string;
      causes: Array<{ cause: string; count: number; resources: string[] }>;
      clusters: Record<string, { outcome: string; dataPlane: { outcome: string }; msi: { outcome: string } }>;
    };
    const nameOf = (cluster: FleetClusterDescription): string => {
      const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
      return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
    };
    expect(report.verdict).toBe("failed");
    expect(report.causes).toHaveLength(1);
    expect(report.causes[0].resources.sort()).toEqual(refused.map(nameOf).sort());
    expect(report.causes[0].cause).toContain(demoTenantIds[0]);
    for (const cluster of refused) {
      expect(report.clusters[nameOf(cluster)]).toMatchObject({ outcome: "failed", dataPlane: { outcome: "failed" }, msi: { outcome: "failed" } });
    }
    for (const cluster of others) {
      expect(report.clusters[nameOf(cluster)]).toMatchObject({ outcome: "driftCorrected", dataPlane: { outcome: "driftCorrected" } });
    }
    // The stack's `clusters` output, written by the same `up`: the refused clusters say failed, for both halves, with the cause.
    const outputs = JSON.parse(await runLiteralPulumi(projectDirectory, environment, stackName, "stack", "output", "clusters", "--json")) as Record<
      string,
      { id: string; failure?: string; dataPlaneOperators: { state: string; resolved: number }; msiIdentities: { state: string } }
    >;
    const outputOf = (cluster: FleetClusterDescription) => Object.values(outputs).find((value) => value.id === cluster.clusterResourceId);
    for (const cluster of refused) {
      expect(outputOf(cluster), cluster.clusterResourceId).toMatchObject({ dataPlaneOperators: { state: "failed" }, msiIdentities: { state: "failed" } });
      expect(outputOf(cluster)?.failure).toContain(demoTenantIds[0]);
      // The IDs it kept are still counted as recorded.
      expect(outputOf(cluster)?.dataPlaneOperators.resolved).toBeGreaterThan(0);
    }
    for (const cluster of others) {
      expect(outputOf(cluster), cluster.clusterResourceId).toMatchObject({ dataPlaneOperators: { state: "ok" }, msiIdentities: { state: "ok" } });
      expect(outputOf(cluster)?.failure).toBeUndefined();
    }
    // Under the stack's "Diagnostics", one line for the cause, naming both clusters and pointing at the first's
    // own error, which states the cause: the line does not repeat it.
    const causeLines = corrected.output.split("\n").filter((line) => /^\s+warning: 2 clusters failed with one cause, stated in the error of /.test(line));
    expect(causeLines, corrected.output).toHaveLength(1);
    for (const cluster of refused) expect(causeLines[0]).toContain(nameOf(cluster));
    expect(causeLines[0]).not.toContain("invalid_client");
    // The report is in the job's summary; the cause is printed once there, and no JavaScript stack trace anywhere.
    const summary = readFileSync(stepSummary, "utf8");
    expect(summary).toMatch(/^Run report: FAILED \(2 clusters\)/);
    expect(summary.split("\n").filter((line) => line.includes("× "))).toHaveLength(1);
    expect(corrected.output).not.toMatch(/^\s+at .+\(.+:\d+:\d+\)$/m);
    expect(corrected.output).not.toMatch(/pulumi:pulumi:Stack .*AzureAccessError/);
  }, 600_000);
});
