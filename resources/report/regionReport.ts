/**
 * One verdict for a region's run: the run records of every shard of a shard plan
 * (shards/shardPlanFile.ts), judged together. Each shard's records say which run, plan and shard they
 * are of (`ARO_HCP_RUN_ID`, `ARO_HCP_SHARD_PLAN`, `ARO_HCP_SHARD_INDEX`; runRecord.ts). The verdict
 * fails, naming the shard or file, when a shard that holds clusters did not report, a shard reported
 * twice for one run (records of it in two files), records are of another plan, of an index the plan
 * does not have, of more than one run, or carry no run, plan or shard; when a shard's records do not
 * account for every cluster the plan gives it, or account for one it does not; and when a cluster failed.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ShardPlanFile } from "../shards/shardPlanFile";
import { readShardClusterIds, readShardPlanFile } from "../shards/shardPlanFile";
import type { HalfOutcome, RunRecord } from "./runRecordFormat";
import { outcomeWords, runIdentityVariables } from "./runRecordFormat";
import type { RunReport } from "./runReport";
import { buildRunReport, clusterCountText, countsText, failedClusterCount, parseRunRecords, reportDetailLines } from "./runReport";
import { coverageProblems, shardCoverage } from "./shardCoverage";

/** One records file as read: its name as given, and its records in order. */
export interface RecordsFile {
  readonly file: string;
  readonly records: readonly RunRecord[];
}

/** One shard of the plan, as the region's run found it. */
export interface ShardSummary {
  readonly index: number;
  readonly clustersFile: string;
  /** The clusters the plan gives it. */
  readonly clusters: number;
  /** The files its records of this plan came from. */
  readonly files: readonly string[];
  /** The clusters the plan gives it that its records do not account for (runRecord.ts accountsForCluster): all of them when it did not report. */
  readonly unaccounted: readonly string[];
  /** The clusters its records account for that the plan does not give it. */
  readonly notPlanned: readonly string[];
  /**
   * Its own run report's verdict, `failed` too when its records leave clusters of it unaccounted for or
   * account for others, or `notReported` (no record of it: for a shard without clusters, not a problem).
   */
  readonly verdict: "ok" | "failed" | "notReported";
}

/** The region's report: the plan, the shards, the problems that fail it by name, and the clusters merged as one run report. */
export interface RegionReport extends Pick<RunReport, "counts" | "causes" | "clusters"> {
  readonly schemaVersion: 1;
  readonly verdict: "ok" | "failed";
  readonly planId: string;
  readonly shardCount: number;
  /** The run the records are of, when they are all of one. */
  readonly runId?: string;
  /** What fails the verdict besides failed clusters, each naming its shard or file. */
  readonly problems: readonly string[];
  readonly shards: readonly ShardSummary[];
}

/** Worst first (runRecord.ts orders the outcomes so). */
const severity = Object.keys(outcomeWords) as HalfOutcome[];

interface ShardRecords {
  readonly file: string;
  readonly index: number;
  readonly runId: string;
  readonly records: readonly RunRecord[];
}

/** Each file's records of each run, plan and shard; what cannot count as a shard's report becomes a problem naming its file. */
function shardRecordsOf(plan: ShardPlanFile, files: readonly RecordsFile[], problems: string[]): ShardRecords[] {
  const accepted: ShardRecords[] = [];
  for (const { file, records } of files) {
    const groups = new Map<string, RunRecord[]>();
    for (const record of records) {
      const key = JSON.stringify([record.shardPlanId, record.shardIndex, record.runId]);
      const group = groups.get(key) ?? [];
      group.push(record);
      groups.set(key, group);
    }
    for (const group of groups.values()) {
      const { shardPlanId, shardIndex, runId } = group[0];
      if (shardPlanId === undefined || shardIndex === undefined || runId === undefined) {
        const fields = Object.keys(runIdentityVariables) as (keyof typeof runIdentityVariables)[];
        const unset = fields
          .filter((field) => group[0][field] === undefined)
          .map((field) => runIdentityVariables[field])
          .join(", ");
        problems.push(`${file}: ${group.length} record(s) without ${unset}: each shard's run sets ${Object.values(runIdentityVariables).join(", ")}`);
      } else if (shardPlanId !== plan.planId) {
        problems.push(`${file}: shard ${shardIndex} reported a run of plan ${shardPlanId}, not of this plan (${plan.planId})`);
      } else if (!/^(?:0|[1-9]\d*)$/.test(shardIndex) || Number(shardIndex) >= plan.shardCount) {
        problems.push(
          `${file}: ${runIdentityVariables.shardIndex} ${JSON.stringify(shardIndex)} is not a shard of plan ${plan.planId} (0 to ${plan.shardCount - 1})`,
        );
      } else {
        accepted.push({ file, index: Number(shardIndex), runId, records: group });
      }
    }
  }
  return accepted;
}

