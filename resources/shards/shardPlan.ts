/**
 * A region's shard plan: which shard (stack) holds each cluster, and the plan's identity.
 *
 * A cluster's shard is the first four bytes of the SHA-256 of its lowercased ARM ID, read big-endian,
 * modulo the shard count: the same rule the project's sharding example used, so shards
 * split by it keep their clusters. A cluster's shard depends on its own ID and the shard count only,
 * so adding or removing a cluster moves no other. The plan ID is a hash of the shard count and the
 * sorted lowercased IDs: two plans of the same clusters and count are the same plan, whatever the
 * order or casing of the region's file.
 */
import { createHash } from "node:crypto";

/** One cluster of a clusters file, as given: the plan reads its ID and copies every field through. */
export interface ClusterEntry {
  readonly clusterResourceId: string;
  readonly [field: string]: unknown;
}

/** A region's clusters split into shards. */
export interface ShardPlan<Cluster extends Pick<ClusterEntry, "clusterResourceId"> = ClusterEntry> {
  /** Hex; the same for the same shard count and set of cluster IDs (compared lowercased). */
  readonly planId: string;
  readonly shardCount: number;
  /** Index i holds shard i's clusters, in the region file's order; a shard may be empty. */
  readonly shards: readonly (readonly Cluster[])[];
}

/** Hex digits of the plan ID: 64 bits, enough to tell a region's plans apart, short enough to read in a message. */
const planIdLength = 16;

function checkShardCount(shardCount: number): void {
  if (!Number.isInteger(shardCount) || shardCount < 1) {
    throw new RangeError(`shard count must be a whole number of at least 1, got ${shardCount}`);
  }
}

/**
 * The shard of a cluster under a plan of `shardCount` shards.
 * @throws RangeError when `shardCount` is not a whole number of at least 1.
 */
export function shardIndexOf(clusterResourceId: string, shardCount: number): number {
  checkShardCount(shardCount);
  return createHash("sha256").update(clusterResourceId.toLowerCase()).digest().readUInt32BE(0) % shardCount;
}

/** The plan ID of a plan of these clusters in `shardCount` shards. */
export function shardPlanId(clusterResourceIds: readonly string[], shardCount: number): string {
  const sorted = clusterResourceIds.map((id) => id.toLowerCase()).sort();
  return createHash("sha256")
    .update([String(shardCount), ...sorted].join("\n"))
    .digest("hex")
    .slice(0, planIdLength);
}

/**
 * The most clusters a shard's stack should hold. docs/performance.md's "Growth" section measures
 * it: every size up to 5,000 keeps a drift check and an `up` under 5 minutes on 2 cores, none
 * keeps the provider host under 200 MB, and the CPU per cluster stays flat to 2,000 or 5,000 by
 * run. 2,000 is what the chart's pod memory is sized for (deploy/chart/values.yaml).
 */
export const defaultMaxShardClusters = 2000;

/**
 * The fewest shards whose largest holds at most `maxClusters` clusters, by this plan's hash (exact,
 * not an estimate of the hash's spread). The hash leaves the largest shard about two standard
 * deviations above the mean, so a few more shards than clusters ÷ `maxClusters` do; past twice that,
 * the limit is too small for a hash to meet and the search stops.
 * @throws RangeError when `maxClusters` is not a whole number of at least 1, or no count up to twice
 *   the even split keeps every shard within it.
 */
export function fewestShardsWithin(clusterResourceIds: readonly string[], maxClusters: number): number {
  if (!Number.isInteger(maxClusters) || maxClusters < 1) {
    throw new RangeError(`the most clusters a shard may hold must be a whole number of at least 1, got ${maxClusters}`);
  }
  const hashes = clusterResourceIds.map((id) => createHash("sha256").update(id.toLowerCase()).digest().readUInt32BE(0));
  const evenSplit = Math.max(1, Math.ceil(hashes.length / maxClusters));
  for (let shardCount = evenSplit; shardCount <= 2 * evenSplit; shardCount += 1) {
    const sizes = new Array<number>(shardCount).fill(0);
    for (const hash of hashes) sizes[hash % shardCount] += 1;
    if (Math.max(...sizes) <= maxClusters) return shardCount;
  }
  throw new RangeError(
    `no plan of ${evenSplit} to ${2 * evenSplit} shards keeps each of ${hashes.length} clusters' shards within ${maxClusters}: the hash spreads clusters too unevenly for so few per shard; allow more per shard`,
  );
}

/**
 * Splits a region's clusters into `shardCount` shards.
 * @throws RangeError when `shardCount` is not a whole number of at least 1.
 */
export function planShards<Cluster extends Pick<ClusterEntry, "clusterResourceId">>(clusters: readonly Cluster[], shardCount: number): ShardPlan<Cluster> {
  checkShardCount(shardCount);
  const shards: Cluster[][] = Array.from({ length: shardCount }, () => []);
  for (const cluster of clusters) shards[shardIndexOf(cluster.clusterResourceId, shardCount)].push(cluster);
  return {
    planId: shardPlanId(
      clusters.map((cluster) => cluster.clusterResourceId),
      shardCount,
    ),
    shardCount,
    shards,
  };
}

/**
 * Reads a region's clusters file (a JSON list, the shape of the stack's `clustersFile`) as far as a
 * plan needs: each item an object with a string `clusterResourceId`, no cluster twice. The other
 * fields are the program's to check when a shard's stack reads its file (program/fleet.ts).
 * @param source names the file in messages.
 * @throws TypeError naming the item and field that is wrong, or the two items of a duplicated cluster.
 */
export function parseRegionClusters(value: unknown, source: string): ClusterEntry[] {
  if (!Array.isArray(value)) throw new TypeError(`${source} must be a JSON list of clusters ({clusterResourceId, …}), the format of clustersFile`);
  const seen = new Map<string, number>();
  return value.map((item: unknown, index): ClusterEntry => {
    const where = `${source}[${index}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new TypeError(`${where} must be an object with clusterResourceId`);
    const clusterResourceId = (item as Record<string, unknown>).clusterResourceId;
    if (typeof clusterResourceId !== "string" || clusterResourceId.length === 0) {
      throw new TypeError(`${where}.clusterResourceId must be a non-empty string (the cluster's ARM ID)`);
    }
    const earlier = seen.get(clusterResourceId.toLowerCase());
    if (earlier !== undefined) {
      throw new TypeError(
        `${where}.clusterResourceId ${clusterResourceId} is the cluster of ${source}[${earlier}] (IDs compare lowercased): list each cluster once`,
      );
    }
    seen.set(clusterResourceId.toLowerCase(), index);
    return item as ClusterEntry;
  });
}
