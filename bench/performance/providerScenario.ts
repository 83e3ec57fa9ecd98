/**
 * The provider's create with the real implementation and real SDK clients against the sandbox,
 * timed against two floors measured or derived in the same run: upstream-style sequential GETs
 * through the same arm-msi client, and the concurrency floor ceil(n / concurrency) × latency.
 *
 * The provider runs in a Node process of its own (providerCreateWorker.ts), as in the provider
 * host; the sandbox stays in this process, so its CPU is not charged to the event loop being
 * timed (Azure's never is). This process reads the sandbox's counters between identity counts.
 */
import { fork } from "node:child_process";
import { join } from "node:path";
import { projectDirectory } from "../../cli/engine";
import { startBenchmarkSandbox } from "./benchmarkSandbox";
import { clusterDeclaration } from "../clusterDeclaration";
import { countResolvedInCosmos, seedClustersByIdentities } from "./sandboxDocuments";
import type { CreatesRequest, FloorsRequest, WorkerReply } from "./providerCreateWorker";
import { median } from "./statistics";

/** Options of {@link runProviderCreateScenarios}. */
export interface ProviderCreateOptions {
  /** Identity counts to measure, each on its own clusters. */
  readonly identityCounts: readonly number[];
  readonly armLatencyInMs: number;
  readonly lookupConcurrency: number;
  /** Timed creates per count, each on a fresh cluster (after one untimed warm-up create). */
  readonly repetitions: number;
  /** The identity count at which to also measure the sequential floor. */
  readonly sequentialFloorAt: number;
}

/** What one provider-create scenario measured. */
export interface ProviderCreateResult {
  readonly identities: number;
  /** Median of the timed creates. */
  readonly createTimeInMs: number;
  readonly createTimes: readonly number[];
  /** The first create of the process: token, TLS handshakes, SDK loading. */
  readonly coldCreateTimeInMs: number;
  /** Median time of n sequential GETs through the same client; undefined when not measured. */
  readonly sequentialTimeInMs?: number;
  /** n GETs through the process-wide limiter, measured (median). */
  readonly concurrentTimeInMs: number;
  /** ceil(n / concurrency) × latency. */
  readonly concurrencyFloorInMs: number;
  readonly armRequests: number;
  readonly armMaxInFlight: number;
  readonly tokenRequests: number;
  readonly resolvedEveryIdentity: boolean;
}

/** The worker process: one request at a time. */
interface CreateWorker {
  ask<Request extends CreatesRequest | FloorsRequest>(request: Request): Promise<Extract<WorkerReply, { kind: Request["kind"] }>>;
  stop(): Promise<void>;
}

function startCreateWorker(environment: Readonly<Record<string, string>>): CreateWorker {
  const child = fork(join(projectDirectory, "dist", "bench", "performance", "providerCreateWorker.js"), [], {
    cwd: projectDirectory,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...environment },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    ask: <Request extends CreatesRequest | FloorsRequest>(request: Request) =>
      new Promise<Extract<WorkerReply, { kind: Request["kind"] }>>((resolve, reject) => {
        const onExit = (code: number | null): void => reject(new Error(`provider create worker exited (${code ?? "signal"}) before answering`));
        child.once("exit", onExit);
        child.once("message", (reply: WorkerReply) => {
          child.off("exit", onExit);
          if (reply.kind === "error") {
            reject(new Error(`provider create worker: ${reply.message}`));
          } else {
            resolve(reply as Extract<WorkerReply, { kind: Request["kind"] }>);
          }
        });
        child.send(request);
      }),
    stop: async () => {
      if (child.exitCode === null && child.connected) {
        child.send({ kind: "exit" });
      }
      await exited;
    },
  };
}

/**
 * Runs every count against one sandbox and one worker: @azure/identity caches managed-identity
 * tokens per process, so the worker's first create fetches the only token.
 */
export async function runProviderCreateScenarios(options: ProviderCreateOptions): Promise<ProviderCreateResult[]> {
  const benchmark = await startBenchmarkSandbox({ armLatencyInMs: options.armLatencyInMs, cosmosLatencyInMs: 0, lookupConcurrency: options.lookupConcurrency });
  const worker = startCreateWorker(benchmark.settingsEnvironment);
  try {
    const { sandbox } = benchmark;
    const clustersPerCount = options.repetitions + 1;
    const results: ProviderCreateResult[] = [];
    for (const identities of options.identityCounts) {
      const clusters = seedClustersByIdentities(
        sandbox,
        "create",
        Array.from({ length: clustersPerCount }, (_, index) => ({ name: `${identities}-${index}`, identities })),
      );
      sandbox.statistics.reset();
      const created = await worker.ask({ kind: "creates", clusters: clusters.map(clusterDeclaration) });
      const statistics = sandbox.statistics.snapshot();
      const resolvedEveryIdentity = countResolvedInCosmos(sandbox, clusters) === clusters.length * identities;
      const withSequentialFloor = identities === options.sequentialFloorAt;
      const floors = await worker.ask({
        kind: "floors",
        identityResourceIds: Object.values(clusters[0].dataPlaneOperators),
        repetitions: Math.max(3, options.repetitions),
        sequential: withSequentialFloor,
      });
      results.push({
        identities,
        createTimeInMs: median(created.createTimes),
        createTimes: created.createTimes,
        coldCreateTimeInMs: created.coldCreateTimeInMs,
        ...(withSequentialFloor ? { sequentialTimeInMs: median(floors.sequentialTimes) } : {}),
        concurrentTimeInMs: median(floors.concurrentTimes),
        concurrencyFloorInMs: Math.ceil(identities / options.lookupConcurrency) * options.armLatencyInMs,
        armRequests: statistics.arm.getRequests,
        armMaxInFlight: statistics.arm.maxInFlight,
        tokenRequests: statistics.token.requests,
        resolvedEveryIdentity,
      });
    }
    return results;
  } finally {
    await worker.stop();
    await benchmark.stop();
  }
}
