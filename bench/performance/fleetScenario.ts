/**
 * A fleet through the real engine: `pulumi up` of N clusters against its floor (the floor worker
 * doing the same Azure work), then optionally a no-op `up` and a `refresh` with their counters.
 */
import type { EngineCommand } from "../../cli/engine";
import { refreshParallelism } from "../../cli/engine";
import type { SandboxStatisticsSnapshot } from "../../sandbox/sandboxStatistics";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { BenchmarkStack, EngineRun } from "./benchmarkStack";
import { trivialFleetProgram } from "./engineFloor";
import { smiKeyPoolSize } from "./benchmarkSandbox";
import type { FleetDriver } from "./fleetDriver";
import { driveFleet } from "./fleetDriver";
import type { FloorRun } from "./floors";
import { floorPlan, runFloorWorker } from "./floors";
import type { FleetSandbox } from "./sandboxProcess";
import { startSandboxProcess } from "./sandboxProcess";
import { medianBy } from "./statistics";

/** How a fleet scenario runs. */
export interface FleetScenarioOptions {
  readonly engine: EngineCommand;
  readonly clusters: number;
  readonly identitiesPerCluster: number;
  /** Subscriptions (Cosmos partitions) the clusters are spread over; default seedFleet's, min(clusters, 4). */
  readonly subscriptions?: number;
  /**
   * `clusterServiceManagedIdentity` mode: each cluster in its own tenant and subscription
   * (seedTenantFleet), read only by its own service managed identity, whose credential the hook
   * gets from the sandbox's Managed Identities data plane; the plain script walks the same chain
   * (floorWorker.ts mode `cluster`). The SMI certificates are issued before anything is timed.
   */
  readonly perClusterCredentials?: boolean;
  readonly armLatencyInMs: number;
  readonly cosmosLatencyInMs: number;
  readonly lookupConcurrency: number;
  /** `--parallel` of the engine; undefined keeps the engine's default. */
  readonly parallel?: number;
  /** Also run a no-op `up` and a `refresh` after the first `up`. */
  readonly followUps: boolean;
  /**
   * Each `refresh` (ours and the engine floor's) runs the program too, as a shard's refresh does
   * (tools/shard-entrypoint.sh, `--run-program`); default false, as the production targets measure it.
   */
  readonly refreshRunsProgram?: boolean;
  /** Extra environment for the engine and the provider host. */
  readonly engineEnvironment?: Readonly<Record<string, string>>;
  /** After the runs, write the stack's checkpoint once more and time it (BenchmarkStack checkpointWrite). */
  readonly measureCheckpointWrite?: boolean;
  /** Skip the floor (the throttling scenario has its own bound). */
  readonly skipFloor?: boolean;
  /** Also run the engine floor (engineFloor.ts): up, no-op up and refresh of trivial resources. */
  readonly engineFloor?: boolean;
  /**
   * How many no-op `up`s and `refresh`es to run (default 1). With the engine floor, each of ours
   * is followed by the floor's, so that both sides of a ratio see the same state of a shared,
   * noisy machine; the medians are reported.
   */
  readonly followUpRepetitions?: number;
  /**
   * How many first `up`s to run (default 1), each on a fresh stack from the seeded documents and
   * right after a plain-script run of its own; the pair whose ratio is the median is reported.
   */
  readonly upRepetitions?: number;
  readonly log: (line: string) => void;
}

/** One engine run with the sandbox counters it caused. */
export interface CountedRun extends EngineRun {
  readonly statistics: SandboxStatisticsSnapshot;
  /** CPU time of the sandbox's own process during the run (answering the provider host). */
  readonly sandboxCpuTimeInMs: number;
}

/**
 * The engine floor's runs: the same stack layout and resource count, a trivial provider. Its
 * no-op `up`s and `refresh`es are counted like ours, so that the sandbox's CPU meanwhile is known
 * (the trivial provider asks it nothing: what it spends is its idle cost).
 */
export interface EngineFloorResult {
  readonly up: EngineRun;
  /** The run of median wall time among {@link noOpUps}. */
  readonly noOpUp: CountedRun;
  /** In the order run: the i-th followed the i-th of ours. */
  readonly noOpUps: readonly CountedRun[];
  /** The run of median wall time among {@link refreshes}. */
  readonly refresh: CountedRun;
  readonly refreshes: readonly CountedRun[];
  readonly checkpointBytes: number;
}

/** One `up` of ours on a fresh stack, with the plain script's run just before it. */
export interface UpRun {
  readonly up: CountedRun;
  readonly floor?: FloorRun;
  /** The sandbox's counters during the plain script's run. */
  readonly floorStatistics?: SandboxStatisticsSnapshot;
}

