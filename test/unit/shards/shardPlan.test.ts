/**
 * The shard plan (resources/shards/shardPlan.ts): which shard holds each cluster, and the plan's identity.
 */
import { describe, expect, it } from "vitest";
import type { ClusterEntry, ShardPlan } from "../../../resources/shards/shardPlan";
import { parseRegionClusters, planShards, shardIndexOf, shardPlanId } from "../../../resources/shards/shardPlan";

const clusterId = (name: string, subscription = 1): string =>
  `/subscriptions/00000000-0000-0000-0000-00000000000${subscription}/resourceGroups/rg-${name}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${name}`;

const region: ClusterEntry[] = Array.from({ length: 200 }, (_, index) => ({ clusterResourceId: clusterId(String(index), index % 7) }));

/** Each cluster's shard index, keyed by its ID. */
function shardsOf(plan: ShardPlan): Map<string, number> {
  return new Map(plan.shards.flatMap((shard, index) => shard.map((cluster): [string, number] => [cluster.clusterResourceId, index])));
}

describe("shardIndexOf", () => {
  it.each([
    // Pinned from the sharding example's rule (examples/sharding/runShards.ts, retired) as it split stacks before the plan existed: a
    // change of the hash would move every cluster of every region.
    ["a", 1, [1, 6, 3]],
    ["b", 2, [1, 3, 3]],
    ["c", 3, [2, 0, 4]],
  ])("puts cluster %s in the shard the sharding example has always put it in, for 4, 7 and 10 shards", (name, subscription, expected) => {
    expect([4, 7, 10].map((count) => shardIndexOf(clusterId(name, subscription), count))).toEqual(expected);
  });

  it("reads the ID lowercased: any casing of a cluster's ID gives its shard", () => {
    for (const { clusterResourceId } of region.slice(0, 20)) {
      expect(shardIndexOf(clusterResourceId.toUpperCase(), 9)).toBe(shardIndexOf(clusterResourceId, 9));
    }
  });

  it.each([0, -1, 2.5, Number.NaN])("refuses a shard count of %s", (count) => {
    expect(() => shardIndexOf(clusterId("a"), count)).toThrow(new RangeError(`shard count must be a whole number of at least 1, got ${count}`));
  });
});

describe("planShards", () => {
  it("puts every cluster in exactly one shard, keeping each shard in the region file's order", () => {
    const plan = planShards(region, 8);
    expect(plan.shards).toHaveLength(8);
    expect(
      plan.shards
        .flat()
        .map((cluster) => cluster.clusterResourceId)
        .sort(),
    ).toEqual(region.map((cluster) => cluster.clusterResourceId).sort());
    for (const shard of plan.shards) {
      const positions = shard.map((cluster) => region.indexOf(cluster));
      expect(positions).toEqual([...positions].sort((left, right) => left - right));
    }
    // 200 clusters over 8 shards: none empty, none far off 25.
    expect(Math.min(...plan.shards.map((shard) => shard.length))).toBeGreaterThan(10);
  });

  it("copies each cluster's other fields through as given", () => {
    const cluster = { clusterResourceId: clusterId("x"), dataPlaneOperators: { "disk-csi-driver": "/subscriptions/…/identity" }, futureField: [1] };
    expect(planShards([cluster], 3).shards.flat()).toEqual([cluster]);
  });

  it("gives the same plan, ID and shards, whatever the order and casing of the region's file", () => {
    const plan = planShards(region, 8);
    const shuffled = [...region]
      .reverse()
      .map((cluster, index) => (index % 2 === 0 ? { clusterResourceId: cluster.clusterResourceId.toUpperCase() } : cluster));
    const again = planShards(shuffled, 8);
    expect(again.planId).toBe(plan.planId);
    expect(again.planId).toMatch(/^[0-9a-f]{16}$/);
    const lowered = (shard: readonly ClusterEntry[]): string[] => shard.map((cluster) => cluster.clusterResourceId.toLowerCase()).sort();
    expect(again.shards.map(lowered)).toEqual(plan.shards.map(lowered));
  });

  it("moves no other cluster when clusters are added or removed, and gives the new set a new plan ID", () => {
    const before = planShards(region, 8);
    const kept = region.filter((_, index) => index % 10 !== 0);
    const added = [clusterId("new-1"), clusterId("new-2"), clusterId("new-3")].map((clusterResourceId) => ({ clusterResourceId }));
    const after = planShards([...kept, ...added], 8);
    const beforeShards = shardsOf(before);
    const afterShards = shardsOf(after);
    for (const { clusterResourceId } of kept) expect(afterShards.get(clusterResourceId), clusterResourceId).toBe(beforeShards.get(clusterResourceId));
    expect(after.planId).not.toBe(before.planId);
  });

  it("moves clusters when the shard count changes, each to its shard under the new count, under a new plan ID", () => {
    const eight = planShards(region, 8);
    const twelve = planShards(region, 12);
    expect(twelve.planId).not.toBe(eight.planId);
    const before = shardsOf(eight);
    const after = shardsOf(twelve);
    for (const { clusterResourceId } of region) expect(after.get(clusterResourceId)).toBe(shardIndexOf(clusterResourceId, 12));
    const moved = region.filter(({ clusterResourceId }) => after.get(clusterResourceId) !== before.get(clusterResourceId));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThan(region.length);
  });
});

describe("shardPlanId", () => {
  it("differs for another shard count or another set of clusters, and not for another order or casing", () => {
    const ids = region.map((cluster) => cluster.clusterResourceId);
    const id = shardPlanId(ids, 4);
    expect(shardPlanId([...ids].reverse(), 4)).toBe(id);
    expect(
      shardPlanId(
        ids.map((item) => item.toUpperCase()),
        4,
      ),
    ).toBe(id);
    expect(shardPlanId(ids, 5)).not.toBe(id);
    expect(shardPlanId(ids.slice(1), 4)).not.toBe(id);
  });
});

describe("parseRegionClusters", () => {
  it("returns the clusters as given", () => {
    const value = [{ clusterResourceId: clusterId("a"), serviceManagedIdentity: "x" }, { clusterResourceId: clusterId("b") }];
    expect(parseRegionClusters(value, "region.json")).toEqual(value);
  });

  it.each([
    ["not a list", { clusters: [] }, "region.json must be a JSON list of clusters ({clusterResourceId, …}), the format of clustersFile"],
    ["an item that is not an object", [{ clusterResourceId: clusterId("a") }, "b"], "region.json[1] must be an object with clusterResourceId"],
    ["an item without an ID", [{ name: "a" }], "region.json[0].clusterResourceId must be a non-empty string (the cluster's ARM ID)"],
    ["an empty ID", [{ clusterResourceId: "" }], "region.json[0].clusterResourceId must be a non-empty string (the cluster's ARM ID)"],
    [
      "a cluster twice, in another casing",
      [{ clusterResourceId: clusterId("a") }, { clusterResourceId: clusterId("b") }, { clusterResourceId: clusterId("a").toUpperCase() }],
      `region.json[2].clusterResourceId ${clusterId("a").toUpperCase()} is the cluster of region.json[0] (IDs compare lowercased): list each cluster once`,
    ],
  ])("refuses %s, naming the item and field", (_, value, message) => {
    expect(() => parseRegionClusters(value, "region.json")).toThrow(new TypeError(message));
  });
});
