import type * as automation from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import type { Shard } from "../../examples/sharding/runShards";
import { runShards, shardConfig, splitIntoShards } from "../../examples/sharding/runShards";

const clusterIds = Array.from(
  { length: 40 },
  (_, index) =>
    `/subscriptions/00000000-0000-0000-0000-00000000000${index % 10}/resourceGroups/rg-${index}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${index}`,
);
const clusters = clusterIds.map((clusterResourceId) => ({ clusterResourceId }));

function shardOf(shards: readonly Shard[], clusterResourceId: string): string | undefined {
  return shards.find((shard) => shard.clusters.some((cluster) => cluster.clusterResourceId === clusterResourceId))?.stackName;
}

describe("splitIntoShards", () => {
  it("puts every cluster in exactly one of N named stacks", () => {
    const shards = splitIntoShards(clusters, 4, "fleet");
    expect(shards.map((shard) => shard.stackName)).toEqual(["fleet-0", "fleet-1", "fleet-2", "fleet-3"]);
    expect(shards.flatMap((shard) => shard.clusters.map((cluster) => cluster.clusterResourceId)).sort()).toEqual([...clusterIds].sort());
    expect(shards.every((shard) => shard.clusters.length > 0)).toBe(true);
  });

  it("keeps a cluster in its stack when others are added or removed, whatever the casing", () => {
    const before = splitIntoShards(clusters, 4, "fleet");
    const after = splitIntoShards(
      [...clusters.slice(5), { clusterResourceId: "/subscriptions/x/resourceGroups/new/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/new" }],
      4,
      "fleet",
    );
    for (const id of clusterIds.slice(5)) expect(shardOf(after, id)).toBe(shardOf(before, id));
    expect(shardOf(splitIntoShards([{ clusterResourceId: clusterIds[7].toUpperCase() }], 4, "fleet"), clusterIds[7].toUpperCase())).toBe(
      shardOf(before, clusterIds[7]),
    );
  });

  it("refuses a shard count below 1", () => {
    expect(() => splitIntoShards(clusters, 0, "fleet")).toThrow("shard count must be a whole number of at least 1, got 0");
  });
});

describe("shardConfig", () => {
  it("allows an empty fleet only for an empty shard of a non-empty fleet, so an empty fleet file deletes nothing", () => {
    const [shard] = splitIntoShards(clusters.slice(0, 1), 1, "fleet");
    expect(shardConfig(shard, 1)).toEqual({ clusters: JSON.stringify(clusters.slice(0, 1)), allowEmptyFleet: "false" });
    expect(shardConfig({ stackName: "fleet-1", clusters: [] }, 1)).toEqual({ clusters: "[]", allowEmptyFleet: "true" });
    expect(shardConfig({ stackName: "fleet-0", clusters: [] }, 0)).toEqual({ clusters: "[]", allowEmptyFleet: "false" });
  });

  it("allows more removals than an update may make without saying so only when asked (the run after a change of the shard count)", () => {
    const [shard] = splitIntoShards(clusters.slice(0, 1), 1, "fleet");
    expect(shardConfig(shard, 1, true)).toEqual({ clusters: JSON.stringify(clusters.slice(0, 1)), allowEmptyFleet: "false", allowClusterRemovals: "true" });
  });
});

describe("runShards", () => {
  it("runs every shard with at most `concurrency` at once and reports each outcome, failures included", async () => {
    let running = 0;
    let peak = 0;
    const shards = splitIntoShards(clusters, 5, "fleet");
    const outcomes = await runShards({
      shards,
      concurrency: 2,
      operation: "up",
      openShard: (shard) =>
        Promise.resolve({
          up: async () => {
            running += 1;
            peak = Math.max(peak, running);
            await new Promise((resolve) => setImmediate(resolve));
            running -= 1;
            if (shard.stackName === "fleet-3") throw new Error("engine failed for fleet-3");
            return { summary: { resourceChanges: { create: shard.clusters.length } } };
          },
        } as unknown as automation.Stack),
    });
    expect(peak).toBe(2);
    expect(outcomes.map((outcome) => outcome.stackName)).toEqual(shards.map((shard) => shard.stackName));
    expect(outcomes.find((outcome) => outcome.stackName === "fleet-3")).toMatchObject({ succeeded: false, summary: "engine failed for fleet-3" });
    expect(outcomes.filter((outcome) => outcome.succeeded).map((outcome) => outcome.summary)).toEqual(
      shards.filter((shard) => shard.stackName !== "fleet-3").map((shard) => ({ create: shard.clusters.length })),
    );
  });
});
