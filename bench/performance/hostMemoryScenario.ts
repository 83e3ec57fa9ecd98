/**
 * Provider-host peak memory by identities per cluster: one cluster of n identities through the
 * real engine, the host's VmHWM sampled from /proc (providerHostMonitor.ts).
 */
import type { EngineCommand } from "../../cli/engine";
import { startBenchmarkSandbox } from "./benchmarkSandbox";
import { driveFleet, sameLatency } from "./fleetDriver";
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
  const clusters = options.identityCounts.map((identities) => ({ name: `${identities}`, identities }));
  const benchmark = await startBenchmarkSandbox(sameLatency(options));
  const seed = () => seedClustersByIdentities(benchmark.sandbox, "memory", clusters);
  return driveFleet({ engine: options.engine, sandbox: benchmark, seed }, async (driver) => {
    const results: HostMemoryResult[] = [];
    for (const [index, identities] of options.identityCounts.entries()) {
      const stack = await driver.openStack(`memory-${identities}`, { clusters: [driver.declarations[index]] });
      try {
        const run = await stack.up();
        results.push({
          identities,
          upInMs: run.wallTimeInMs,
          hostPeakBytes: run.host.peakResidentBytes,
          resolved: countResolvedInCosmos(benchmark.sandbox, [driver.fleet[index]]) === identities,
        });
      } finally {
        stack.remove();
      }
    }
    return results;
  });
}
