/**
 * Provider-host peak memory by identities per cluster: one cluster of n identities through the
 * real engine, the host's VmHWM sampled from /proc (providerHostMonitor.ts).
 */
import type { EngineCommand } from "../../cli/engine";
import { startBenchmarkSandbox } from "./benchmarkSandbox";
import { openBenchmarkStack } from "./benchmarkStack";
import { clusterDeclarations } from "./fleetScenario";
import { countResolvedInCosmos, seedClustersByIdentities } from "./sandboxDocuments";

/** One measurement. */
export interface HostMemoryResult {
  readonly identities: number;
  readonly upInMs: number;
  readonly hostPeakBytes: number;
  readonly resolved: boolean;
}

/** Runs one single-cluster stack per identity count, all in one sandbox. */
export async function runHostMemoryByIdentities(options: {
  readonly engine: EngineCommand;
  readonly identityCounts: readonly number[];
  readonly armLatencyInMs: number;
  readonly lookupConcurrency: number;
}): Promise<HostMemoryResult[]> {
  const benchmark = await startBenchmarkSandbox({
    armLatencyInMs: options.armLatencyInMs,
    cosmosLatencyInMs: options.armLatencyInMs,
    lookupConcurrency: options.lookupConcurrency,
  });
  try {
    const results: HostMemoryResult[] = [];
    const clusters = seedClustersByIdentities(
      benchmark.sandbox,
      "memory",
      options.identityCounts.map((identities) => ({ name: `${identities}`, identities })),
    );
    for (const [index, identities] of options.identityCounts.entries()) {
      const cluster = clusters[index];
      const stack = await openBenchmarkStack(options.engine, benchmark, `memory-${identities}`);
      try {
        await stack.setClusters(clusterDeclarations([cluster]));
        const run = await stack.up();
        results.push({
          identities,
          upInMs: run.wallTimeInMs,
          hostPeakBytes: run.host.peakResidentBytes,
          resolved: countResolvedInCosmos(benchmark.sandbox, [cluster]) === identities,
        });
      } finally {
        stack.remove();
      }
    }
    return results;
  } finally {
    await benchmark.sandbox.stop();
  }
}
