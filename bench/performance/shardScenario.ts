/**
 * A fleet split into shards (resources/shards/shardPlan.ts: a cluster's shard is a hash of its
 * ARM ID), every shard its own stack, engine and provider host, all running at once on this
 * machine against one sandbox: `up`, then the drift check (`refresh`, then a no-op `up`).
 * Measures the wall time of the whole fleet and each shard's state size, to check the shard
 * model of docs/performance.md against.
 */
import type { EngineCommand } from "../../cli/engine";
import { refreshParallelism } from "../../cli/engine";
import { planShards } from "../../resources/shards/shardPlan";
import { driveFleet, sameLatency } from "./fleetDriver";
import { finishedChildrenCpuTimeInMs } from "./providerHostMonitor";
import { startSandboxProcess } from "./sandboxProcess";
import { processCpuTimeInMs } from "./statistics";

/** What the shard run measured. */
export interface ShardResult {
  readonly clusters: number;
  readonly shards: number;
  readonly clustersPerShard: readonly number[];
  /** All shards' `up`, started together, until the last one finished. */
  readonly upWallTimeInMs: number;
  /** Each shard's own `up` time. */
  readonly shardUpTimesInMs: readonly number[];
  /** All shards' drift check (`refresh` then no-op `up`), started together. */
  readonly driftCheckWallTimeInMs: number;
  readonly checkpointBytes: readonly number[];
  /** CPU time of this process (the inline programs) during the `up`. */
  readonly benchProcessCpuInMs: number;
  /** CPU time of the sandbox (a process of its own, sandboxProcess.ts) during the `up`. */
  readonly sandboxCpuInMs: number;
  /** CPU time of everything during the `up`: this process, the sandbox, the engines and the provider hosts. */
  readonly upCpuInMs: number;
  readonly resolvedInCosmos: number;
  readonly expectedIdentities: number;
}

/** Runs every shard's stack concurrently, against one sandbox in a process of its own. */
export async function runShardScenario(options: {
  readonly engine: EngineCommand;
  readonly clusters: number;
  readonly shards: number;
  readonly armLatencyInMs: number;
  readonly lookupConcurrency: number;
  readonly log: (line: string) => void;
}): Promise<ShardResult> {
  const size = { clusters: options.clusters, identitiesPerCluster: 4 };
  const benchmark = await startSandboxProcess(sameLatency(options));
  return driveFleet({ engine: options.engine, sandbox: benchmark, seed: () => benchmark.seedFleet(size) }, async (driver) => {
    // Each shard of the region's plan (resources/shards/shardPlan.ts) is a stack of its own.
    const { shards } = planShards(driver.declarations, options.shards);
    const stacks = [];
    for (const [index, clusters] of shards.entries()) stacks.push(await driver.openStack(`shard-${index}`, { clusters }));
    const sandboxCpuBefore = await benchmark.cpuTimeInMs();
    const cpuBefore = processCpuTimeInMs();
    const childrenBefore = finishedChildrenCpuTimeInMs();
    let started = performance.now();
    const ups = await Promise.all(stacks.map((stack) => stack.up()));
    const upWallTimeInMs = performance.now() - started;
    const benchProcessCpuInMs = processCpuTimeInMs() - cpuBefore;
    const childrenCpuInMs = finishedChildrenCpuTimeInMs() - childrenBefore;
    const sandboxCpuInMs = (await benchmark.cpuTimeInMs()) - sandboxCpuBefore;
    options.log(`  ${options.shards} shards: up ${Math.round(upWallTimeInMs)} ms (shards ${ups.map((run) => Math.round(run.wallTimeInMs)).join(", ")} ms)`);
    started = performance.now();
    // The slots the project's doors give a refresh (cli/engine.ts), as in the scaling runs the model is fitted to.
    const refreshParallel = refreshParallelism();
    await Promise.all(stacks.map(async (stack) => stack.refresh(refreshParallel === undefined ? {} : { parallel: refreshParallel }).then(() => stack.up())));
    const driftCheckWallTimeInMs = performance.now() - started;
    options.log(`  ${options.shards} shards: drift check ${Math.round(driftCheckWallTimeInMs)} ms`);
    return {
      clusters: options.clusters,
      shards: options.shards,
      clustersPerShard: shards.map((shard) => shard.length),
      upWallTimeInMs,
      shardUpTimesInMs: ups.map((run) => run.wallTimeInMs),
      driftCheckWallTimeInMs,
      checkpointBytes: await Promise.all(stacks.map((stack) => stack.checkpointBytes())),
      benchProcessCpuInMs,
      sandboxCpuInMs,
      upCpuInMs: benchProcessCpuInMs + sandboxCpuInMs + childrenCpuInMs,
      resolvedInCosmos: await benchmark.countResolved(),
      expectedIdentities: options.clusters * 4,
    };
  });
}
