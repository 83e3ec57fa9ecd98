/**
 * One verdict for a region (resources/report/regionReport.ts): every shard's run records, judged
 * against the shard plan, and what the shards' provider hosts write for it (resources/report/runRecord.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RecordsFile } from "../../resources/report/regionReport";
import { buildRegionReport, formatRegionReport, readRecordsFiles, reportRegion } from "../../resources/report/regionReport";
import { runReportCommand } from "../../resources/report/reportCommand";
import type { HalfOutcome, RunRecord } from "../../resources/report/runRecordFormat";
import { appendRunRecord } from "../../resources/report/runRecord";
import { formatRunReport, parseRunRecords, reportRun } from "../../resources/report/runReport";
import type { ShardPlanFile } from "../../resources/shards/shardPlanFile";

const planId = "3f9ac1d2e4b5a6c7";
const runId = "drift-correction-20261205-0300";
const tenant = "4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7a9b11";
const cluster = (index: number): string => `1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/rg-${index}/cluster-${index}`;
const clusterId = (index: number): string =>
  `/subscriptions/1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/resourceGroups/rg-${index}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${index}`;
const refused = (index: number): string =>
  `invalid_client: AADSTS7000215: Invalid client secret provided (in tenant ${tenant}). Cluster ${cluster(index)}: nothing was written.`;

/** Three shards: two of two clusters, one empty. */
const plan: ShardPlanFile = {
  schemaVersion: 1,
  planId,
  shardCount: 3,
  clusters: 4,
  shards: [2, 0, 2].map((clusters, index) => ({ index, clustersFile: `shard-${index}.json`, clusters })),
};
/** The cluster IDs the plan gives each shard (its clusters files). */
const planned: readonly string[][] = [[clusterId(1), clusterId(2)], [], [clusterId(3), clusterId(4)]];

interface Shard {
  readonly shardIndex?: string;
  readonly shardPlanId?: string;
  readonly runId?: string;
}

/** An update's record of a cluster by a shard's provider host. */
function record(index: number, shard: Shard, outcome: HalfOutcome = "current", operation: RunRecord["operation"] = "update"): RunRecord {
  return {
    cluster: cluster(index),
    clusterResourceId: clusterId(index),
    operation,
    at: "2026-12-05T03:00:00.000Z",
    dataPlane: outcome,
    msi: outcome === "failed" ? "failed" : "current",
    ...(outcome === "failed" ? { message: refused(index) } : {}),
    ...shard,
  };
}

const shard0: Shard = { shardPlanId: planId, shardIndex: "0", runId };
const shard2: Shard = { shardPlanId: planId, shardIndex: "2", runId };
const reported0: RecordsFile = { file: "runs/shard-0.jsonl", records: [record(1, shard0), record(2, shard0, "written")] };
const reported2: RecordsFile = { file: "runs/shard-2.jsonl", records: [record(3, shard2), record(4, shard2)] };