/** The sandbox issuing every SMI certificate before the timed runs (perClusterCredentials). */
export interface CredentialIssuance {
  readonly issued: number;
  readonly timeInMs: number;
  readonly cpuTimeInMs: number;
  /** RSA keys the certificates share (benchmarkSandbox.ts smiKeyPoolSize). */
  readonly keyPoolSize: number;
}

/** What a fleet scenario measured. */
export interface FleetScenarioResult {
  readonly clusters: number;
  readonly engineFloor?: EngineFloorResult;
  /** The plain script's run paired with {@link up}. */
  readonly floor?: FloorRun;
  /** The sandbox's counters during {@link floor}. */
  readonly floorStatistics?: SandboxStatisticsSnapshot;
  /** With perClusterCredentials: the SMI certificates issued before any timed run. */
  readonly credentialIssuance?: CredentialIssuance;
  readonly readFloor?: FloorRun;
  /** Of {@link upRuns}, the one whose `up` ÷ plain script is the median (without a floor, whose `up` time is). */
  readonly up: CountedRun;
  /** Every `up` with its plain-script run, in the order run (see upRepetitions). */
  readonly upRuns?: readonly UpRun[];
  /** The run of median wall time among {@link noOpUps}. */
  readonly noOpUp?: CountedRun;
  readonly noOpUps?: readonly CountedRun[];
  /** The run of median wall time among {@link refreshes}. */
  readonly refresh?: CountedRun;
  readonly refreshes?: readonly CountedRun[];
  readonly checkpointBytes: number;
  /** With measureCheckpointWrite: one write of the whole checkpoint through the engine, after the follow-ups. */
  readonly checkpointWrite?: { readonly bytes: number; readonly timeInMs: number };
  /** Identities resolved in Cosmos after the first `up`, out of clusters × identities. */
  readonly resolvedInCosmos: number;
  readonly expectedIdentities: number;
}

/** An engine run with the sandbox's counters and CPU during it. */
export async function counted<Run extends EngineRun>(
  sandbox: Pick<FleetSandbox, "resetStatistics" | "cpuTimeInMs" | "statistics">,
  run: () => Promise<Run>,
): Promise<Run & CountedRun> {
  await sandbox.resetStatistics();
  const cpuBefore = await sandbox.cpuTimeInMs();
  const result = await run();
  const sandboxCpuTimeInMs = (await sandbox.cpuTimeInMs()) - cpuBefore;
  return { ...result, statistics: await sandbox.statistics(), sandboxCpuTimeInMs };
}

/** The run of median wall time (of an even count, the upper of the two middle runs). */
export function medianRun<Run extends EngineRun>(runs: readonly Run[]): Run {
  return medianBy(runs, (run) => run.wallTimeInMs);
}

/**
 * The `up` whose ratio to the plain-script run before it is the median (of an even count, the
 * upper of the two middle ones); without plain-script runs, the `up` of median time.
 */
export function medianUpRun<Run extends { readonly up: EngineRun; readonly floor?: FloorRun }>(runs: readonly Run[]): Run {
  return medianBy(runs, (run) => (run.floor === undefined ? run.up.wallTimeInMs : run.up.wallTimeInMs / run.floor.processWallTimeInMs));
}

/** `--parallel` of the scenario's `up`s. */
const upOptions = (options: FleetScenarioOptions): { parallel?: number } => (options.parallel === undefined ? {} : { parallel: options.parallel });

/**
 * The first `up`s (see upRepetitions): each repetition runs the plain script, then ours on a fresh
 * stack, both from the seeded documents. Returns the last stack, for the follow-ups.
 */
