/**
 * A region planned into shards by the shard plan command and judged as one run by the run report's
 * `--plan` mode, both as real processes (`node dist/cli/…`), over records that real provider hosts
 * wrote: each shard its own stack through the real engine against the sandbox, with the run, plan
 * and shard in its environment.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegionReport } from "../../resources/report/regionReport";
import type { ShardPlanFile } from "../../resources/shards/shardPlanFile";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import { e2eScratchDirectory, engineModule } from "./engineHelpers";

const projectDirectory = resolve(__dirname, "..", "..");
let sandbox: Sandbox;
let fleet: FleetClusterDescription[];

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: join(projectDirectory, ".sandbox", `region-verdict-${process.pid}`) });
  fleet = seedFleet(sandbox, { clusters: 6, identitiesPerCluster: 2, subscriptions: 3 });
});

afterAll(async () => {
  await sandbox?.stop();
});

/** Runs a compiled command of this repository; its exit code and output. */
async function runCommand(script: string, argumentsList: readonly string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(projectDirectory, "dist", "cli", script), ...argumentsList]);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

/** The shard plan command's output: the plan file and each shard's clusters file, as written. */
interface Planned {
  readonly planFile: string;
  readonly plan: ShardPlanFile;
  readonly shardFiles: readonly string[];
}

async function planRegion(shardCount: number): Promise<Planned> {
  const planned = await runCommand("shardPlan.js", [regionFile, "--shards", String(shardCount), "--out", planDirectory]);
  expect(planned.code, planned.output).toBe(0);
  const planFile = join(planDirectory, "shard-plan.json");
  const plan = JSON.parse(readFileSync(planFile, "utf8")) as ShardPlanFile;
  return { planFile, plan, shardFiles: plan.shards.map((shard) => join(planDirectory, shard.clustersFile)) };
}

/**
 * Runs one shard's `up` as a shard's runner would: its stack over its clusters file, its records in
 * `<runs>/<runId>/shard-<index>.jsonl` with the run, plan and shard in the environment; an empty
 * shard of a non-empty region may let go of everything it holds.
 */
async function runShard(planned: Planned, index: number, runId: string): Promise<{ succeeded: boolean; clustersHeld: number }> {
  const engine = engineModule();
  const { config: connection, environment } = settingsForRunningSandbox(sandbox);
  const records = join(root, "runs", runId);
  mkdirSync(records, { recursive: true });
  const stack = await engine.openStack({
    engine: await engine.engineCommand(),
    stackName: `region-shard-${index}`,
    paths: { state: join(root, "state"), home: join(root, `home-${index}`), workDirectory: join(root, `work-${index}`) },
    config: {
      ...connection,
      documentWaitSeconds: "2",
      clustersFile: planned.shardFiles[index],
      clusters: "[]",
      allowEmptyFleet: String(planned.plan.shards[index].clusters === 0),
    },
    environment: {
      ...environment,
      ARO_HCP_RUN_RECORDS: join(records, `shard-${index}.jsonl`),
      ARO_HCP_RUN_ID: runId,
      ARO_HCP_SHARD_PLAN: planned.plan.planId,
      ARO_HCP_SHARD_INDEX: String(index),
    },
  });
  // A refused cluster fails the update; every other cluster is still corrected, and recorded.
  const succeeded = await stack.up({ color: "never", continueOnError: true }).then(
    () => true,
    () => false,
  );
  const clusters = (await stack.outputs()).clusters?.value as Record<string, unknown> | undefined;
  return { succeeded, clustersHeld: Object.keys(clusters ?? {}).length };
}

/** The region's verdict over a run's records directory, by the real command; its exit code, text and JSON. */
async function judge(planned: Planned, runId: string): Promise<{ code: number; output: string; report: RegionReport }> {
  const reportFile = join(root, `region-report-${runId}.json`);
  const { code, output } = await runCommand("runReport.js", ["--plan", planned.planFile, join(root, "runs", runId), "--json", reportFile]);
  return { code, output, report: JSON.parse(readFileSync(reportFile, "utf8")) as RegionReport };
}

let root: string;
let regionFile: string;
let planDirectory: string;