describe("buildRegionReport", () => {
  it("is ok when every shard that holds clusters reported once, all for one run; the empty shard need not report", () => {
    const report = buildRegionReport(plan, planned, [reported0, reported2]);
    expect(report).toMatchObject({ schemaVersion: 1, verdict: "ok", planId, shardCount: 3, runId, problems: [], causes: [] });
    expect(report.counts).toEqual({ clusters: 4, written: 1, current: 3 });
    expect(report.shards).toEqual([
      { index: 0, clustersFile: "shard-0.json", clusters: 2, files: ["runs/shard-0.jsonl"], unaccounted: [], notPlanned: [], verdict: "ok" },
      { index: 1, clustersFile: "shard-1.json", clusters: 0, files: [], unaccounted: [], notPlanned: [], verdict: "notReported" },
      { index: 2, clustersFile: "shard-2.json", clusters: 2, files: ["runs/shard-2.jsonl"], unaccounted: [], notPlanned: [], verdict: "ok" },
    ]);
  });

  it("fails naming a shard that holds clusters and did not report", () => {
    const report = buildRegionReport(plan, planned, [reported0]);
    expect(report.verdict).toBe("failed");
    expect(report.problems).toEqual(["shard 2 (shard-2.json, 2 clusters) did not report"]);
    expect(report.shards[2]).toMatchObject({ files: [], unaccounted: [cluster(3), cluster(4)], verdict: "notReported" });
  });

  it("fails naming a shard whose run stopped part-way: a cluster only read by its refresh, or diffed with work to do and no update after, is unaccounted for", () => {
    // The refresh read both; the update found cluster 3 current and cluster 4 due, and was killed before updating 4.
    const killed: RecordsFile = {
      file: "runs/shard-2.jsonl",
      records: [
        record(3, shard2, "current", "read"),
        record(4, shard2, "current", "read"),
        record(3, shard2, "current", "diff"),
        record(4, shard2, "wouldAsk", "diff"),
      ],
    };
    const report = buildRegionReport(plan, planned, [reported0, killed]);
    expect(report.verdict).toBe("failed");
    expect(report.problems).toEqual([
      `shard 2 (shard-2.json) left 1 of its 2 clusters unaccounted for (its run stopped part-way, or its program declared fewer): ${cluster(4)}`,
    ]);
    expect(report.shards[2]).toMatchObject({ unaccounted: [cluster(4)], notPlanned: [], verdict: "failed" });
    // The refresh alone accounts for nothing: its reads, nor its diffs of what it read, though current.
    const refreshOnly: RecordsFile = {
      file: "runs/shard-2.jsonl",
      records: [...killed.records.slice(0, 2), ...[3, 4].map((index): RunRecord => ({ ...record(index, shard2, "current", "diff"), duringRefresh: true }))],
    };
    expect(buildRegionReport(plan, planned, [reported0, refreshOnly]).shards[2].unaccounted).toEqual([cluster(3), cluster(4)]);
    // A retry within the run appends to the same file: its update accounts for cluster 4.
    const retried: RecordsFile = { file: "runs/shard-2.jsonl", records: [...killed.records, record(4, shard2, "written", "update")] };
    expect(buildRegionReport(plan, planned, [reported0, retried])).toMatchObject({ verdict: "ok", problems: [] });
  });

  it("counts every pass that ran, whatever its outcome, and compares IDs lowercased; a preview is not a pass", () => {
    const passes: RecordsFile = {
      file: "runs/shard-0.jsonl",
      records: [record(1, shard0, "failed", "create"), { ...record(2, shard0, "failed", "check"), clusterResourceId: clusterId(2).toUpperCase() }],
    };
    const report = buildRegionReport(plan, planned, [passes, reported2]);
    expect(report.problems).toEqual([]);
    expect(report.shards[0]).toMatchObject({ unaccounted: [], verdict: "failed" });
    const previewed: RecordsFile = { file: "runs/shard-2.jsonl", records: [record(3, shard2), record(4, shard2, "wouldAsk", "preview")] };
    expect(buildRegionReport(plan, planned, [reported0, previewed]).shards[2].unaccounted).toEqual([cluster(4)]);
  });

  it("names at most five unaccounted clusters in the problem, all of them in the JSON", () => {
    const big: ShardPlanFile = { ...plan, shardCount: 1, clusters: 8, shards: [{ index: 0, clustersFile: "shard-0.json", clusters: 8 }] };
    const ids = [1, 2, 3, 4, 5, 6, 7, 8].map(clusterId);
    const report = buildRegionReport(big, [ids], [{ file: "runs/shard-0.jsonl", records: [record(1, shard0)] }]);
    expect(report.problems).toEqual([
      `shard 0 (shard-0.json) left 7 of its 8 clusters unaccounted for (its run stopped part-way, or its program declared fewer): ${[2, 3, 4, 5, 6]
        .map(cluster)
        .join(", ")}, and 2 more`,
    ]);
    expect(report.shards[0].unaccounted).toEqual([2, 3, 4, 5, 6, 7, 8].map(cluster));
  });

  it("fails naming a cluster a shard ran that the plan gives another shard, or no shard", () => {
    const strays: RecordsFile = { file: "runs/shard-0.jsonl", records: [...reported0.records, record(3, shard0), record(9, shard0, "current", "diff")] };
    const report = buildRegionReport(plan, planned, [strays, reported2]);
    expect(report.problems).toEqual([
      `shard 0 (shard-0.json) ran 2 clusters the plan does not give it: ${cluster(3)} (shard 2's), ${cluster(9)} (in no shard of the plan)`,
    ]);
    expect(report.shards[0]).toMatchObject({ unaccounted: [], notPlanned: [cluster(3), cluster(9)], verdict: "failed" });
    // A cluster its refresh read as the stack lets go of it (a new shard count) is not one it ran.
    const leaving: RecordsFile = { file: "runs/shard-0.jsonl", records: [...reported0.records, record(3, shard0, "current", "read")] };
    expect(buildRegionReport(plan, planned, [leaving, reported2])).toMatchObject({ verdict: "ok", problems: [] });
  });

  it("fails naming a shard that reported twice for one run, and both files", () => {
    const again: RecordsFile = { file: "runs/shard-2-retry.jsonl", records: [record(3, shard2), record(4, shard2)] };
    const report = buildRegionReport(plan, planned, [reported0, reported2, again]);
    expect(report.problems).toEqual([`shard 2 reported twice for run ${runId}: runs/shard-2.jsonl, runs/shard-2-retry.jsonl`]);
    expect(report.verdict).toBe("failed");
    // Its clusters are counted once.
    expect(report.counts.clusters).toBe(4);
  });

  it("fails naming the file of a run of another plan, and the shard that then did not report", () => {
    const other: RecordsFile = { file: "runs/shard-2.jsonl", records: [record(3, { ...shard2, shardPlanId: "0000000000000000" })] };
    expect(buildRegionReport(plan, planned, [reported0, other]).problems).toEqual([
      `runs/shard-2.jsonl: shard 2 reported a run of plan 0000000000000000, not of this plan (${planId})`,
      "shard 2 (shard-2.json, 2 clusters) did not report",
    ]);
  });

  it("fails naming records of a shard index the plan does not have, and records that name no run, plan or shard", () => {
    const report = buildRegionReport(plan, planned, [
      reported0,
      reported2,
      { file: "runs/shard-3.jsonl", records: [record(5, { ...shard2, shardIndex: "3" })] },
      { file: "runs/shard-x.jsonl", records: [record(6, { ...shard2, shardIndex: "02" })] },
      { file: "runs/unset.jsonl", records: [record(7, {}), record(8, {})] },
      { file: "runs/no-run.jsonl", records: [record(9, { shardPlanId: planId, shardIndex: "1" })] },
    ]);
    expect(report.problems).toEqual([
      `runs/shard-3.jsonl: ARO_HCP_SHARD_INDEX "3" is not a shard of plan ${planId} (0 to 2)`,
      `runs/shard-x.jsonl: ARO_HCP_SHARD_INDEX "02" is not a shard of plan ${planId} (0 to 2)`,
      "runs/unset.jsonl: 2 record(s) without ARO_HCP_RUN_ID, ARO_HCP_SHARD_PLAN, ARO_HCP_SHARD_INDEX: each shard's run sets ARO_HCP_RUN_ID, ARO_HCP_SHARD_PLAN, ARO_HCP_SHARD_INDEX",
      "runs/no-run.jsonl: 1 record(s) without ARO_HCP_RUN_ID: each shard's run sets ARO_HCP_RUN_ID, ARO_HCP_SHARD_PLAN, ARO_HCP_SHARD_INDEX",
    ]);
    // Only the shards' own records count as clusters of the region's run.
    expect(report.counts.clusters).toBe(4);
  });

  it("fails when the records are of more than one run, naming each run's shards, and names no run", () => {
    const yesterday: RecordsFile = { file: "runs/shard-2.jsonl", records: [3, 4].map((index) => record(index, { ...shard2, runId: "yesterday" })) };
    const report = buildRegionReport(plan, planned, [reported0, yesterday]);
    expect(report.problems).toEqual([`the records are of 2 runs, one expected: ${runId} (shard 0), yesterday (shard 2)`]);
    expect(report.runId).toBeUndefined();
  });

  it("lists a cluster that failed in any shard once, under its cause, beside a cluster of another shard with the same cause", () => {
    // Cluster 3 moved from shard 0 to shard 2 (a new shard count): shard 0's refresh still read it and
    // failed, shard 2's update found it current; cluster 1 failed in shard 0 for the same tenant.
    const shard0Records: RecordsFile = {
      file: "runs/shard-0.jsonl",
      records: [record(1, shard0, "failed"), record(2, shard0), record(3, shard0, "failed", "read")],
    };
    const report = buildRegionReport(plan, planned, [shard0Records, reported2]);
    expect(report.verdict).toBe("failed");
    expect(report.problems).toEqual([]);
    expect(report.causes).toHaveLength(1);
    expect(report.causes[0]).toMatchObject({ count: 2, resources: [cluster(1), cluster(3)] });
    expect(report.causes[0].cause).toContain(`tenant ${tenant}`);
    expect(report.clusters[cluster(3)]).toMatchObject({ outcome: "failed", dataPlane: { outcome: "failed", operation: "read" } });
    expect(report.counts).toEqual({ clusters: 4, failed: 2, current: 2 });
    expect(report.shards.map((shard) => shard.verdict)).toEqual(["failed", "notReported", "ok"]);
    const text = formatRegionReport(report);
    expect(text.split("\n").filter((line) => line.includes("AADSTS7000215"))).toHaveLength(1);
    expect(text.split("\n").filter((line) => line.startsWith(cluster(3)))).toHaveLength(1);
  });
});

