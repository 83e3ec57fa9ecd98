import { describe, expect, it } from "vitest";
import type { EngineRun } from "../../../bench/performance/benchmarkStack";
import type { FleetScenarioResult } from "../../../bench/performance/fleetScenario";
import { medianRun, medianUpRun } from "../../../bench/performance/fleetScenario";
import type { FloorRun } from "../../../bench/performance/floors";
import { growthAfterStartUp, upCpuBudget } from "../../../bench/performance/scaleReport";
import type { BenchmarkResults } from "../../../bench/performance/report";

// Only what the functions under test read.
const run = (wallTimeInMs: number): EngineRun => ({ wallTimeInMs }) as EngineRun;
const size = (clusters: number, upInMs: number): FleetScenarioResult => ({ clusters, up: run(upInMs) }) as FleetScenarioResult;

describe("medianRun", () => {
  it("picks the run of median wall time, not the middle one in time", () => {
    const runs = [run(11_700), run(6_635), run(8_751)];
    expect(medianRun(runs)).toBe(runs[2]);
  });

  it("takes the upper middle of an even count, and refuses none", () => {
    expect(medianRun([run(4), run(1), run(3), run(2)]).wallTimeInMs).toBe(3);
    expect(() => medianRun([])).toThrow(RangeError);
  });
});

describe("medianUpRun", () => {
  const floor = (processWallTimeInMs: number): FloorRun => ({ processWallTimeInMs }) as FloorRun;

  it("picks the up whose ratio to its own plain-script run is the median, not the up of median time", () => {
    // Ratios 1.50, 1.40, 1.60; the up of median time (40 s) has the highest ratio.
    const runs = [
      { up: run(36_000), floor: floor(24_000) },
      { up: run(42_000), floor: floor(30_000) },
      { up: run(40_000), floor: floor(25_000) },
    ];
    expect(medianUpRun(runs)).toBe(runs[0]);
  });

  it("falls back to the up of median time without plain-script runs", () => {
    const runs = [{ up: run(3) }, { up: run(1) }, { up: run(2) }];
    expect(medianUpRun(runs)).toBe(runs[2]);
  });
});

describe("growthAfterStartUp", () => {
  const startUpInMs = 3_000;

  it("finds 1 for costs linear after the start-up, and 2 for quadratic ones", () => {
    const linear = [size(1, startUpInMs), ...[200, 500, 1000, 2000].map((clusters) => size(clusters, startUpInMs + 18 * clusters))];
    expect(growthAfterStartUp(linear)?.exponent).toBeCloseTo(1, 10);
    const quadratic = [size(1, startUpInMs), ...[200, 500, 1000, 2000].map((clusters) => size(clusters, startUpInMs + 0.01 * clusters ** 2))];
    expect(growthAfterStartUp(quadratic)?.exponent).toBeCloseTo(2, 10);
  });

  it("compares the smallest size of at least 200 clusters with the largest", () => {
    const measured = [size(1, 3651), size(50, 4000), size(200, 6635), size(500, 12_400), size(1000, 23_400), size(2000, 39_400)];
    const growth = growthAfterStartUp(measured)!;
    expect([growth.from, growth.to, growth.startUpInMs]).toEqual([200, 2000, 3651]);
    expect(growth.exponent).toBeCloseTo(Math.log10((39_400 - 3651) / (6635 - 3651)), 10);
  });

  it("is not measured without the one-cluster start-up or two sizes of at least 200", () => {
    expect(growthAfterStartUp([size(200, 6000), size(2000, 40_000)])).toBeUndefined();
    expect(growthAfterStartUp([size(1, 3000), size(2000, 40_000)])).toBeUndefined();
  });
});

describe("upCpuBudget", () => {
  const cpuRun = (wallTimeInMs: number, host: number, engine: number, bench: number): EngineRun =>
    ({ wallTimeInMs, host: { hostCpuTimeInMs: host, engineCpuTimeInMs: engine }, benchProcessCpuTimeInMs: bench }) as EngineRun;

  it("puts the engine floor's and the plain script's CPU over the cores, beside the plain script's wall time", () => {
    const measured = {
      clusters: 2000,
      up: cpuRun(40_000, 21_000, 10_000, 31_000),
      engineFloor: { up: cpuRun(21_000, 4_000, 8_000, 18_000) },
      floor: { processWallTimeInMs: 25_000, cpuTimeInMs: 12_000, sandboxCpuTimeInMs: 14_000 },
    } as unknown as FleetScenarioResult;
    const lines = upCpuBudget({ cores: 2, scaling: [size(200, 8000), measured] } as unknown as BenchmarkResults);
    const rows = lines.filter((line) => line.startsWith("| 2000 |"));
    expect(rows).toHaveLength(1);
    // Ours 62 s; engine floor 30 s + plain script 26 s = 56 s over 2 cores = 28 s = 1.12× the plain script's 25 s;
    // our wall 40 s against 31 s of CPU per core.
    expect(rows[0].split(" | ").slice(1)).toEqual(["21.0 s / 10.0 s / 31.0 s = 62.0 s", "30.0 s", "12.0 s + 14.0 s = 26.0 s", "28.0 s", "1.12×", "1.29× |"]);
  });

  it("says nothing without a size that has both floors", () => {
    expect(upCpuBudget({ cores: 2, scaling: [size(200, 8000)] } as unknown as BenchmarkResults)).toEqual([]);
  });
});
