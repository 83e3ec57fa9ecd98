/**
 * The run report: per cluster and half, what a run did and why, failures grouped by cause. Built
 * from the provider's records (`ARO_HCP_RUN_RECORDS`, runRecord.ts), so it says "failed" where the
 * stack's outputs keep a failed resource's old values. The command is reportCommand.ts.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { FailureGroup } from "../core/clusterMessage";
import { groupFailures } from "../core/clusterMessage";
import type { HalfOutcome, RunRecord } from "./runRecordFormat";
import { failedOutcomes, outcomeWords } from "./runRecordFormat";

export interface HalfReport {
  readonly outcome: HalfOutcome;
  /** The operation that decided it (refresh is `read`). */
  readonly operation: RunRecord["operation"];
}

export interface ClusterReport {
  readonly clusterResourceId: string;
  /** The worse of the two halves. */
  readonly outcome: HalfOutcome;
  readonly dataPlane: HalfReport;
  readonly msi: HalfReport;
  /** The failure's cause (as grouped), when a half failed or kept its IDs after a failure. */
  readonly cause?: string;
}

export interface RunReport {
  readonly schemaVersion: 1;
  /** `noRecords` (the provider recorded nothing) is not a green run either. */
  readonly verdict: "ok" | "failed" | "noRecords";
  /** Clusters by their overall outcome. */
  readonly counts: Readonly<Partial<Record<HalfOutcome, number>>> & { readonly clusters: number };
  /** The failed clusters grouped by cause, the most frequent first. */
  readonly causes: readonly FailureGroup[];
  /** Keyed by the cluster's resource name in the stack. */
  readonly clusters: Readonly<Record<string, ClusterReport>>;
}

/** Worst first: a cluster's outcome is the first of these its halves have. */
const severity = Object.keys(outcomeWords) as HalfOutcome[];

/** What a diff (what the update would do) does not replace: a failure or drift the run already found. */
const standsOverDiff: readonly HalfOutcome[] = ["failed", "keptAfterFailure", "driftFound"];

/** Reads the records file: one JSON object a line; a line that is not one is skipped (a cut write). */
export function parseRunRecords(text: string): RunRecord[] {
  return text.split("\n").flatMap((line) => {
    try {
      const value = JSON.parse(line) as RunRecord;
      return typeof value.cluster === "string" && typeof value.dataPlane === "string" && typeof value.msi === "string" ? [value] : [];
    } catch {
      // A blank line, or one cut short by a killed provider host: the next operation on that cluster records again.
      return [];
    }
  });
}

/** The report of a run's records in order: a later record decides each half, except a diff, which does not undo a failure or drift found. */
export function buildRunReport(records: readonly RunRecord[]): RunReport {
  interface Entry {
    clusterResourceId: string;
    dataPlane?: HalfReport;
    msi?: HalfReport;
    message?: string;
  }
  const entries = new Map<string, Entry>();
  for (const record of records) {
    const entry = entries.get(record.cluster) ?? { clusterResourceId: record.clusterResourceId };
    entries.set(record.cluster, entry);
    for (const half of ["dataPlane", "msi"] as const) {
      if (record.operation === "diff" && standsOverDiff.includes(entry[half]?.outcome ?? "current")) continue;
      entry[half] = { outcome: record[half], operation: record.operation };
    }
    if (record.message !== undefined) entry.message = record.message;
    else if (record.operation !== "diff") delete entry.message;
  }
  const failures: Array<{ resource: string; message: string }> = [];
  const clusters: Record<string, ClusterReport> = {};
  const counts: Partial<Record<HalfOutcome, number>> = {};
  for (const [name, entry] of [...entries].sort(([left], [right]) => left.localeCompare(right))) {
    const dataPlane = entry.dataPlane ?? { outcome: "current", operation: "diff" };
    const msi = entry.msi ?? { outcome: "current", operation: "diff" };
    const outcome = severity.find((candidate) => candidate === dataPlane.outcome || candidate === msi.outcome) ?? "current";
    if (failedOutcomes.includes(outcome)) failures.push({ resource: name, message: entry.message ?? `${outcome} (no message recorded)` });
    clusters[name] = { clusterResourceId: entry.clusterResourceId, outcome, dataPlane, msi };
    counts[outcome] = (counts[outcome] ?? 0) + 1;
  }
  const causes = groupFailures(failures);
  for (const group of causes) {
    for (const name of group.resources) clusters[name] = { ...clusters[name], cause: group.cause };
  }
  const verdict = failures.length > 0 ? "failed" : entries.size === 0 ? "noRecords" : "ok";
  return { schemaVersion: 1, verdict, counts: { clusters: entries.size, ...counts }, causes, clusters };
}

