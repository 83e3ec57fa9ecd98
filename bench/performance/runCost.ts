/**
 * What one run cost, its wall time and the CPU time of every process that took part, and pairs of
 * runs set side by side: each run of ours against the floor run made right before or after it.
 *
 * Why pairs: the machine is shared, and its load moves both sides of a pair alike, so the ratio
 * within a pair is steadier than the ratio of two medians taken apart. The median and
 * interquartile range of the per-pair ratios then say where the ratio sits and how far the
 * machine moved it. CPU beside wall time: on a loaded machine a process waits for a core, which
 * lengthens its wall time but not its CPU time.
 */
import type { EngineRun } from "./benchmarkStack";
import type { FloorRun } from "./floors";
import type { Spread } from "./statistics";
import { median, medianBy, pairRatios, spread } from "./statistics";

/** CPU time of one process of a run. */
export interface ProcessCpu {
  /** `provider host`, `engine`, `program`, `sandbox`; the plain script's `worker`. */
  readonly process: string;
  readonly cpuTimeInMs: number;
}

/** One run: its wall time and the CPU of each of its processes, in a fixed order. */
export interface RunCost {
  readonly wallTimeInMs: number;
  readonly processes: readonly ProcessCpu[];
}

/**
 * An engine run: the provider host, the engine, the program (the process that ran it inline) and,
 * when it was measured, the sandbox answering it.
 */
export function engineRunCost(run: EngineRun & { readonly sandboxCpuTimeInMs?: number }): RunCost {
  return {
    wallTimeInMs: run.wallTimeInMs,
    processes: [
      { process: "provider host", cpuTimeInMs: run.host.hostCpuTimeInMs },
      { process: "engine", cpuTimeInMs: run.host.engineCpuTimeInMs },
      { process: "program", cpuTimeInMs: run.benchProcessCpuTimeInMs },
      ...(run.sandboxCpuTimeInMs === undefined ? [] : [{ process: "sandbox", cpuTimeInMs: run.sandboxCpuTimeInMs }]),
    ],
  };
}

/** The plain script (floorWorker.ts): its whole process, and the sandbox answering it. */
export function plainScriptCost(run: FloorRun): RunCost {
  return {
    wallTimeInMs: run.processWallTimeInMs,
    processes: [
      { process: "worker", cpuTimeInMs: run.cpuTimeInMs },
      { process: "sandbox", cpuTimeInMs: run.sandboxCpuTimeInMs },
    ],
  };
}

/** CPU time of every process of a run together. */
export function totalCpuInMs(cost: RunCost): number {
  return cost.processes.reduce((total, process) => total + process.cpuTimeInMs, 0);
}

/** Runs of ours, each with the floor run of its pair. */
export interface Pairs {
  readonly ours: readonly RunCost[];
  readonly floors: readonly RunCost[];
  /** Of the per-pair ratios of wall time. */
  readonly wallRatio: Spread;
  /** Of the per-pair ratios of CPU time, every process of ours against every process of the floor's. */
  readonly cpuRatio: Spread;
  /** The pair whose wall-time ratio is the median (of an even count, the upper of the two middle ones). */
  readonly medianPair: { readonly ours: RunCost; readonly floor: RunCost };
}

/** Pairs ours[i] with floors[i]. */
export function pairsOf(ours: readonly RunCost[], floors: readonly RunCost[]): Pairs {
  const wallRatios = pairRatios(
    ours.map((run) => run.wallTimeInMs),
    floors.map((run) => run.wallTimeInMs),
  );
  const cpuRatios = pairRatios(ours.map(totalCpuInMs), floors.map(totalCpuInMs));
  const middle = medianBy(
    wallRatios.map((ratio, index) => ({ ratio, index })),
    (pair) => pair.ratio,
  );
  return {
    ours,
    floors,
    wallRatio: spread(wallRatios),
    cpuRatio: spread(cpuRatios),
    medianPair: { ours: ours[middle.index], floor: floors[middle.index] },
  };
}

/** Per process, the median of its CPU time over the runs, per cluster (the runs' processes in their order). */
export function medianCpuPerCluster(runs: readonly RunCost[], clusters: number): ProcessCpu[] {
  const names = runs[0]?.processes.map((process) => process.process) ?? [];
  return names.map((name) => ({
    process: name,
    cpuTimeInMs: median(runs.map((run) => run.processes.find((process) => process.process === name)?.cpuTimeInMs ?? Number.NaN)) / clusters,
  }));
}

/**
 * `18.61 / 3.43 / 4.68 / 5.87 ms`: per-process CPU times. No sum: a sum of per-process medians is
 * not the median of the runs' totals, which the tables show beside it.
 */
export function formatProcessCpu(processes: readonly ProcessCpu[]): string {
  return `${processes.map((process) => process.cpuTimeInMs.toFixed(2)).join(" / ")} ms`;
}
