/**
 * The example drift-correction workflow (examples/workflows/drift-correction.yml) on a bad day, as a
 * matrix over a region's shards: its steps' scripts, read from the YAML (never copied), run with bash
 * through the literal `pulumi` CLI against the sandbox in production's credential mode, each shard's
 * job on a runner of its own and both at once, then the final job's verdict over the records the
 * shards' artifacts carried. Entra ID refuses every token in the tenant of two of the three demo
 * clusters, and every cluster's stored IDs were changed outside Pulumi: each shard corrects what it
 * can, and the region's verdict is red, naming the tenant's two clusters once, under one cause.
 * GitHub's own pieces are stand-ins: `az` copies the sandbox's first-party certificate where the
 * step asks, `curl` answers a federated token nobody reads (the sandbox's credentials are in the
 * environment), RUNNER_TEMP, GITHUB_ENV, GITHUB_PATH and GITHUB_STEP_SUMMARY are files of the test,
 * an artifact's upload and download a copy, and the state a file backend.
 */
import { execFile } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegionReport } from "../../resources/report/regionReport";
import type { ShardPlanFile } from "../../resources/shards/shardPlanFile";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { demoTenantIds, seedDemoFleet } from "../../sandbox/seed";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import {
  e2eScratchDirectory,
  engineModule,
  literalCliEnvironment,
  revokedCertificateFault,
  storedClientId,
  tamperWithFirstIdentities,
  wrongClientId,
} from "./engineHelpers";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require("js-yaml") as { load(text: string): unknown };

const projectDirectory = resolve(__dirname, "..", "..");
const workflowFile = join(projectDirectory, "examples", "workflows", "drift-correction.yml");
const region = "workflowregion";

interface Step {
  readonly name?: string;
  readonly run?: string;
}