describe("a region's run in shards, judged as one", () => {
  it("names a shard that did not report, then lists each cluster of a refused subscription once under its cause, whichever shard held it", async () => {
    root = e2eScratchDirectory("region-verdict");
    regionFile = join(root, "region.json");
    planDirectory = join(root, "plan");
    writeFileSync(
      regionFile,
      JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }))),
    );
    const planned = await planRegion(2);
    expect(planned.plan.shards.every((shard) => shard.clusters > 0)).toBe(true);

    // ARM refuses every identity of one subscription whose clusters are in both shards.
    const shardTexts = planned.shardFiles.map((file) => readFileSync(file, "utf8"));
    const subscriptionOf = (cluster: FleetClusterDescription): string => cluster.clusterResourceId.split("/")[2];
    const shardsOf = (subscription: string): Set<number> =>
      new Set(
        fleet
          .filter((cluster) => subscriptionOf(cluster) === subscription)
          .map((cluster) => shardTexts.findIndex((text) => text.includes(cluster.clusterResourceId))),
      );
    const refusedSubscription = fleet.map(subscriptionOf).find((subscription) => shardsOf(subscription).size === 2);
    expect(refusedSubscription, "a subscription with clusters in both shards").toBeDefined();
    const refused = fleet.filter((cluster) => subscriptionOf(cluster) === refusedSubscription);
    sandbox.faults.add({
      target: "arm",
      kind: "status",
      statusCode: 403,
      errorCode: "AuthorizationFailed",
      message: "The client does not have authorization to perform action 'Microsoft.ManagedIdentity/userAssignedIdentities/read'.",
      match: { pathContains: `/subscriptions/${refusedSubscription ?? ""}/` },
      count: 1000,
    });

    expect(await runShard(planned, 0, "run-1")).toMatchObject({ succeeded: false });
    const one = await judge(planned, "run-1");
    expect(one.code, one.output).toBe(1);
    const shard1 = planned.plan.shards[1].clusters;
    expect(one.report.problems).toEqual([`shard 1 (shard-1.json, ${shard1} cluster${shard1 === 1 ? "" : "s"}) did not report`]);
    expect(one.output).toContain("shard 1 (shard-1.json");

    expect(await runShard(planned, 1, "run-1")).toMatchObject({ succeeded: false });
    const both = await judge(planned, "run-1");
    expect(both.code, both.output).toBe(1);
    expect(both.report).toMatchObject({ verdict: "failed", planId: planned.plan.planId, runId: "run-1", problems: [] });
    expect(both.report.shards.map((shard) => shard.files)).toEqual([0, 1].map((index) => [join(root, "runs", "run-1", `shard-${index}.jsonl`)]));
    expect(both.report.counts.clusters).toBe(6);
    expect(both.report.causes).toHaveLength(1);
    expect(both.report.causes[0].cause).toContain("AuthorizationFailed");
    expect([...both.report.causes[0].resources].sort()).toEqual(
      Object.entries(both.report.clusters)
        .filter(([, cluster]) => refused.some((item) => item.clusterResourceId === cluster.clusterResourceId))
        .map(([name]) => name)
        .sort(),
    );
    expect(both.report.causes[0].count).toBe(refused.length);
    expect(both.output.split("\n").filter((line) => line.includes("AuthorizationFailed"))).toHaveLength(1);

    // The refusal lifted, the next run corrects the rest and the region is green.
    sandbox.faults.clear("arm");
    for (const index of [0, 1]) expect(await runShard(planned, index, "run-2")).toMatchObject({ succeeded: true });
    const green = await judge(planned, "run-2");
    expect(green.code, green.output).toBe(0);
    expect(green.report).toMatchObject({ verdict: "ok", problems: [], causes: [], runId: "run-2" });
  });

  it("moves clusters to a new shard count with no Cosmos write: the shard a cluster leaves lets go of it, the one it joins adopts it", async () => {
    const shardIndexes = (planned: Planned): Map<string, number> =>
      new Map(
        planned.shardFiles.flatMap((file, index) =>
          (JSON.parse(readFileSync(file, "utf8")) as { clusterResourceId: string }[]).map((cluster): [string, number] => [cluster.clusterResourceId, index]),
        ),
      );
    const before = await planRegion(2);
    const beforeShards = shardIndexes(before);
    const after = await planRegion(3);
    expect(after.plan.planId).not.toBe(before.plan.planId);
    const afterShards = shardIndexes(after);
    expect(
      fleet.filter((cluster) => afterShards.get(cluster.clusterResourceId) !== beforeShards.get(cluster.clusterResourceId)).length,
      "clusters that move",
    ).toBeGreaterThan(0);

    sandbox.statistics.reset();
    // Each stack then holds exactly its shard's clusters: the old shards let go of those that moved.
    for (const index of [0, 1, 2]) {
      expect(await runShard(after, index, "run-3")).toEqual({ succeeded: true, clustersHeld: after.plan.shards[index].clusters });
    }
    const snapshot = sandbox.statistics.snapshot();
    expect(Object.values(snapshot.cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0)).toBe(0);
    expect(snapshot.arm.getRequests).toBe(0);
    const verdict = await judge(after, "run-3");
    expect(verdict.code, verdict.output).toBe(0);
    expect(verdict.report).toMatchObject({ verdict: "ok", planId: after.plan.planId, problems: [], counts: { clusters: 6 } });
    // The old plan's records are not this plan's run.
    const stale = await runCommand("runReport.js", ["--plan", after.planFile, join(root, "runs", "run-2")]);
    expect(stale.code).toBe(1);
    expect(stale.output).toContain(`reported a run of plan ${before.plan.planId}, not of this plan (${after.plan.planId})`);
  });
});
