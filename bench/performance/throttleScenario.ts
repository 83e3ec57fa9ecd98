/**
 * Throttling through the real engine: the sandbox answers a share of ARM requests with 429 and
 * Retry-After. Measures whether the fleet still converges (re-running `up` as an operator would
 * when a run ends with failed lookups), whether every client waited at least the Retry-After it
 * was given before asking again, and the most ARM requests in flight at once.
 *
 * The wait is measured at the sandbox: the ARM server's fault hook is wrapped (in this process)
 * to note when each identity was answered 429 and when the same identity was asked again.
 */
import type { EngineCommand } from "../../cli/engine";
import type { FiredFaults, FaultRequestContext } from "../../sandbox/faultInjector";
import { seedFleet } from "../../sandbox/seed";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { BenchmarkSandbox } from "./benchmarkSandbox";
import { startBenchmarkSandbox } from "./benchmarkSandbox";
import { driveFleet, sameLatency } from "./fleetDriver";
import { countResolvedInCosmos, storedIdentities } from "./sandboxDocuments";

/** Options of {@link runThrottleScenario}. */
export interface ThrottleOptions {
  readonly engine: EngineCommand;
  readonly clusters: number;
  readonly identitiesPerCluster: number;
  readonly armLatencyInMs: number;
  readonly lookupConcurrency: number;
  readonly probability: number;
  readonly retryAfterSeconds: number;
  /** Most `up` runs before giving up on convergence. */
  readonly maxRuns: number;
  /** The engine's `--parallel`; its default (4 × cores) when omitted. */
  readonly parallel?: number;
  readonly log: (line: string) => void;
}

/** One `up` under throttling. */
export interface ThrottledRun {
  readonly wallTimeInMs: number;
  readonly succeeded: boolean;
  readonly armRequests: number;
  readonly throttled: number;
  readonly armMaxInFlight: number;
  /** From the run's first ARM request to the first request for the identity asked last: how long the queue for slots got. */
  readonly lastFirstRequestInMs: number;
}

/** What the throttling scenario measured. */
export interface ThrottleResult {
  readonly runs: readonly ThrottledRun[];
  readonly resolvedInCosmos: number;
  readonly expectedIdentities: number;
  /** Sum of Retry-After seconds the sandbox asked for (its own counter), in milliseconds. */
  readonly retryAfterRequestedInMs: number;
  /** Sum, over throttled answers followed by a retry, of the time until that retry. */
  readonly waitedInMs: number;
  /** Retry-After asked on the answers that were retried (the part `waitedInMs` compares with). */
  readonly retryAfterOfRetriedInMs: number;
  /** Retries sent sooner than their Retry-After allowed. */
  readonly earlyRetries: number;
  /** 429 answers after which the client gave up on that identity (its retries ran out). */
  readonly abandoned: number;
  readonly tokenRequests: number;
  /** Entries stored with a retrievalError after the last run, by the error's code (`Timeout`: the lookup deadline). */
  readonly failedEntriesByCode: Readonly<Record<string, number>>;
}

