/**
 * Which clusters a shard's run accounts for, against the clusters its plan gives it: the region's
 * verdict (regionReport.ts) fails a shard whose records leave a cluster of its clusters file
 * unaccounted for, or account for a cluster the plan gives another shard or none.
 */
import type { RunRecord } from "./runRecordFormat";
import { clusterNameOfId } from "./runRecordFormat";
import { clusterCountText } from "./runReport";

/**
 * Whether a record shows the update reached its cluster, so the run accounts for it: a create or an
 * update (its pass ran, whatever its outcome), a check that refused it, or the update's diff that found it
 * current (nothing to do). Not a refresh's read or diff (the update may not have run; a refresh also
 * reads the clusters the stack is letting go of), a preview, or a diff that found work (its update may
 * not have run).
 */
export function accountsForCluster(record: Pick<RunRecord, "operation" | "dataPlane" | "msi" | "duringRefresh">): boolean {
  switch (record.operation) {
    case "create":
    case "update":
    case "check":
      return true;
    case "diff":
      return record.duringRefresh !== true && record.dataPlane === "current" && record.msi === "current";
    case "read":
    case "preview":
      return false;
  }
}

/** What a shard's records account for, against its plan. */
export interface ShardCoverage {
  /** The clusters its plan gives it that its records do not account for, by name. */
  readonly unaccounted: readonly string[];
  /** The clusters its records account for that the plan does not give it, by name, with the shard the plan gives each (none: in no shard). */
  readonly notPlanned: readonly { readonly name: string; readonly planShard?: number }[];
}

/** A cluster ID as the plan compares it. */
const key = (clusterResourceId: string): string => clusterResourceId.toLowerCase();

/** Shard `index`'s coverage: `plannedClusters` are the cluster IDs the plan gives each shard, `records` the shard's records of the run. */
export function shardCoverage(index: number, plannedClusters: readonly (readonly string[])[], records: readonly RunRecord[]): ShardCoverage {
  const planShards = new Map(plannedClusters.flatMap((ids, shard) => ids.map((id): [string, number] => [key(id), shard])));
  const accounted = new Map(records.filter(accountsForCluster).map((record): [string, string] => [key(record.clusterResourceId), record.cluster]));
  return {
    unaccounted: (plannedClusters[index] ?? []).filter((id) => !accounted.has(key(id))).map(clusterNameOfId),
    notPlanned: [...accounted]
      .filter(([id]) => planShards.get(id) !== index)
      .map(([id, name]) => {
        const planShard = planShards.get(id);
        return planShard === undefined ? { name } : { name, planShard };
      }),
  };
}

/** At most this many clusters are named in one problem's line; the JSON's shards list all of them. */
const namedInProblem = 5;

function someOf(names: readonly string[]): string {
  const rest = names.length - Math.min(namedInProblem, names.length);
  return `${names.slice(0, namedInProblem).join(", ")}${rest > 0 ? `, and ${rest} more` : ""}`;
}

/** The problems of a shard that reported, naming it and the clusters: those left unaccounted for, those it ran that are not its own. */
export function coverageProblems(shard: { readonly index: number; readonly clustersFile: string }, planned: number, coverage: ShardCoverage): string[] {
  const problems: string[] = [];
  const { unaccounted, notPlanned } = coverage;
  if (unaccounted.length > 0) {
    problems.push(
      `shard ${shard.index} (${shard.clustersFile}) left ${unaccounted.length} of its ${clusterCountText(planned)} unaccounted for (its run stopped part-way, or its program declared fewer): ${someOf(unaccounted)}`,
    );
  }
  if (notPlanned.length > 0) {
    const named = notPlanned.map(({ name, planShard }) => `${name} (${planShard === undefined ? "in no shard of the plan" : `shard ${planShard}'s`})`);
    problems.push(`shard ${shard.index} (${shard.clustersFile}) ran ${clusterCountText(notPlanned.length)} the plan does not give it: ${someOf(named)}`);
  }
  return problems;
}
