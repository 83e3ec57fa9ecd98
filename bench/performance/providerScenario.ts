/**
 * The provider's create, in this process, with the real implementation and real SDK clients
 * against the sandbox (createManagedIdentityStatusProvider with the `config` override), timed
 * against two floors measured or derived in the same run: upstream-style sequential GETs through
 * the same arm-msi client, and the concurrency floor ceil(n / concurrency) × latency.
 */
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../../resources/core/azureResourceId";
import { sharedAzureAdapters } from "../../resources/provider/azureAdapters";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import { readSettings } from "../../resources/core/settings";
import { seedFleet } from "../../sandbox/seed";
import { startBenchmarkSandbox, useSandboxIdentityEnvironment } from "./benchmarkSandbox";
import { storedIdentities } from "./fleetScenario";
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

/**
 * Runs every count in one sandbox: @azure/identity caches managed-identity tokens per process,
 * so a second sandbox in this process would be sent the first one's tokens.
 */
export async function runProviderCreateScenarios(options: ProviderCreateOptions): Promise<ProviderCreateResult[]> {
  const benchmark = await startBenchmarkSandbox({ armLatencyInMs: options.armLatencyInMs, cosmosLatencyInMs: 0, lookupConcurrency: options.lookupConcurrency });
  try {
    useSandboxIdentityEnvironment(benchmark);
    const { sandbox } = benchmark;
    const clustersPerCount = options.repetitions + 1;
    const largest = Math.max(...options.identityCounts);
    const fleet = seedFleet(sandbox, { clusters: clustersPerCount * options.identityCounts.length, identitiesPerCluster: largest, subscriptions: 1 });
    const provider = createManagedIdentityStatusProvider({ config: benchmark.configSource });
    const adapters = sharedAzureAdapters(readSettings(benchmark.configSource, process.env));
    const results: ProviderCreateResult[] = [];
    for (const [countIndex, identities] of options.identityCounts.entries()) {
      const clusters = fleet.slice(countIndex * clustersPerCount, (countIndex + 1) * clustersPerCount).map((cluster) => ({
        ...cluster,
        dataPlaneOperators: Object.fromEntries(Object.entries(cluster.dataPlaneOperators).slice(0, identities)),
      }));
      const createFor = async (cluster: (typeof clusters)[number]): Promise<number> => {
        const checked = await provider.check!({} as never, {
          clusterResourceId: cluster.clusterResourceId,
          dataPlaneOperators: cluster.dataPlaneOperators,
          serviceManagedIdentity: cluster.serviceManagedIdentity,
        });
        if ((checked.failures ?? []).length > 0) {
          throw new Error(`check failed: ${JSON.stringify(checked.failures)}`);
        }
        const started = performance.now();
        await provider.create(checked.inputs!);
        return performance.now() - started;
      };
      sandbox.statistics.reset();
      const coldCreateTimeInMs = await createFor(clusters[0]);
      const createTimes: number[] = [];
      for (const cluster of clusters.slice(1)) {
        createTimes.push(await createFor(cluster));
      }
      const statistics = sandbox.statistics.snapshot();
      let resolvedEveryIdentity = true;
      for (const cluster of clusters) {
        const stored = storedIdentities(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId));
        for (const resourceId of Object.values(cluster.dataPlaneOperators)) {
          resolvedEveryIdentity &&= stored[resourceId.toLowerCase()]?.clientId === sandbox.identities.get(resourceId)?.clientId;
        }
      }
      // Floors through the very clients the provider used (same settings → same cached adapters).
      const identityIds = Object.values(clusters[0].dataPlaneOperators).map((resourceId) => {
        const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
        if (!parsed.ok) throw new TypeError(parsed.reason);
        return parsed.resourceId;
      });
      const get = (resourceId: (typeof identityIds)[number]) =>
        adapters.userAssignedIdentityReader.getUserAssignedIdentity(resourceId, { abortSignal: AbortSignal.timeout(30_000) });
      const withSequentialFloor = identities === options.sequentialFloorAt;
      const sequentialTimes: number[] = [];
      const concurrentTimes: number[] = [];
      for (let repetition = 0; repetition < Math.max(3, options.repetitions); repetition += 1) {
        let started = performance.now();
        await Promise.all(identityIds.map((resourceId) => adapters.limiter.run(() => get(resourceId))));
        concurrentTimes.push(performance.now() - started);
        if (withSequentialFloor) {
          started = performance.now();
          for (const resourceId of identityIds) {
            await get(resourceId);
          }
          sequentialTimes.push(performance.now() - started);
        }
      }
      results.push({
        identities,
        createTimeInMs: median(createTimes),
        createTimes,
        coldCreateTimeInMs,
        ...(withSequentialFloor ? { sequentialTimeInMs: median(sequentialTimes) } : {}),
        concurrentTimeInMs: median(concurrentTimes),
        concurrencyFloorInMs: Math.ceil(identities / options.lookupConcurrency) * options.armLatencyInMs,
        armRequests: statistics.arm.getRequests,
        armMaxInFlight: statistics.arm.maxInFlight,
        tokenRequests: statistics.token.requests,
        resolvedEveryIdentity,
      });
    }
    return results;
  } finally {
    await benchmark.sandbox.stop();
  }
}
