import { describe, expect, it } from "vitest";
import type { EngineRun } from "../../../bench/performance/benchmarkStack";
import type { FloorRun } from "../../../bench/performance/floors";
import type { RunCost } from "../../../bench/performance/runCost";
import { engineRunCost, medianCpuPerCluster, pairsOf, plainScriptCost, totalCpuInMs } from "../../../bench/performance/runCost";

const cost = (wallTimeInMs: number, cpuTimeInMs: number): RunCost => ({ wallTimeInMs, processes: [{ process: "worker", cpuTimeInMs }] });

describe("engineRunCost", () => {
  it("counts the provider host, the engine, the program and the sandbox when it was measured", () => {
    const run = { wallTimeInMs: 9000, host: { hostCpuTimeInMs: 4000, engineCpuTimeInMs: 2000 }, benchProcessCpuTimeInMs: 1000 } as EngineRun;
    expect(totalCpuInMs(engineRunCost({ ...run, sandboxCpuTimeInMs: 500 }))).toBe(7500);
    expect(engineRunCost(run).processes.map((process) => process.process)).toEqual(["provider host", "engine", "program"]);
  });
});

describe("plainScriptCost", () => {
  it("counts the worker's whole process and the sandbox answering it", () => {
    const floor = { processWallTimeInMs: 6000, cpuTimeInMs: 3000, sandboxCpuTimeInMs: 1200 } as FloorRun;
    expect(plainScriptCost(floor)).toEqual({
      wallTimeInMs: 6000,
      processes: [
        { process: "worker", cpuTimeInMs: 3000 },
        { process: "sandbox", cpuTimeInMs: 1200 },
      ],
    });
  });
});

describe("pairsOf", () => {
  it("takes each ratio within its own pair, and shows the pair whose ratio is the median", () => {
    // Wall ratios 1.5, 1.2, 1.3: the median pair is the third, though the second has the median time of ours.
    const ours = [cost(15, 30), cost(12, 20), cost(13, 33)];
    const floors = [cost(10, 20), cost(10, 20), cost(10, 30)];
    const pairs = pairsOf(ours, floors);
    expect(pairs.wallRatio.median).toBeCloseTo(1.3, 12);
    expect(pairs.wallRatio.lowerQuartile).toBeCloseTo(1.25, 12);
    expect(pairs.wallRatio.upperQuartile).toBeCloseTo(1.4, 12);
    expect(pairs.cpuRatio.median).toBeCloseTo(1.1, 12);
    expect(pairs.medianPair).toEqual({ ours: ours[2], floor: floors[2] });
  });
});

describe("medianCpuPerCluster", () => {
  it("takes each process's median over the runs, per cluster", () => {
    const runs: RunCost[] = [1000, 3000, 2000].map((host) => ({
      wallTimeInMs: 0,
      processes: [
        { process: "provider host", cpuTimeInMs: host },
        { process: "engine", cpuTimeInMs: host / 2 },
      ],
    }));
    expect(medianCpuPerCluster(runs, 100)).toEqual([
      { process: "provider host", cpuTimeInMs: 20 },
      { process: "engine", cpuTimeInMs: 10 },
    ]);
  });
});