/** Runs the scenario in its own sandbox and stack. */
export async function runThrottleScenario(options: ThrottleOptions): Promise<ThrottleResult> {
  const benchmark = await startBenchmarkSandbox(sameLatency(options));
  const { sandbox } = benchmark;
  // Per identity: when its last 429 was answered and the Retry-After it carried.
  const pending = new Map<string, { answeredAt: number; retryAfterInMs: number }>();
  let waitedInMs = 0;
  let retryAfterOfRetriedInMs = 0;
  let earlyRetries = 0;
  let abandoned = 0;
  // Per identity, when it was first asked in the current run (the queue-depth measure).
  const firstAskedAt = new Map<string, number>();
  const take = sandbox.faults.take.bind(sandbox.faults);
  sandbox.faults.take = (context: FaultRequestContext): FiredFaults => {
    const fired = take(context);
    if (context.target !== "arm" || context.resourceId === undefined) {
      return fired;
    }
    const now = performance.now();
    const key = context.resourceId.toLowerCase();
    if (!firstAskedAt.has(key)) firstAskedAt.set(key, now);
    const previous = pending.get(key);
    if (previous !== undefined) {
      const waited = now - previous.answeredAt;
      waitedInMs += waited;
      retryAfterOfRetriedInMs += previous.retryAfterInMs;
      // 5 ms of slack for timer granularity between two processes.
      if (waited + 5 < previous.retryAfterInMs) earlyRetries += 1;
      pending.delete(key);
    }
    if (fired.rule?.kind === "throttle") {
      pending.set(key, { answeredAt: now + fired.delayInMs, retryAfterInMs: (fired.rule.retryAfterSeconds ?? 1) * 1000 });
    }
    return fired;
  };
  const size = { clusters: options.clusters, identitiesPerCluster: options.identitiesPerCluster };
  return driveFleet({ engine: options.engine, sandbox: benchmark, seed: () => seedFleet(sandbox, size) }, async (driver) => {
    const stack = await driver.openStack(`throttle-${options.clusters}x${options.identitiesPerCluster}`);
    sandbox.faults.add({ target: "arm", kind: "throttle", probability: options.probability, retryAfterSeconds: options.retryAfterSeconds, seed: 20261129 });
    sandbox.statistics.reset();
    const runs: ThrottledRun[] = [];
    let retryAfterRequestedInMs = 0;
    let tokenRequests = 0;
    const expectedIdentities = options.clusters * options.identitiesPerCluster;
    while (runs.length < options.maxRuns && countResolvedInCosmos(sandbox, driver.fleet) < expectedIdentities) {
      sandbox.statistics.reset();
      pending.clear();
      firstAskedAt.clear();
      const started = performance.now();
      let succeeded = true;
      try {
        await stack.up(options.parallel === undefined ? {} : { parallel: options.parallel });
      } catch {
        // Lookups that ran out of retries fail the run after their status was persisted; the
        // next `up` retries them (entries with a retrievalError are always due).
        succeeded = false;
      }
      const statistics = sandbox.statistics.snapshot();
      retryAfterRequestedInMs += statistics.arm.retryAfterSecondsRequested * 1000;
      tokenRequests += statistics.token.requests;
      runs.push({
        wallTimeInMs: performance.now() - started,
        succeeded,
        armRequests: statistics.arm.getRequests,
        throttled: statistics.arm.responsesByStatus["429"] ?? 0,
        armMaxInFlight: statistics.arm.maxInFlight,
        lastFirstRequestInMs: firstAskedAt.size === 0 ? 0 : Math.max(...firstAskedAt.values()) - Math.min(...firstAskedAt.values()),
      });
      options.log(
        `  throttled up #${runs.length}: ${Math.round(runs[runs.length - 1].wallTimeInMs)} ms, ${succeeded ? "succeeded" : "failed"}, ${runs[runs.length - 1].throttled} × 429`,
      );
      // Whatever is still pending after a run was never retried in it.
      abandoned += pending.size;
    }
    return {
      runs,
      resolvedInCosmos: countResolvedInCosmos(sandbox, driver.fleet),
      expectedIdentities,
      retryAfterRequestedInMs,
      waitedInMs,
      retryAfterOfRetriedInMs,
      earlyRetries,
      abandoned,
      tokenRequests,
      failedEntriesByCode: failedEntriesByCode(benchmark, driver.fleet),
    };
  });
}

/** Stored entries carrying a retrievalError, counted by its leading code (`<code> (HTTP …): …`). */
function failedEntriesByCode(benchmark: BenchmarkSandbox, fleet: readonly FleetClusterDescription[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const cluster of fleet) {
    const document = benchmark.sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId);
    for (const entry of Object.values(storedIdentities(document))) {
      if (entry.retrievalError !== undefined) {
        const code = /^\S+/.exec(entry.retrievalError)?.[0] ?? "unknown";
        counts[code] = (counts[code] ?? 0) + 1;
      }
    }
  }
  return counts;
}