describe("formatRegionReport", () => {
  it("says the verdict, plan, run and counts, then each shard problem, then the clusters as a run report lists them", () => {
    const report = buildRegionReport(plan, planned, [{ file: "runs/shard-0.jsonl", records: [record(1, shard0, "failed"), record(2, shard0)] }]);
    expect(formatRegionReport(report).split("\n")).toEqual([
      `Region report: FAILED (1 shard problem, 1 cluster); plan ${planId}, 3 shards, run ${runId}; 2 clusters: 1 failed, 1 current`,
      "Shard problems:",
      "  shard 2 (shard-2.json, 2 clusters) did not report",
      "By cause:",
      `  1 × invalid_client: AADSTS7000215: Invalid client secret provided (in tenant ${tenant})`,
      `      ${cluster(1)}`,
      `${"CLUSTER".padEnd(cluster(1).length)}  DATA PLANE OPERATORS    MSI (CONTROL PLANE, SERVICE)`,
      `${cluster(1)}  failed                  failed`,
    ]);
    expect(formatRegionReport(buildRegionReport(plan, planned, [reported0, reported2])).split("\n")).toEqual([
      `Region report: OK; plan ${planId}, 3 shards, run ${runId}; 4 clusters: 1 written, 3 current`,
      `${"CLUSTER".padEnd(cluster(2).length)}  DATA PLANE OPERATORS    MSI (CONTROL PLANE, SERVICE)`,
      `${cluster(2)}  written                 current`,
    ]);
  });
});

