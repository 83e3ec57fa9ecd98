/**
 * The shard model of docs/performance.md: wall time and state of a fleet split into stacks,
 * predicted from one stack's measured costs in the same run.
 *
 * - Wall time of one stack of n clusters: a + b·n, the least-squares line through the measured
 *   sizes (a is the engine's and the program's start-up, b the per-cluster cost at this latency).
 * - Hashing by ARM ID leaves the largest shard about 2·√(n/s) clusters above the mean n/s (two
 *   standard deviations of a binomial), and the fleet waits for its largest shard.
 * - Shards on their own machines (a CI matrix, one runner per shard, like this one): the fleet
 *   takes as long as its largest shard alone.
 * - Shards at once on one machine of k cores: the same, or the CPU all shards need together over
 *   k cores, whichever is longer. That CPU is s × the start-up CPU of one stack (an engine and a
 *   provider host each) + c × n (c per cluster: engine, provider host, program and sandbox).
 * - State: bytes per cluster × clusters, split evenly.
 */
import type { FleetScenarioResult } from "./fleetScenario";
import { linearFit } from "./statistics";

/** One stack's measured costs. */
export interface StackCosts {
  /** Start-up of an operation, ms. */
  readonly fixedInMs: number;
  /** Wall time per cluster, ms. */
  readonly perClusterInMs: number;
  /** CPU time per cluster, all processes, ms. */
  readonly cpuPerClusterInMs: number;
  /** CPU time of one operation's start-up (an `up` of one cluster), all processes, ms. */
  readonly startUpCpuInMs: number;
}

/** A prediction for a fleet of `clusters` in `shards` stacks. */
export interface ShardPrediction {
  readonly clusters: number;
  readonly shards: number;
  readonly largestShard: number;
  /** Each shard on its own machine (as a CI matrix runs them). */
  readonly separateMachinesInMs: number;
  /** Every shard at once on one machine of `cores` cores. */
  readonly oneMachineInMs: number;
  /** CPU of all shards together, ms. */
  readonly cpuInMs: number;
  readonly stateBytesPerShard: number;
  readonly stateBytesTotal: number;
}

/** Largest shard expected from hashing n clusters into s stacks. */
export function largestShard(clusters: number, shards: number): number {
  const mean = clusters / shards;
  return shards === 1 ? clusters : Math.ceil(mean + 2 * Math.sqrt(mean * (1 - 1 / shards)));
}

/** Costs of an operation from the fleet sizes that measured it. */
export function stackCosts(
  points: ReadonlyArray<{ readonly clusters: number; readonly wallTimeInMs: number; readonly cpuTimeInMs: number }>,
  startUpCpuInMs: number,
): StackCosts {
  const largest = points.reduce((best, point) => (point.clusters > best.clusters ? point : best));
  const cpuPerClusterInMs = Math.max(0, largest.cpuTimeInMs - startUpCpuInMs) / largest.clusters;
  if (new Set(points.map((point) => point.clusters)).size < 2) {
    // One size: no start-up time can be told apart.
    return { fixedInMs: 0, perClusterInMs: largest.wallTimeInMs / largest.clusters, cpuPerClusterInMs, startUpCpuInMs };
  }
  const fit = linearFit(points.map((point) => [point.clusters, point.wallTimeInMs] as const));
  return { fixedInMs: Math.max(0, fit.intercept), perClusterInMs: fit.slope, cpuPerClusterInMs, startUpCpuInMs };
}

/**
 * CPU of an engine run: engine, provider host, this process (the inline program, and the sandbox
 * when it runs here) and the sandbox's own process when it has one.
 */
export function cpuOfRun(run: {
  readonly host: { readonly hostCpuTimeInMs: number; readonly engineCpuTimeInMs: number };
  readonly benchProcessCpuTimeInMs: number;
  readonly sandboxCpuTimeInMs?: number;
}): number {
  return run.host.hostCpuTimeInMs + run.host.engineCpuTimeInMs + run.benchProcessCpuTimeInMs + (run.sandboxCpuTimeInMs ?? 0);
}

/** `up` and drift-check (refresh + no-op up) costs from the scaling runs. */
export function measuredCosts(scaling: readonly FleetScenarioResult[]): { up: StackCosts; driftCheck: StackCosts } {
  const single = scaling.find((result) => result.clusters === 1);
  const startUpCpuInMs = single === undefined ? 0 : cpuOfRun(single.up);
  const up = stackCosts(
    scaling
      .filter((result) => result.clusters > 1)
      .map((result) => ({ clusters: result.clusters, wallTimeInMs: result.up.wallTimeInMs, cpuTimeInMs: cpuOfRun(result.up) })),
    startUpCpuInMs,
  );
  const driftCheck = stackCosts(
    scaling.flatMap((result) =>
      result.refresh === undefined || result.noOpUp === undefined
        ? []
        : [
            {
              clusters: result.clusters,
              wallTimeInMs: result.refresh.wallTimeInMs + result.noOpUp.wallTimeInMs,
              cpuTimeInMs: cpuOfRun(result.refresh) + cpuOfRun(result.noOpUp),
            },
          ],
    ),
    // Two operations, two start-ups.
    2 * startUpCpuInMs,
  );
  return { up, driftCheck };
}

/** The model's prediction. */
export function predictShards(costs: StackCosts, stateBytesPerCluster: number, clusters: number, shards: number, cores: number): ShardPrediction {
  const largest = largestShard(clusters, shards);
  const separateMachinesInMs = costs.fixedInMs + costs.perClusterInMs * largest;
  const cpuInMs = shards * costs.startUpCpuInMs + costs.cpuPerClusterInMs * clusters;
  return {
    clusters,
    shards,
    largestShard: largest,
    separateMachinesInMs,
    oneMachineInMs: Math.max(separateMachinesInMs, cpuInMs / cores),
    cpuInMs,
    stateBytesPerShard: (stateBytesPerCluster * clusters) / shards,
    stateBytesTotal: stateBytesPerCluster * clusters,
  };
}