/** The run the records are of, when they are all of one; else a problem listing the runs and their shards. */
function runOf(accepted: readonly ShardRecords[], problems: string[]): string | undefined {
  const shardsByRun = new Map<string, Set<number>>();
  for (const { runId, index } of accepted) shardsByRun.set(runId, (shardsByRun.get(runId) ?? new Set()).add(index));
  if (shardsByRun.size <= 1) return [...shardsByRun.keys()][0];
  const runs = [...shardsByRun].map(([runId, shards]) => {
    const indexes = [...shards].sort((left, right) => left - right);
    return `${runId} (shard${indexes.length === 1 ? "" : "s"} ${indexes.join(", ")})`;
  });
  problems.push(`the records are of ${shardsByRun.size} runs, one expected: ${runs.join(", ")}`);
  return undefined;
}

/** Each cluster's records from the one shard whose report of it is worst (ties: the lower index), in order. */
function worstShardRecords(shardRecords: readonly (readonly RunRecord[])[], shardReports: readonly RunReport[]): RunRecord[] {
  const chosen = new Map<string, number>();
  shardReports.forEach((report, index) => {
    for (const [name, cluster] of Object.entries(report.clusters)) {
      const earlier = chosen.get(name);
      const earlierOutcome = earlier === undefined ? undefined : shardReports[earlier].clusters[name].outcome;
      if (earlierOutcome === undefined || severity.indexOf(cluster.outcome) < severity.indexOf(earlierOutcome)) chosen.set(name, index);
    }
  });
  return shardRecords.flatMap((records, index) => records.filter((record) => chosen.get(record.cluster) === index));
}

/**
 * The region's report from the plan, the cluster IDs it gives each shard (its clusters files) and the records files:
 * 1. groups each file's records by run, plan and shard; records without all three, of another plan or
 *    of an index the plan does not have are problems naming the file;
 * 2. the records must be of one run, else a problem lists each run with its shards;
 * 3. per shard: records of one run in two files are a problem ("reported twice"); a shard the plan gives
 *    clusters with no records is one ("did not report"); a shard that reported and whose records do not
 *    account for every cluster the plan gives it (a run killed part-way, a program that declared fewer)
 *    is one naming them, and so is one whose records account for a cluster the plan gives another shard
 *    or no shard (runRecord.ts accountsForCluster);
 * 4. each shard's records make its own run report; each cluster is then taken from the shard whose
 *    report of it is worst, so a cluster that failed in any shard is listed once, under its cause.
 */
