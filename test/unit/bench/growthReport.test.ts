import { describe, expect, it } from "vitest";
import type { GrowthPoint } from "../../../bench/performance/growthReport";
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

/** A growth block's row: clusters, `up` wall and CPU, drift check wall (ms), host peak (MB). */
type MeasuredRow = [number, number, number, number, number];

/** The points a growth block's rows give, as measured. */
function measuredPoints(rows: readonly MeasuredRow[]): GrowthPoint[] {
  return rows.map(([clusters, upInMs, upCpuInMs, driftCheckInMs, peakMegabytes]) => ({
    ...point(clusters),
    upInMs,
    upCpuInMs,
    driftCheckInMs,
    hostPeakBytes: peakMegabytes * 2 ** 20,
  }));
}

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

  it("takes the shard size from the tightest bound that some size meets, rounded down to a hundred, and says which bound it", () => {
    // Memory: (200 - 150) MB / 30 KB = 1706 clusters; the drift check allows 45,307, the up (5000 + 17 n) 17,352.
    expect(shardSize(points)).toEqual({
      clusters: 1700,
      byDriftCheck: 45_307,
      byUp: 17_352,
      byHostPeak: 1706,
      byCostPerCluster: 10_000,
      boundBy: "host memory",
    });
    // A host over the target at every size bounds nothing: the time and cost bounds choose.
    const heavyHost = points.map((each) => ({ ...each, hostPeakBytes: each.hostPeakBytes + 100 * 2 ** 20 }));
    expect(shardSize(heavyHost)).toMatchObject({ byHostPeak: 0, clusters: 10_000, boundBy: "cost per cluster" });
  });

  it("gives 2,000 clusters from the growth block of 2026-12-07 01:30: the up's CPU per cluster rises past it, and the host is over 200 MB at every size", () => {
    // docs/performance.md, "Growth": up wall and CPU, drift check wall, host peak, as measured.
    const measured: MeasuredRow[] = [
      [1000, 18_600, 26_930, 8555, 214.2],
      [2000, 37_100, 55_540, 13_500, 235.4],
      [5000, 99_200, 143_300, 28_900, 286.4],
      [10_000, 268_500, 375_200, 60_600, 350.7],
    ];
    const growth = measuredPoints(measured);
    const size = shardSize(growth);
    expect(size).toMatchObject({ clusters: 2000, boundBy: "cost per cluster", byCostPerCluster: 2000, byHostPeak: 0 });
    expect(size.byDriftCheck).toBeGreaterThan(50_000);
    expect(size.byUp).toBeGreaterThan(10_000);
  });

  it("gives 5,000 clusters from the growth block of 2026-12-07 03:21, where the CPU per cluster was flat to 5,000: the cost bound is within run-to-run noise, which is why the plan's default stays 2,000", () => {
    const measured: MeasuredRow[] = [
      [1000, 29_000, 44_450, 12_800, 213.4],
      [2000, 59_600, 90_220, 20_000, 230.9],
      [5000, 147_100, 219_700, 39_400, 290.3],
      [10_000, 328_200, 471_200, 72_700, 347.3],
    ];
    const growth = measuredPoints(measured);
    expect(shardSize(growth)).toMatchObject({ clusters: 5000, boundBy: "cost per cluster", byCostPerCluster: 5000, byHostPeak: 0 });
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