async function firstUps(
  options: FleetScenarioOptions,
  driver: FleetDriver<FleetSandbox>,
): Promise<{ readonly stack: BenchmarkStack; readonly upRuns: UpRun[]; readonly resolvedInCosmos: number }> {
  const { sandbox: benchmark, fleet } = driver;
  const perCluster = options.perClusterCredentials === true;
  const upRepetitions = Math.max(1, options.upRepetitions ?? 1);
  const upRuns: UpRun[] = [];
  let resolvedInCosmos = Number.POSITIVE_INFINITY;
  let stack: BenchmarkStack | undefined;
  for (let repetition = 0; repetition < upRepetitions; repetition += 1) {
    let plainFloor: FloorRun | undefined;
    let floorStatistics: SandboxStatisticsSnapshot | undefined;
    if (options.skipFloor !== true) {
      await benchmark.resetStatistics();
      plainFloor = await runFloorWorker(benchmark, perCluster ? "cluster" : "sync", floorPlan(fleet), () => benchmark.cpuTimeInMs());
      floorStatistics = await benchmark.statistics();
      options.log(
        `  floor: ${Math.round(plainFloor.processWallTimeInMs)} ms (work ${Math.round(plainFloor.workTimeInMs)} ms, ${plainFloor.lookups} lookups; ` +
          `CPU ${Math.round(plainFloor.cpuTimeInMs)} ms, sandbox ${Math.round(plainFloor.sandboxCpuTimeInMs)} ms)`,
      );
      // Back to the seeded documents, so the engine finds the same work to do.
      await benchmark.restoreDocuments();
    }
    stack?.remove();
    const fresh = await driver.openStack(`fleet-${options.clusters}x${options.identitiesPerCluster}`, { environment: options.engineEnvironment });
    stack = fresh;
    const up = await counted(benchmark, () => fresh.up(upOptions(options)));
    options.log(
      `  up: ${Math.round(up.wallTimeInMs)} ms, host peak ${Math.round(up.host.peakResidentBytes / 2 ** 20)} MB, ARM GETs ${up.statistics.arm.getRequests}` +
        (perCluster ? `, data plane requests ${up.statistics.dataPlane.requests}, Entra requests ${up.statistics.entra.requests}` : ""),
    );
    await benchmark.clearFaults();
    // The fewest any repetition resolved: every `up` must resolve every identity.
    resolvedInCosmos = Math.min(resolvedInCosmos, await benchmark.countResolved());
    upRuns.push({ up, ...(plainFloor === undefined ? {} : { floor: plainFloor }), ...(floorStatistics === undefined ? {} : { floorStatistics }) });
    if (repetition + 1 < upRepetitions) await benchmark.restoreDocuments();
  }
  return { stack: stack!, upRuns, resolvedInCosmos };
}

/**
 * No-op `up`s, then `refresh`es of `stack`, each of ours followed by the engine floor's (see
 * followUpRepetitions), and the read floor between them.
 */
async function followUps(
  options: FleetScenarioOptions,
  driver: FleetDriver<FleetSandbox>,
  stack: BenchmarkStack,
): Promise<Pick<FleetScenarioResult, "engineFloor" | "readFloor" | "noOpUp" | "noOpUps" | "refresh" | "refreshes">> {
  const { sandbox: benchmark, fleet } = driver;
  const parallel = upOptions(options);
  const repetitions = Math.max(1, options.followUpRepetitions ?? 1);
  // The engine floor over the same cluster list, in a stack of its own, after its first `up`.
  let floor: { readonly stack: BenchmarkStack; readonly up: EngineRun } | undefined;
  if (options.engineFloor === true) {
    const floorStack = await driver.openStack(`floor-${options.clusters}`, { environment: options.engineEnvironment, program: trivialFleetProgram });
    floor = { stack: floorStack, up: await floorStack.up(parallel) };
  }
  const noOpUps: CountedRun[] = [];
  const floorNoOpUps: CountedRun[] = [];
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    noOpUps.push(await counted(benchmark, () => stack.up(parallel)));
    if (floor !== undefined) floorNoOpUps.push(await counted(benchmark, () => floor.stack.up(parallel)));
  }
  const readFloor = await runFloorWorker(benchmark, "read", floorPlan(fleet), () => benchmark.cpuTimeInMs());
  // A refresh gets the slots the project's doors give it (cli/engine.ts), both stacks alike.
  const refreshParallel = options.parallel ?? refreshParallelism({ ...process.env, ...options.engineEnvironment });
  const refreshOptions = {
    ...(refreshParallel === undefined ? {} : { parallel: refreshParallel }),
    ...(options.refreshRunsProgram === true ? { runProgram: true } : {}),
  };
  const refreshes: CountedRun[] = [];
  const floorRefreshes: CountedRun[] = [];
  for (let repetition = 0; repetition < repetitions; repetition += 1) {
    refreshes.push(await counted(benchmark, () => stack.refresh(refreshOptions)));
    if (floor !== undefined) floorRefreshes.push(await counted(benchmark, () => floor.stack.refresh(refreshOptions)));
  }
  const seconds = (runs: readonly EngineRun[]): string => runs.map((run) => `${Math.round(run.wallTimeInMs)} ms`).join(", ");
  options.log(
    `  no-op up: ${seconds(noOpUps)}; read floor ${Math.round(readFloor.processWallTimeInMs)} ms; refresh ${seconds(refreshes)}, host peak ${Math.round(Math.max(...refreshes.map((run) => run.host.peakResidentBytes)) / 2 ** 20)} MB, ` +
      `Cosmos requests per refresh ${refreshes.map((run) => `${run.statistics.cosmos.requests} (${run.statistics.cosmos.documentReads} reads, ${run.statistics.cosmos.documentReadBatches} batches)`).join(", ")}`,
  );
  let engineFloor: EngineFloorResult | undefined;
  if (floor !== undefined) {
    engineFloor = {
      up: floor.up,
      noOpUp: medianRun(floorNoOpUps),
      noOpUps: floorNoOpUps,
      refresh: medianRun(floorRefreshes),
      refreshes: floorRefreshes,
      checkpointBytes: await floor.stack.checkpointBytes(),
    };
    options.log(`  engine floor: up ${Math.round(floor.up.wallTimeInMs)} ms, no-op up ${seconds(floorNoOpUps)}, refresh ${seconds(floorRefreshes)}`);
  }
  return {
    ...(engineFloor === undefined ? {} : { engineFloor }),
    readFloor,
    noOpUp: medianRun(noOpUps),
    noOpUps,
    refresh: medianRun(refreshes),
    refreshes,
  };
}