export function buildRegionReport(plan: ShardPlanFile, plannedClusters: readonly (readonly string[])[], files: readonly RecordsFile[]): RegionReport {
  const problems: string[] = [];
  const accepted = shardRecordsOf(plan, files, problems);
  const runId = runOf(accepted, problems);
  const shardRecords = plan.shards.map((shard) => accepted.filter((report) => report.index === shard.index));
  const recordsByShard = shardRecords.map((reports) => reports.flatMap((report) => report.records));
  const shardReports = recordsByShard.map((records) => buildRunReport(records));
  const shards = plan.shards.map((shard, index): ShardSummary => {
    const reports = shardRecords[index];
    for (const run of new Set(reports.map((report) => report.runId))) {
      const twice = reports.filter((report) => report.runId === run).map((report) => report.file);
      if (twice.length > 1) problems.push(`shard ${index} reported twice for run ${run}: ${twice.join(", ")}`);
    }
    const { unaccounted, notPlanned } = shardCoverage(index, plannedClusters, recordsByShard[index]);
    if (reports.length === 0 && shard.clusters > 0) problems.push(`shard ${index} (${shard.clustersFile}, ${clusterCountText(shard.clusters)}) did not report`);
    if (reports.length > 0) problems.push(...coverageProblems(shard, plannedClusters[index]?.length ?? 0, { unaccounted, notPlanned }));
    const complete = unaccounted.length === 0 && notPlanned.length === 0;
    const verdict = reports.length === 0 ? "notReported" : shardReports[index].verdict === "failed" || !complete ? "failed" : "ok";
    return {
      index,
      clustersFile: shard.clustersFile,
      clusters: shard.clusters,
      files: reports.map((report) => report.file),
      unaccounted,
      notPlanned: notPlanned.map(({ name }) => name),
      verdict,
    };
  });
  const merged = buildRunReport(worstShardRecords(recordsByShard, shardReports));
  const verdict = problems.length > 0 || merged.verdict === "failed" ? "failed" : "ok";
  const { counts, causes, clusters } = merged;
  return {
    schemaVersion: 1,
    verdict,
    planId: plan.planId,
    shardCount: plan.shardCount,
    ...(runId === undefined ? {} : { runId }),
    problems,
    shards,
    counts,
    causes,
    clusters,
  };
}

/** The region's report for a terminal: the verdict, the plan and run, the problems, then the merged clusters as a run report shows them. */
export function formatRegionReport(report: RegionReport, listed = 20): string {
  const failedClusters = failedClusterCount(report);
  const reasons = [
    ...(report.problems.length > 0 ? [`${report.problems.length} shard problem${report.problems.length === 1 ? "" : "s"}`] : []),
    ...(failedClusters > 0 ? [clusterCountText(failedClusters)] : []),
  ];
  const verdict = report.verdict === "ok" ? "OK" : `FAILED (${reasons.join(", ")})`;
  const run = report.runId === undefined ? "" : `, run ${report.runId}`;
  const lines = [`Region report: ${verdict}; plan ${report.planId}, ${report.shardCount} shards${run}; ${countsText(report)}`];
  if (report.problems.length > 0) lines.push("Shard problems:", ...report.problems.map((problem) => `  ${problem}`));
  return [...lines, ...reportDetailLines(report, listed)].join("\n");
}

/**
 * Reads records files: each path a file, or a directory whose `*.jsonl` files are read (by name).
 * A file named twice is read once.
 * @throws Error naming a path that does not exist.
 */
export function readRecordsFiles(paths: readonly string[]): RecordsFile[] {
  const files = paths.flatMap((path) => {
    if (!existsSync(path)) throw new Error(`records path ${path} does not exist`);
    if (!statSync(path).isDirectory()) return [path];
    return readdirSync(path)
      .filter((name) => name.endsWith(".jsonl"))
      .sort()
      .map((name) => join(path, name));
  });
  const seen = new Set<string>();
  return files.flatMap((file) => {
    if (seen.has(resolve(file))) return [];
    seen.add(resolve(file));
    return [{ file, records: parseRunRecords(readFileSync(file, "utf8")) }];
  });
}

/** Options of {@link reportRegion}. */
export interface ReportRegionOptions {
  readonly planFile: string;
  /** Records files and directories of them. */
  readonly paths: readonly string[];
  /** Where the JSON report goes, when asked. */
  readonly jsonFile?: string;
}

/** Reads the plan and the records, builds the region's report, writes it as JSON when asked. */
export function reportRegion(options: ReportRegionOptions): RegionReport {
  const plan = readShardPlanFile(options.planFile);
  const report = buildRegionReport(plan, readShardClusterIds(options.planFile, plan), readRecordsFiles(options.paths));
  if (options.jsonFile !== undefined) writeFileSync(options.jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
