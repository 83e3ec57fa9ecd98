/**
 * A fleet through the real engine: `pulumi up` of N clusters against its floor (the floor worker
 * doing the same Azure work), then optionally a no-op `up` and a `refresh` with their counters.
 */
import type { EngineCommand } from "../../cli/engine";
import { isJsonObject } from "../../resources/core/json";
import type { DataPlaneOperatorManagedIdentityEntry } from "../../resources/core/serviceProviderClusterDocument";
import { readStatusSubtree } from "../../resources/core/serviceProviderClusterDocument";
import type { ClusterDeclaration } from "../../program/fleet";
import type { SandboxStatisticsSnapshot } from "../../sandbox/sandboxStatistics";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import type { BenchmarkSandbox } from "./benchmarkSandbox";
import { startBenchmarkSandbox } from "./benchmarkSandbox";
import type { BenchmarkStack, EngineRun } from "./benchmarkStack";
import { openBenchmarkStack } from "./benchmarkStack";
import { trivialFleetProgram } from "./engineFloor";
import type { FloorRun } from "./floors";
import { floorPlan, runFloorWorker } from "./floors";

/** How a fleet scenario runs. */
export interface FleetScenarioOptions {
  readonly engine: EngineCommand;
  readonly clusters: number;
  readonly identitiesPerCluster: number;
  readonly armLatencyInMs: number;
  readonly cosmosLatencyInMs: number;
  readonly lookupConcurrency: number;
  /** `--parallel` of the engine; undefined keeps the engine's default. */
  readonly parallel?: number;
  /** Also run a no-op `up` and a `refresh` after the first `up`. */
  readonly followUps: boolean;
  /** ARM faults to install before the first `up` (the throttling scenario). */
  readonly prepare?: (benchmark: BenchmarkSandbox) => void;
  /** Extra environment for the engine and the provider host. */
  readonly engineEnvironment?: Readonly<Record<string, string>>;
  /** Skip the floor (the throttling scenario has its own bound). */
  readonly skipFloor?: boolean;
  /** Also run the engine floor (engineFloor.ts): up, no-op up and refresh of trivial resources. */
  readonly engineFloor?: boolean;
  readonly log: (line: string) => void;
}

/** One engine run with the sandbox counters it caused. */
export interface CountedRun extends EngineRun {
  readonly statistics: SandboxStatisticsSnapshot;
}

/** The engine floor's runs: the same stack layout and resource count, a trivial provider. */
export interface EngineFloorResult {
  readonly up: EngineRun;
  readonly noOpUp: EngineRun;
  readonly refresh: EngineRun;
  readonly checkpointBytes: number;
}

/** What a fleet scenario measured. */
export interface FleetScenarioResult {
  readonly clusters: number;
  readonly engineFloor?: EngineFloorResult;
  readonly floor?: FloorRun;
  readonly readFloor?: FloorRun;
  readonly up: CountedRun;
  readonly noOpUp?: CountedRun;
  readonly refresh?: CountedRun;
  readonly checkpointBytes: number;
  /** Identities resolved in Cosmos after the first `up`, out of clusters × identities. */
  readonly resolvedInCosmos: number;
  readonly expectedIdentities: number;
}

/** The program's `clusters` config for a seeded fleet (operators declared in config). */
export function clusterDeclarations(fleet: readonly FleetClusterDescription[]): ClusterDeclaration[] {
  return fleet.map((cluster) => ({
    clusterResourceId: cluster.clusterResourceId,
    dataPlaneOperators: cluster.dataPlaneOperators,
    serviceManagedIdentity: cluster.serviceManagedIdentity,
  }));
}

/** The identity entries of a stored ServiceProviderCluster document, read with the product's own reader. */
export function storedIdentities(document: unknown): Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>> {
  const properties = isJsonObject(document) ? document.properties : undefined;
  const status = isJsonObject(properties) ? properties.status : undefined;
  return readStatusSubtree(isJsonObject(status) ? status.dataPlaneOperatorsManagedIdentities : undefined).status.identities ?? {};
}

/** Identities whose clientId/principalId in Cosmos match ARM (read directly, uncounted). */
export function countResolvedInCosmos(benchmark: BenchmarkSandbox, fleet: readonly FleetClusterDescription[]): number {
  let resolved = 0;
  for (const cluster of fleet) {
    const identities = storedIdentities(benchmark.sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId));
    for (const resourceId of Object.values(cluster.dataPlaneOperators)) {
      const entry = identities[resourceId.toLowerCase()];
      const identity = benchmark.sandbox.identities.get(resourceId);
      if (entry !== undefined && identity !== undefined && entry.clientId === identity.clientId && entry.principalId === identity.principalId) {
        resolved += 1;
      }
    }
  }
  return resolved;
}

