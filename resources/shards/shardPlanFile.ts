/**
 * The plan file (`shard-plan.json`), written beside the shards' clusters files: the plan's identity
 * and each shard's file and size. The run report reads it to judge a region's run (report/regionReport.ts);
 * a shard's runner reads it for the plan ID its run records carry (`ARO_HCP_SHARD_PLAN`).
 *
 * ```json
 * { "schemaVersion": 1, "planId": "3f9ac1d2e4b5a6c7", "shardCount": 2, "clusters": 5,
 *   "shards": [{ "index": 0, "clustersFile": "shard-0.json", "clusters": 3 },
 *              { "index": 1, "clustersFile": "shard-1.json", "clusters": 2 }] }
 * ```
 */
import { withCause } from "../core/errors";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ShardPlan } from "./shardPlan";

/** The plan file's name, in the directory of the shards' files. */
export const shardPlanFileName = "shard-plan.json";

/** The clusters file of shard `index` (the format of the stack's `clustersFile`), beside the plan file. */
export function shardClustersFileName(index: number): string {
  return `shard-${index}.json`;
}

/** One shard as the plan file lists it. */
export interface PlannedShard {
  readonly index: number;
  /** Relative to the plan file's directory. */
  readonly clustersFile: string;
  /** How many clusters the shard holds; 0 for an empty shard, which has nothing to report. */
  readonly clusters: number;
}

/** What the plan file holds. */
export interface ShardPlanFile {
  readonly schemaVersion: 1;
  readonly planId: string;
  readonly shardCount: number;
  /** The region's clusters, all shards together. */
  readonly clusters: number;
  readonly shards: readonly PlannedShard[];
}

/** The plan file of a plan. */
export function shardPlanFileOf(plan: ShardPlan): ShardPlanFile {
  return {
    schemaVersion: 1,
    planId: plan.planId,
    shardCount: plan.shardCount,
    clusters: plan.shards.reduce((sum, shard) => sum + shard.length, 0),
    shards: plan.shards.map((shard, index) => ({ index, clustersFile: shardClustersFileName(index), clusters: shard.length })),
  };
}

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;

/**
 * Checks a parsed plan file.
 * @param source names the file in messages.
 * @throws TypeError naming the field that is wrong and what it must be.
 */
export function parseShardPlanFile(value: unknown, source: string): ShardPlanFile {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeError(`${source} must be a JSON object (a shard plan file)`);
  const plan = value as Record<string, unknown>;
  const wrong = (field: string, expected: string, actual: unknown): TypeError =>
    new TypeError(`${source}: ${field} must be ${expected}, got ${JSON.stringify(actual) ?? "nothing"}`);
  if (plan.schemaVersion !== 1) throw wrong("schemaVersion", "1", plan.schemaVersion);
  if (typeof plan.planId !== "string" || plan.planId.length === 0) throw wrong("planId", "a non-empty string", plan.planId);
  if (!isCount(plan.shardCount) || plan.shardCount < 1) throw wrong("shardCount", "a whole number of at least 1", plan.shardCount);
  if (!isCount(plan.clusters)) throw wrong("clusters", "a whole number", plan.clusters);
  const shardCount = plan.shardCount;
  if (!Array.isArray(plan.shards) || plan.shards.length !== shardCount) throw wrong("shards", `a list of ${shardCount} shards (shardCount)`, plan.shards);
  const shards = plan.shards.map((item: unknown, index): PlannedShard => {
    const shard = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
    if (shard.index !== index) throw wrong(`shards[${index}].index`, String(index), shard.index);
    if (typeof shard.clustersFile !== "string" || shard.clustersFile.length === 0) {
      throw wrong(`shards[${index}].clustersFile`, "a file name", shard.clustersFile);
    }
    if (!isCount(shard.clusters)) throw wrong(`shards[${index}].clusters`, "a whole number", shard.clusters);
    return { index, clustersFile: shard.clustersFile, clusters: shard.clusters };
  });
  const sum = shards.reduce((total, shard) => total + shard.clusters, 0);
  if (sum !== plan.clusters) throw wrong("clusters", `the sum of the shards' clusters (${sum})`, plan.clusters);
  return { schemaVersion: 1, planId: plan.planId, shardCount, clusters: plan.clusters, shards };
}

/**
 * Reads and checks a plan file.
 * @throws Error naming the file when it does not exist or is not JSON; TypeError as {@link parseShardPlanFile}.
 */
export function readShardPlanFile(file: string): ShardPlanFile {
  if (!existsSync(file)) throw new Error(`shard plan file ${file} does not exist (aro-hcp-shard-plan writes it)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw withCause(new Error(`shard plan file ${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`), error);
  }
  return parseShardPlanFile(parsed, file);
}

/**
 * The cluster IDs the plan gives each shard, as its clusters file beside the plan file lists them
 * (the file each shard's stack reads): the region's verdict checks each shard's records against them.
 * @throws Error naming a shard's file that does not exist, is not a list of `{clusterResourceId}`, or
 * lists another number of clusters than the plan file says (a plan directory mixing two plans).
 */
export function readShardClusterIds(planFile: string, plan: ShardPlanFile): string[][] {
  return plan.shards.map((shard) => {
    const file = join(dirname(planFile), shard.clustersFile);
    if (!existsSync(file))
      throw new Error(
        `${file} does not exist: shard ${shard.index} of plan ${plan.planId} lists its clusters there (aro-hcp-shard-plan writes it beside ${planFile})`,
      );
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw withCause(new Error(`${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`), error);
    }
    const ids = Array.isArray(parsed)
      ? parsed.map((item: unknown) => (typeof item === "object" && item !== null ? (item as Record<string, unknown>).clusterResourceId : undefined))
      : [];
    if (!Array.isArray(parsed) || ids.some((id) => typeof id !== "string" || id.length === 0)) {
      throw new TypeError(`${file} must be a list of clusters, each with a clusterResourceId (shard ${shard.index}'s clusters file)`);
    }
    if (ids.length !== shard.clusters) {
      throw new Error(
        `${file} lists ${ids.length} cluster(s); ${planFile} says shard ${shard.index} has ${shard.clusters}: the files are not of one plan (write them with one aro-hcp-shard-plan)`,
      );
    }
    return ids as string[];
  });
}