/** The `run` script of the step named `name` in job `job`. */
function stepScript(job: string, name: string): string {
  const workflow = yaml.load(readFileSync(workflowFile, "utf8")) as { jobs: Record<string, { steps: Step[] }> };
  const step = workflow.jobs[job]?.steps.find((candidate) => candidate.name === name);
  if (step?.run === undefined) throw new Error(`${workflowFile} has no step named '${name}' with a run script in job ${job}`);
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

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratch: string;
let job: NodeJS.ProcessEnv;
let plan: ShardPlanFile;
let regionDirectory: string;

/**
 * One matrix job of the shards, on a runner of its own: the tool's build, the certificate, then the
 * shard's run; its records copied where the final job's download puts every shard's.
 */
async function shardJob(index: number, runId: string, artifacts: string): Promise<{ code: number; output: string }> {
  const runnerTemp = join(scratch, `runner-${runId}-${index}`);
  mkdirSync(runnerTemp, { recursive: true });
  const files = { GITHUB_ENV: join(runnerTemp, "github-env"), GITHUB_PATH: join(runnerTemp, "github-path") };
  for (const file of Object.values(files)) writeFileSync(file, "");
  const runner: NodeJS.ProcessEnv = { ...job, ...files, RUNNER_TEMP: runnerTemp, AZURE_FEDERATED_TOKEN_FILE: join(runnerTemp, "azure-federated-token") };
  const built = await runStep(stepScript("shard", "Build the backend file tool"), runner);
  expect(built.code, built.output).toBe(0);
  const fetched = await runStep(stepScript("shard", "Fetch the first-party certificate"), runner);
  expect(fetched.code, fetched.output).toBe(0);
  const path = `${readFileSync(files.GITHUB_PATH, "utf8").trim().split("\n").join(":")}:${job.PATH ?? ""}`;
  const shardRun = await runStep(stepScript("shard", "Refresh, then correct drift"), {
    ...runner,
    ...githubEnvironment(files.GITHUB_ENV),
    PATH: path,
    JOB_COMPLETION_INDEX: String(index),
    ARO_HCP_RUN_ID: runId,
    ARO_HCP_SCRATCH_DIRECTORY: join(runnerTemp, "shard"),
  });
  // "Keep the shard's run records", then the final job's download (merge-multiple) of every shard's.
  const records = join(runnerTemp, "shard", `${region}-shard-${index}`, "records");
  mkdirSync(artifacts, { recursive: true });
  for (const name of readdirSync(records)) cpSync(join(records, name), join(artifacts, name));
  return shardRun;
}

/** The final job's "Judge the region", over the records the shards' artifacts carried. */
async function verdictJob(runId: string): Promise<{ code: number; output: string; report: RegionReport; summary: string }> {
  const runnerTemp = join(scratch, `verdict-${runId}`);
  mkdirSync(join(runnerTemp, "run-records"), { recursive: true });
  cpSync(join(scratch, `artifacts-${runId}`), join(runnerTemp, "run-records"), { recursive: true });
  const summary = join(runnerTemp, "step-summary.md");
  writeFileSync(summary, "");
  const judged = await runStep(stepScript("verdict", "Judge the region"), { ...job, RUNNER_TEMP: runnerTemp, GITHUB_STEP_SUMMARY: summary });
  const report = JSON.parse(readFileSync(join(runnerTemp, "region-report.json"), "utf8")) as RegionReport;
  return { ...judged, report, summary: readFileSync(summary, "utf8") };
}

beforeAll(async () => {
  scratch = e2eScratchDirectory("drift-workflow");
  sandbox = await startSandbox({ certificateDirectory: join(scratch, "sandbox-ca"), perClusterCredentials: true });
  fleet = seedDemoFleet(sandbox);
  // The repository's region directory: the shard plan, and the settings (without the certificate file, which the job fetches).
  regionDirectory = join(scratch, "regions", region);
  const regionFile = join(scratch, "region.json");
  writeFileSync(regionFile, JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId }))));
  const planned = await runStep(`node dist/cli/shardPlan.js "${regionFile}" --shards 2 --out "${regionDirectory}"`, process.env);
  expect(planned.code, planned.output).toBe(0);
  plan = JSON.parse(readFileSync(join(regionDirectory, "shard-plan.json"), "utf8")) as ShardPlanFile;
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const { firstPartyCertificateFile, ...settings } = config;
  expect(firstPartyCertificateFile).toBeDefined();
  writeFileSync(join(regionDirectory, "settings.json"), JSON.stringify({ ...settings, documentWaitSeconds: "2" }));

  // The runner's tools (az, curl) as stand-ins, the CLI the workflow installs on PATH.
  const tools = join(scratch, "tools");
  mkdirSync(tools, { recursive: true });
  writeFileSync(
    join(tools, "az"),
    `#!/bin/bash\n# az keyvault secret download … --file <path>: the sandbox's first-party certificate.\nwhile [ $# -gt 0 ]; do if [ "$1" = "--file" ]; then cp "${sandbox.credentialChain.firstPartyApplication.certificateBundlePath}" "$2"; fi; shift; done\n`,
  );
  writeFileSync(join(tools, "curl"), `#!/bin/bash\necho '{"value":"federated-token-stand-in"}'\n`);
  for (const tool of ["az", "curl"]) chmodSync(join(tools, tool), 0o755);
  const shell = literalCliEnvironment((await engineModule().engineCommand()).root, environment);
  job = {
    ...shell,
    PATH: `${tools}:${shell.PATH ?? ""}`,
    PULUMI_BACKEND_URL: `file://${join(scratch, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: "workflow-test-passphrase",
    ARO_HCP_REGION: region,
    REGION_DIRECTORY: regionDirectory,
    ARO_HCP_SHARD_PLAN_DIRECTORY: regionDirectory,
    ARO_HCP_SETTINGS_FILE: join(regionDirectory, "settings.json"),
    KEY_VAULT: "kv-stand-in",
    CERTIFICATE: "first-party",
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: "stand-in",
    ACTIONS_ID_TOKEN_REQUEST_URL: "https://stand-in.invalid/token?x=1",
    ARO_HCP_RECHECK: "",
  };
  mkdirSync(join(scratch, "state"), { recursive: true });
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe("the drift-correction workflow as a matrix over a region's shards, one tenant refused", () => {
  it("corrects every other cluster, and the final job's verdict names the tenant's clusters once under one cause", async () => {
    // The first run adopts the region: both shards' jobs at once, a green verdict.
    const adopted = await Promise.all(plan.shards.map((item) => shardJob(item.index, "github-1", join(scratch, "artifacts-github-1"))));
    adopted.forEach((finished, index) => expect(finished.code, `shard ${index}:\n${finished.output}`).toBe(0));
    const green = await verdictJob("github-1");
    expect(green.code, green.output).toBe(0);
    expect(green.report).toMatchObject({ verdict: "ok", problems: [], runId: "github-1" });

    // Someone changed every cluster's first identity in Cosmos; the refused tenant's clusters are due for their recheck.
    tamperWithFirstIdentities(sandbox, fleet, demoTenantIds[0]);
    const refused = fleet.filter((cluster) => cluster.tenantId === demoTenantIds[0]);
    const others = fleet.filter((cluster) => cluster.tenantId !== demoTenantIds[0]);
    expect(refused).toHaveLength(2);
    sandbox.faults.add(revokedCertificateFault(demoTenantIds[0]));

    const corrected = await Promise.all(plan.shards.map((item) => shardJob(item.index, "github-2", join(scratch, "artifacts-github-2"))));
    const holds = (index: number, cluster: FleetClusterDescription): boolean =>
      readFileSync(join(regionDirectory, `shard-${index}.json`), "utf8").includes(cluster.clusterResourceId);
    corrected.forEach((finished, index) => {
      // A shard's job is red when a cluster of it failed (exit 3), green otherwise.
      expect(finished.code, `shard ${index}:\n${finished.output}`).toBe(refused.some((cluster) => holds(index, cluster)) ? 3 : 0);
      expect(finished.output).not.toMatch(/^\s+at .+\(.+:\d+:\d+\)$/m);
    });
    for (const cluster of others) {
      expect(await storedClientId(sandbox, cluster), cluster.clusterResourceId).toBe(
        sandbox.identities.get(Object.values(cluster.dataPlaneOperators)[0])?.clientId,
      );
    }
    for (const cluster of refused) expect(await storedClientId(sandbox, cluster), cluster.clusterResourceId).toBe(wrongClientId);

    // The final job: red, the two clusters under one cause naming the tenant, the other corrected; printed once in the summary.
    const verdict = await verdictJob("github-2");
    expect(verdict.code, verdict.output).toBe(1);
    const nameOf = (cluster: FleetClusterDescription): string => {
      const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
      return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
    };
    expect(verdict.report).toMatchObject({ verdict: "failed", problems: [], runId: "github-2", planId: plan.planId });
    expect(verdict.report.causes).toHaveLength(1);
    expect([...verdict.report.causes[0].resources].sort()).toEqual(refused.map(nameOf).sort());
    expect(verdict.report.causes[0].cause).toContain(demoTenantIds[0]);
    for (const cluster of others) expect(verdict.report.clusters[nameOf(cluster)]?.outcome).toBe("driftCorrected");
    expect(verdict.summary).toMatch(/^Region report: FAILED \(2 clusters\)/);

    // Each shard stack's `clusters` output, written by the same `up`: the refused clusters say failed, for both halves, with the cause.
    for (const item of plan.shards.filter((candidate) => refused.some((cluster) => holds(candidate.index, cluster)))) {
      const stack = `${region}-shard-${item.index}`;
      const scratchOfShard = join(scratch, `runner-github-2-${item.index}`, "shard", stack);
      const output = await runStep(`pulumi stack output clusters --json --stack ${stack} --non-interactive`, {
        ...job,
        PULUMI_HOME: join(scratchOfShard, "pulumi-home"),
      });
      expect(output.code, output.output).toBe(0);
      const outputs = JSON.parse(output.output) as Record<
        string,
        { id: string; failure?: string; dataPlaneOperators: { state: string }; msiIdentities: { state: string } }
      >;
      for (const cluster of refused.filter((candidate) => holds(item.index, candidate))) {
        const entry = Object.values(outputs).find((value) => value.id === cluster.clusterResourceId);
        expect(entry, cluster.clusterResourceId).toMatchObject({ dataPlaneOperators: { state: "failed" }, msiIdentities: { state: "failed" } });
        expect(entry?.failure).toContain(demoTenantIds[0]);
      }
    }
    // Under each red shard's "Diagnostics", one line for the cause, naming its clusters and pointing at their own
    // errors, which state the cause: the line does not repeat it.
    corrected.forEach((finished, index) => {
      const mine = refused.filter((cluster) => holds(index, cluster));
      if (mine.length === 0) return;
      const causeLines = finished.output.split("\n").filter((line) => /^\s+warning: \d+ clusters? failed/.test(line));
      expect(causeLines, finished.output).toHaveLength(1);
      for (const cluster of mine) expect(causeLines[0]).toContain(nameOf(cluster));
      expect(causeLines[0]).not.toContain("invalid_client");
    });
    expect(verdict.summary.split("\n").filter((line) => line.includes("× "))).toHaveLength(1);
  }, 600_000);
});