/** "N cluster(s)". */
export function clusterCountText(count: number): string {
  return `${count} cluster${count === 1 ? "" : "s"}`;
}

/** The clusters by outcome, as the first line of a report ends: `3 clusters: 2 failed, 1 written`. */
export function countsText(report: Pick<RunReport, "counts">): string {
  const counted = severity
    .filter((outcome) => (report.counts[outcome] ?? 0) > 0)
    .map((outcome) => `${report.counts[outcome] ?? 0} ${outcomeWords[outcome]}`)
    .join(", ");
  return `${clusterCountText(report.counts.clusters)}: ${counted || "none recorded"}`;
}

/** How many clusters failed, all causes together. */
export function failedClusterCount(report: Pick<RunReport, "causes">): number {
  return report.causes.reduce((sum, group) => sum + group.count, 0);
}

/** The lines under a report's first line: one line per cause with its clusters, and at most `listed` clusters not simply current. */
export function reportDetailLines(report: Pick<RunReport, "causes" | "clusters">, listed: number): string[] {
  const lines: string[] = [];
  if (report.causes.length > 0) {
    lines.push("By cause:");
    for (const group of report.causes) {
      lines.push(`  ${group.count} × ${group.cause}`);
      const rest = group.count - Math.min(5, group.count);
      lines.push(`      ${group.resources.slice(0, 5).join(", ")}${rest > 0 ? `, and ${rest} more` : ""}`);
    }
  }
  const notCurrent = Object.entries(report.clusters).filter(([, cluster]) => cluster.outcome !== "current");
  if (notCurrent.length > 0) {
    const width = Math.max("CLUSTER".length, ...notCurrent.slice(0, listed).map(([name]) => name.length));
    lines.push(`${"CLUSTER".padEnd(width)}  ${"DATA PLANE OPERATORS".padEnd(22)}  MSI (CONTROL PLANE, SERVICE)`);
    for (const [name, cluster] of notCurrent.slice(0, listed)) {
      lines.push(`${name.padEnd(width)}  ${outcomeWords[cluster.dataPlane.outcome].padEnd(22)}  ${outcomeWords[cluster.msi.outcome]}`);
    }
    if (notCurrent.length > listed) lines.push(`… and ${notCurrent.length - listed} more (every cluster is in the JSON report)`);
  }
  return lines;
}

/** The report for a terminal: verdict and counts, one line per cause with its clusters, and at most `listed` clusters not simply current. */
export function formatRunReport(report: RunReport, listed = 20): string {
  const failed = clusterCountText(failedClusterCount(report));
  const verdict = { ok: "OK", noRecords: "NO RECORDS (did ARO_HCP_RUN_RECORDS reach the provider?)", failed: `FAILED (${failed})` }[report.verdict];
  return [`Run report: ${verdict}; ${countsText(report)}`, ...reportDetailLines(report, listed)].join("\n");
}

/** Reads a records file (absent: no records), builds the report, writes it as JSON when asked. */
export function reportRun(recordsFile: string, jsonFile?: string): RunReport {
  const report = buildRunReport(existsSync(recordsFile) ? parseRunRecords(readFileSync(recordsFile, "utf8")) : []);
  if (jsonFile !== undefined) writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}
