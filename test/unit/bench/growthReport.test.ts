import { describe, expect, it } from "vitest";
import type { GrowthFits, GrowthPoint } from "../../../bench/performance/growthReport";
import { growthFit, growthFits, growthModel, largestWithin, predictRegion, shardSize, shardsFor } from "../../../bench/performance/growthReport";
import { largestShard } from "../../../bench/performance/shardModel";

/** A stack whose every measure is a + b·n, exactly. */
function point(clusters: number): GrowthPoint {
  return {
    clusters,
    upInMs: 5000 + 17 * clusters,
    plainScriptInMs: 4000 + 14 * clusters,
    upCpuInMs: 4000 + 26 * clusters,
    noOpUpInMs: 3000 + 4 * clusters,
    noOpFloorInMs: 3000 + 3 * clusters,
    refreshInMs: 2500 + 2.5 * clusters,
    refreshFloorInMs: 2500 + 1.5 * clusters,
    driftCheckInMs: 5500 + 6.5 * clusters,
    driftCheckCpuInMs: 8000 + 10 * clusters,
    hostPeakBytes: 150 * 2 ** 20 + 30 * 1024 * clusters,
    checkpointBytes: 4096 * clusters,
    checkpointWriteInMs: 400 + 0.2 * clusters,
  };
}

const points = [1000, 2000, 5000, 10_000].map(point);

describe("the growth block's arithmetic", () => {
  it("fits each measure's line and its log-log exponent", () => {
    const fits = growthFits(points);
    expect(fits.up.intercept).toBeCloseTo(5000, 6);
    expect(fits.up.slope).toBeCloseTo(17, 9);
    expect(fits.up.rSquared).toBeCloseTo(1, 12);
    // Pure proportion grows with exponent 1; a large fixed part makes it smaller.
    expect(fits.checkpointBytes.exponent).toBeCloseTo(1, 9);
    expect(fits.checkpointWrite.exponent).toBeLessThan(1);
    // Quadratic growth shows as exponent 2.
    expect(growthFit([100, 200, 400].map((n) => [n, n * n] as const)).exponent).toBeCloseTo(2, 9);
  });

  it("finds the largest stack within a limit by a line, and none when its intercept is already over", () => {
    expect(largestWithin({ intercept: 5500, slope: 6.5, rSquared: 1 }, 300_000)).toBe(45_307);
    expect(largestWithin({ intercept: 250 * 2 ** 20, slope: 1, rSquared: 1 }, 200 * 2 ** 20)).toBe(0);
    expect(largestWithin({ intercept: 10, slope: 0, rSquared: 1 }, 20)).toBe(Number.POSITIVE_INFINITY);
  });

  it("takes the shard size from the tighter limit, rounded down to a hundred, and says which bound it", () => {
    const fits = growthFits(points);
    const size = shardSize(fits);
    // Memory: (200 - 150) MB / 30 KB = 1706 clusters; the drift check allows 45,307.
    expect(size).toEqual({ clusters: 1700, byDriftCheck: 45_307, byHostPeak: 1706, boundBy: "host memory" });
    const roomy: GrowthFits = { ...fits, hostPeak: { ...fits.hostPeak, slope: 1 } };
    expect(shardSize(roomy).boundBy).toBe("drift check");
    expect(shardSize(roomy).clusters).toBe(45_300);
  });

  it("plans enough shards that the largest of a hash spread fits the size", () => {
    const shards = shardsFor(10_000, 1700);
    expect(largestShard(10_000, shards)).toBeLessThanOrEqual(1700);
    expect(largestShard(10_000, shards - 1)).toBeGreaterThan(1700);
    expect(shardsFor(100, 1000)).toBe(1);
    expect(() => shardsFor(100, 0)).toThrow(/at least one cluster/);
  });

  it("predicts the region's adoption with one more start-up per shard than an up, and its drift check from the drift fits", () => {
    const refreshCpu = points.map((each) => 4000 + 2 * each.clusters);
    const model = growthModel(points, refreshCpu, 3000);
    const region = predictRegion(model, 10_000, 7, 2);
    expect(region.adoption.largestShard).toBe(largestShard(10_000, 7));
    // Wall alone: a of up + a of refresh + b of up × the largest shard.
    expect(region.adoption.separateMachinesInMs).toBeCloseTo(5000 + 2500 + 17 * region.adoption.largestShard, 6);
    // CPU: per shard two start-ups (the refresh's and the up's), plus the up's CPU per cluster over the whole region.
    const upCpuPerCluster = (points[3].upCpuInMs - 3000) / 10_000;
    expect(region.adoption.cpuInMs).toBeCloseTo(7 * (3000 + 3000) + upCpuPerCluster * 10_000, 6);
    expect(region.adoption.oneMachineInMs).toBe(Math.max(region.adoption.separateMachinesInMs, region.adoption.cpuInMs / 2));
    expect(region.driftCheck.separateMachinesInMs).toBeCloseTo(5500 + 6.5 * region.driftCheck.largestShard, 6);
    expect(region.driftCheck.stateBytesTotal).toBe(4096 * 10_000);
  });
});