async function counted(benchmark: BenchmarkSandbox, run: () => Promise<EngineRun>): Promise<CountedRun> {
  benchmark.sandbox.statistics.reset();
  const result = await run();
  return { ...result, statistics: benchmark.sandbox.statistics.snapshot() };
}

/** The engine floor over the same cluster list, in a stack of its own. */
async function runEngineFloor(options: FleetScenarioOptions, benchmark: BenchmarkSandbox, clusters: readonly ClusterDeclaration[]): Promise<EngineFloorResult> {
  const stack = await openBenchmarkStack(options.engine, benchmark, `floor-${options.clusters}`, options.engineEnvironment, trivialFleetProgram);
  try {
    await stack.setClusters(clusters);
    const parallel = options.parallel === undefined ? {} : { parallel: options.parallel };
    const up = await stack.up(parallel);
    const noOpUp = await stack.up(parallel);
    const refresh = await stack.refresh(parallel);
    const checkpointBytes = await stack.checkpointBytes();
    options.log(
      `  engine floor: up ${Math.round(up.wallTimeInMs)} ms, no-op up ${Math.round(noOpUp.wallTimeInMs)} ms, refresh ${Math.round(refresh.wallTimeInMs)} ms`,
    );
    return { up, noOpUp, refresh, checkpointBytes };
  } finally {
    stack.remove();
  }
}

/** Runs one fleet scenario in its own sandbox and stack. */
export async function runFleetScenario(options: FleetScenarioOptions): Promise<FleetScenarioResult> {
  const benchmark = await startBenchmarkSandbox(options);
  let stack: BenchmarkStack | undefined;
  try {
    const fleet = seedFleet(benchmark.sandbox, { clusters: options.clusters, identitiesPerCluster: options.identitiesPerCluster });
    const seeded = benchmark.sandbox.documents.list();
    let floor: FloorRun | undefined;
    if (options.skipFloor !== true) {
      floor = await runFloorWorker(benchmark, "sync", floorPlan(fleet));
      options.log(`  floor: ${Math.round(floor.processWallTimeInMs)} ms (work ${Math.round(floor.workTimeInMs)} ms, ${floor.lookups} lookups)`);
      // Back to the seeded documents, so the engine finds the same work to do.
      benchmark.sandbox.documents.putMany(seeded);
    }
    options.prepare?.(benchmark);
    stack = await openBenchmarkStack(options.engine, benchmark, `fleet-${options.clusters}x${options.identitiesPerCluster}`, options.engineEnvironment);
    await stack.setClusters(clusterDeclarations(fleet));
    const parallel = options.parallel === undefined ? {} : { parallel: options.parallel };
    const up = await counted(benchmark, () => stack!.up(parallel));
    options.log(
      `  up: ${Math.round(up.wallTimeInMs)} ms, host peak ${Math.round(up.host.peakResidentBytes / 2 ** 20)} MB, ARM GETs ${up.statistics.arm.getRequests}`,
    );
    benchmark.sandbox.faults.clear();
    const resolvedInCosmos = countResolvedInCosmos(benchmark, fleet);
    const checkpointBytes = await stack.checkpointBytes();
    if (!options.followUps) {
      return {
        clusters: options.clusters,
        ...(floor === undefined ? {} : { floor }),
        up,
        checkpointBytes,
        resolvedInCosmos,
        expectedIdentities: options.clusters * options.identitiesPerCluster,
      };
    }
    const noOpUp = await counted(benchmark, () => stack!.up(parallel));
    const readFloor = await runFloorWorker(benchmark, "read", floorPlan(fleet));
    const refresh = await counted(benchmark, () => stack!.refresh(parallel));
    options.log(
      `  no-op up: ${Math.round(noOpUp.wallTimeInMs)} ms; read floor ${Math.round(readFloor.processWallTimeInMs)} ms; refresh ${Math.round(refresh.wallTimeInMs)} ms, host peak ${Math.round(refresh.host.peakResidentBytes / 2 ** 20)} MB`,
    );
    stack.remove();
    stack = undefined;
    const engineFloor = options.engineFloor === true ? await runEngineFloor(options, benchmark, clusterDeclarations(fleet)) : undefined;
    return {
      clusters: options.clusters,
      ...(engineFloor === undefined ? {} : { engineFloor }),
      ...(floor === undefined ? {} : { floor }),
      readFloor,
      up,
      noOpUp,
      refresh,
      checkpointBytes,
      resolvedInCosmos,
      expectedIdentities: options.clusters * options.identitiesPerCluster,
    };
  } finally {
    stack?.remove();
    await benchmark.sandbox.stop();
  }
}