describe("the records files of a region", () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "region-report-"));
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  const writeRecords = (file: string, records: readonly RunRecord[]): void => writeFileSync(file, records.map((item) => `${JSON.stringify(item)}\n`).join(""));

  it("are what each shard's provider host appended, with the run, plan and shard its environment names", () => {
    const file = join(directory, "shard-0.jsonl");
    const environment = { ARO_HCP_RUN_RECORDS: file, ARO_HCP_RUN_ID: runId, ARO_HCP_SHARD_PLAN: planId, ARO_HCP_SHARD_INDEX: "0" };
    const { shardPlanId: _plan, shardIndex: _index, runId: _run, ...plain } = record(1, shard0);
    appendRunRecord(plain, environment);
    appendRunRecord({ ...plain, cluster: cluster(2), clusterResourceId: clusterId(2) }, { ...environment, ARO_HCP_SHARD_INDEX: "" });
    expect(parseRunRecords(readFileSync(file, "utf8"))).toEqual([
      { ...plain, runId, shardPlanId: planId, shardIndex: "0" },
      { ...plain, cluster: cluster(2), clusterResourceId: clusterId(2), runId, shardPlanId: planId },
    ]);
  });

  it("are read from files and directories (their *.jsonl), each file once, and a missing path is named", () => {
    const runs = join(directory, "runs");
    mkdirSync(runs);
    writeRecords(join(runs, "shard-0.jsonl"), reported0.records);
    writeRecords(join(runs, "shard-2.jsonl"), reported2.records);
    writeFileSync(join(runs, "shard-plan.json"), "{}");
    const files = readRecordsFiles([runs, join(runs, "shard-2.jsonl")]);
    expect(files).toEqual([
      { file: join(runs, "shard-0.jsonl"), records: reported0.records },
      { file: join(runs, "shard-2.jsonl"), records: reported2.records },
    ]);
    expect(() => readRecordsFiles([join(directory, "absent")])).toThrow(`records path ${join(directory, "absent")} does not exist`);
  });

  it("give the report, written as JSON when asked, and the command's exit code: 0 ok, 1 failed, 2 for input it cannot read", () => {
    const planFile = join(directory, "shard-plan.json");
    writeFileSync(planFile, JSON.stringify(plan));
    planned.forEach((ids, index) =>
      writeFileSync(join(directory, `shard-${index}.json`), JSON.stringify(ids.map((clusterResourceId) => ({ clusterResourceId })))),
    );
    writeRecords(join(directory, "shard-0.jsonl"), reported0.records);
    const jsonFile = join(directory, "region-report.json");
    const report = reportRegion({ planFile, paths: [directory], jsonFile });
    expect(JSON.parse(readFileSync(jsonFile, "utf8"))).toEqual(report);
    expect(report.problems).toEqual(["shard 2 (shard-2.json, 2 clusters) did not report"]);

    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const exitCode = process.exitCode;
    try {
      const exitOf = (argumentsList: string[]): number | string | undefined => {
        process.exitCode = undefined;
        runReportCommand(argumentsList);
        return process.exitCode;
      };
      expect(exitOf(["--plan", planFile, directory])).toBe(1);
      expect(log.mock.calls.at(-1)?.[0]).toBe(formatRegionReport(report));
      writeRecords(join(directory, "shard-2.jsonl"), reported2.records);
      expect(exitOf(["--plan", planFile, directory, "--json", jsonFile])).toBeUndefined();
      expect(JSON.parse(readFileSync(jsonFile, "utf8"))).toMatchObject({ verdict: "ok", problems: [] });
      expect(exitOf(["--plan", join(directory, "absent.json"), directory])).toBe(2);
      expect(error.mock.calls.at(-1)?.[0]).toBe(`shard plan file ${join(directory, "absent.json")} does not exist (aro-hcp-shard-plan writes it)`);
      expect(exitOf(["--plan", planFile])).toBe(2);
      // The shards' clusters files are read beside the plan file: one missing, or of another plan, is named.
      writeFileSync(join(directory, "shard-2.json"), JSON.stringify([{ clusterResourceId: clusterId(3) }]));
      expect(exitOf(["--plan", planFile, directory])).toBe(2);
      expect(error.mock.calls.at(-1)?.[0]).toBe(
        `${join(directory, "shard-2.json")} lists 1 cluster(s); ${planFile} says shard 2 has 2: the files are not of one plan (write them with one aro-hcp-shard-plan)`,
      );
      rmSync(join(directory, "shard-2.json"));
      expect(exitOf(["--plan", planFile, directory])).toBe(2);
      expect(error.mock.calls.at(-1)?.[0]).toContain(`${join(directory, "shard-2.json")} does not exist: shard 2 of plan ${planId} lists its clusters there`);
      // Without --plan, one stack's report as it has always been: printed, exit code left alone though it failed.
      const single = join(directory, "single.jsonl");
      writeRecords(single, [record(1, {}, "failed")]);
      expect(exitOf([single])).toBeUndefined();
      expect(log.mock.calls.at(-1)?.[0]).toBe(formatRunReport(reportRun(single)));
      expect(log.mock.calls.at(-1)?.[0]).toMatch(/^Run report: FAILED \(1 cluster\); 1 cluster: 1 failed/);
    } finally {
      process.exitCode = exitCode;
      log.mockRestore();
      error.mockRestore();
    }
  });
});