/** The benchmark's fleet: identities per cluster, latency of every ARM and Cosmos request, the hook's lookupConcurrency. */
export const benchmarkFleet = { identitiesPerCluster: 4, latencyInMs: 20, lookupConcurrency: 8 } as const;

/** What a fleet scenario at the benchmark's settings may set besides its size. */
export type BenchmarkFleetExtras = Partial<
  Pick<
    FleetScenarioOptions,
    | "parallel"
    | "engineEnvironment"
    | "followUpRepetitions"
    | "upRepetitions"
    | "subscriptions"
    | "perClusterCredentials"
    | "measureCheckpointWrite"
    | "skipFloor"
    | "refreshRunsProgram"
  >
>;

/** A fleet scenario at the benchmark's settings; with the follow-ups, the engine floor's runs too. */
export function runBenchmarkFleet(
  engine: EngineCommand,
  log: (line: string) => void,
  clusters: number,
  followUps: boolean,
  extras: BenchmarkFleetExtras = {},
): Promise<FleetScenarioResult> {
  const { identitiesPerCluster, latencyInMs, lookupConcurrency } = benchmarkFleet;
  return runFleetScenario({
    engine,
    clusters,
    identitiesPerCluster,
    armLatencyInMs: latencyInMs,
    cosmosLatencyInMs: latencyInMs,
    lookupConcurrency,
    followUps,
    engineFloor: followUps,
    log,
    ...extras,
  });
}

/**
 * Runs one fleet scenario in its own stack, against a sandbox in a process of its own
 * (sandboxProcess.ts), so that the inline program and the sandbox do not share an event loop.
 */
export async function runFleetScenario(options: FleetScenarioOptions): Promise<FleetScenarioResult> {
  const perCluster = options.perClusterCredentials === true;
  const size = { clusters: options.clusters, identitiesPerCluster: options.identitiesPerCluster };
  const benchmark = await startSandboxProcess(options);
  const seed = (): Promise<FleetClusterDescription[]> =>
    perCluster
      ? benchmark.seedTenantFleet(size)
      : benchmark.seedFleet({ ...size, ...(options.subscriptions === undefined ? {} : { subscriptions: options.subscriptions }) });
  return driveFleet({ engine: options.engine, sandbox: benchmark, seed }, async (driver) => {
    let credentialIssuance: CredentialIssuance | undefined;
    if (perCluster) {
      // What the data plane would do at each SMI's first request, done before anything is timed.
      credentialIssuance = { ...(await benchmark.issueClusterCredentials()), keyPoolSize: smiKeyPoolSize };
      options.log(
        `  SMI certificates: ${credentialIssuance.issued} issued in ${Math.round(credentialIssuance.timeInMs)} ms (sandbox CPU ${Math.round(credentialIssuance.cpuTimeInMs)} ms, ${smiKeyPoolSize} RSA keys)`,
      );
    }
    await benchmark.saveDocuments();
    const { stack, upRuns, resolvedInCosmos } = await firstUps(options, driver);
    const { up, floor: plainFloor, floorStatistics } = medianUpRun(upRuns);
    const measured = {
      clusters: options.clusters,
      ...(plainFloor === undefined ? {} : { floor: plainFloor }),
      ...(floorStatistics === undefined ? {} : { floorStatistics }),
      ...(credentialIssuance === undefined ? {} : { credentialIssuance }),
      up,
      upRuns,
      checkpointBytes: await stack.checkpointBytes(),
      resolvedInCosmos,
      expectedIdentities: options.clusters * options.identitiesPerCluster,
    };
    const followed = options.followUps ? { ...measured, ...(await followUps(options, driver, stack)) } : measured;
    return options.measureCheckpointWrite === true ? { ...followed, checkpointWrite: await stack.checkpointWrite() } : followed;
  });
}
