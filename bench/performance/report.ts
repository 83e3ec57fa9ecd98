/** Renders the measured part of docs/performance.md from one benchmark run: numbers and tables; what they mean is written in docs/performance.md itself. */
import type { FleetScenarioResult } from "./fleetScenario";
import type { HostMemoryResult } from "./hostMemoryScenario";
import type { ProviderCreateResult } from "./providerScenario";
import { formatMegabytes as megabytes, formatMilliseconds as milliseconds, formatRatio as ratio, linearFit, targetStatus as status } from "./statistics";
import type { ThrottleResult } from "./throttleScenario";
import type { ThrottleFleetResult } from "./throttleFleet";
import { throttleFleetSection, throttleFleetTargetRows } from "./throttleFleet";
import type { ShardResult } from "./shardScenario";
import { scaleSection, scaleTargetRows, shardSection } from "./scaleReport";
import { optInSection, perClusterSection, perClusterTargetRows } from "./credentialReport";
import type { OptInResult } from "./optInScenario";

/** Medians of the repeated 200-cluster scenario. */
export interface FleetMedians {
  readonly repetitions: number;
  readonly upInMs: number;
  readonly upTimes: readonly number[];
  readonly floorInMs: number;
  readonly floorWorkInMs: number;
  readonly noOpUpInMs: number;
  readonly readFloorInMs: number;
  readonly refreshInMs: number;
  readonly upArmRequests: number;
  readonly upArmMaxInFlight: number;
  readonly upCosmosWrites: number;
  readonly upUnconditionalWrites: number;
  readonly upTokenRequests: number;
  readonly upHostPeakBytes: number;
  readonly upHostProcesses: number;
  readonly upHostCpuInMs: number;
  readonly upEngineCpuInMs: number;
  readonly noOpArmRequests: number;
  readonly noOpCosmosWrites: number;
  readonly noOpCosmosReads: number;
  readonly refreshArmRequests: number;
  readonly refreshCosmosWrites: number;
  readonly refreshCosmosReads: number;
  /** Batch requests those reads went in (the rest were point reads). */
  readonly refreshCosmosReadBatches: number;
  readonly resolvedInCosmos: number;
  readonly expectedIdentities: number;
  readonly checkpointBytes: number;
}

/** Everything one run measured. */
export interface BenchmarkResults {
  readonly commandLine: string;
  readonly date: string;
  readonly cores: number;
  readonly cpuModel: string;
  readonly memoryInBytes: number;
  readonly nodeVersion: string;
  readonly pulumiVersion: string;
  readonly quick: boolean;
  readonly latencyInMs: number;
  readonly lookupConcurrency: number;
  readonly durationInMs: number;
  readonly providerCreates: readonly ProviderCreateResult[];
  readonly mainFleet: FleetMedians;
  /** One result per fleet size, smallest first (the 200-cluster one is the main fleet's median run). */
  readonly scaling: readonly FleetScenarioResult[];
  readonly hostMemory: readonly HostMemoryResult[];
  readonly throttle: ThrottleResult;
  readonly shards: ShardResult;
  /** The engine's `--parallel` in every run unless a row says otherwise (cli/engine.ts). */
  readonly engineParallel: number;
  /** The `--parallel` of every `refresh` unless a row says otherwise (cli/engine.ts, `refreshParallelism`). */
  readonly refreshParallel: number;
  readonly comparisons?: {
    /** The engine's own default, 4 × cores. */
    readonly engineOwnParallel: number;
    readonly perStepCheckpoints: FleetScenarioResult;
    /** 200 clusters at the engine's own `--parallel`. */
    readonly engineOwnParallelSmall: FleetScenarioResult;
    /** The largest size at the engine's own `--parallel`. */
    readonly engineOwnParallelLarge: FleetScenarioResult;
    /** The largest size at the default settings, each cluster in a subscription of its own. */
    readonly subscriptionPerCluster: FleetScenarioResult;
  };
  /** Issue 10, item 3 (full runs only). */
  readonly throttleFleet?: ThrottleFleetResult;
  /** Issue 26: the largest size in `clusterServiceManagedIdentity` mode, each cluster in its own tenant. */
  readonly perClusterCredentials?: FleetScenarioResult;
  /** Issue 27 item 3: the opt-ins for large fleets, with and without. */
  readonly optIns?: OptInResult;
}

/** The generated section of docs/performance.md (bench/generatedSection.ts puts it between the page's markers). */
export function renderReport(results: BenchmarkResults): string {
  const create50 = results.providerCreates.find((result) => result.identities === 50);
  if (create50 === undefined || create50.sequentialTimeInMs === undefined) {
    throw new Error("the 50-identity provider create (with its sequential floor) is missing");
  }
  const fleet = results.mainFleet;
  const createVsFloor = create50.createTimeInMs / create50.concurrencyFloorInMs;
  const sequentialVsCreate = create50.sequentialTimeInMs / create50.createTimeInMs;
  const upVsFloor = fleet.upInMs / fleet.floorInMs;
  const createFit = linearFit(results.providerCreates.map((result) => [result.identities, result.createTimeInMs] as const));
  const throttle = results.throttle;
  const throttleMaxInFlight = Math.max(...throttle.runs.map((run) => run.armMaxInFlight));
  const lines: string[] = [];
  const push = (...more: string[]): void => {
    lines.push(...more);
  };

  push(
    `Run: \`${results.commandLine}\` on ${results.date} (${(results.durationInMs / 60_000).toFixed(1)} min).`,
    "",
    `Machine: ${results.cores} cores (\`os.availableParallelism()\`), ${results.cpuModel}, ${megabytes(results.memoryInBytes)} RAM; Node ${results.nodeVersion}; Pulumi CLI v${results.pulumiVersion} (built from Go modules, file backend).`,
    `Sandbox latency ${results.latencyInMs} ms per ARM request (and per Cosmos request in the engine scenarios); \`lookupConcurrency\` ${results.lookupConcurrency}; the engine's \`--parallel\` ${results.engineParallel} (\`PULUMI_PARALLEL\`, cli/engine.ts), and ${results.refreshParallel} for a \`refresh\` (\`refreshParallelism\`), unless a scenario says otherwise.${results.quick ? " **Quick run**: fewer repetitions and sizes." : ""}`,
    "",
    "## Targets",
    "",
    "| # | Measurement | Result | Floor (same run) | Ratio | Target | Status |",
    "|---|---|---|---|---|---|---|",
    `| 1a | Provider create, 1 cluster × 50 identities (median of ${create50.createTimes.length}) | ${milliseconds(create50.createTimeInMs)} | ceil(50 / ${results.lookupConcurrency}) × ${results.latencyInMs} ms = ${milliseconds(create50.concurrencyFloorInMs)} | ${ratio(createVsFloor)} | ≤ 1.25× | ${status(createVsFloor <= 1.25, `by ${ratio(createVsFloor / 1.25)}`)} |`,
    `| 1b | Upstream-style sequential lookup, 50 GETs through the same arm-msi client | ${milliseconds(create50.sequentialTimeInMs)} | provider create ${milliseconds(create50.createTimeInMs)} | ${ratio(sequentialVsCreate)} faster | ≥ 6× faster | ${status(sequentialVsCreate >= 6, `by ${ratio(6 / sequentialVsCreate)}`)} |`,
    `| 2 | \`pulumi up\`, 200 clusters × 4 identities (median of ${fleet.repetitions}) | ${milliseconds(fleet.upInMs)} | plain script, same GETs, reads and patches: ${milliseconds(fleet.floorInMs)} | ${ratio(upVsFloor)} | ≤ 3× | ${status(upVsFloor <= 3, `by ${ratio(upVsFloor / 3)}`)} |`,
    `| 3 | No-op \`pulumi up\` right after | ${milliseconds(fleet.noOpUpInMs)}; ${fleet.noOpArmRequests} ARM requests, ${fleet.noOpCosmosWrites} Cosmos writes | one Cosmos read per cluster: ${milliseconds(fleet.readFloorInMs)} | ${ratio(fleet.noOpUpInMs / fleet.readFloorInMs)} | 0 ARM, 0 writes | ${status(fleet.noOpArmRequests === 0 && fleet.noOpCosmosWrites === 0)} |`,
    `| 4 | \`pulumi refresh\` before any recheck is due | ${milliseconds(fleet.refreshInMs)}; ${fleet.refreshArmRequests} ARM requests, ${fleet.refreshCosmosWrites} writes, ${fleet.refreshCosmosReads} reads (${fleet.refreshCosmosReadBatches} batches) | ${milliseconds(fleet.readFloorInMs)} | ${ratio(fleet.refreshInMs / fleet.readFloorInMs)} | 0 ARM, 0 writes | ${status(fleet.refreshArmRequests === 0 && fleet.refreshCosmosWrites === 0)} |`,
    `| 5b | Provider create by identities (1, 10, 50, 200) | ${milliseconds(createFit.slope)} per identity, R² ${createFit.rSquared.toFixed(3)} | floor slope ${(results.latencyInMs / results.lookupConcurrency).toFixed(1)} ms per identity | ${ratio(createFit.slope / (results.latencyInMs / results.lookupConcurrency))} | linear or better | ${status(createFit.rSquared >= 0.95)} |`,
    `| 6a | Throttling converges (30 % 429, Retry-After 1 s) | ${throttle.resolvedInCosmos} / ${throttle.expectedIdentities} identities resolved after ${throttle.runs.length} \`up\` run(s) | — | — | all resolved | ${status(throttle.resolvedInCosmos === throttle.expectedIdentities)} |`,
    `| 6b | Retry-After honoured | waited ${milliseconds(throttle.waitedInMs)}; ${throttle.earlyRetries} early retries | asked ${milliseconds(throttle.retryAfterOfRetriedInMs)} (sandbox counter: ${milliseconds(throttle.retryAfterRequestedInMs)}) | ${ratio(throttle.waitedInMs / Math.max(1, throttle.retryAfterOfRetriedInMs))} | ≥ 1×, no early retry | ${status(throttle.earlyRetries === 0 && throttle.waitedInMs >= throttle.retryAfterOfRetriedInMs)} |`,
    `| 6c | ARM requests in flight under throttling | max ${throttleMaxInFlight} | lookupConcurrency ${results.lookupConcurrency} | — | ≤ ${results.lookupConcurrency} | ${status(throttleMaxInFlight <= results.lookupConcurrency)} |`,
    ...(results.throttleFleet === undefined ? [] : throttleFleetTargetRows(results.throttleFleet)),
    `| 7 | Token requests per provider process (200-cluster \`up\`) | ${fleet.upTokenRequests} | one per process | — | 1 | ${status(fleet.upTokenRequests === 1)} |`,
    ...scaleTargetRows(results),
    ...(results.perClusterCredentials === undefined ? [] : perClusterTargetRows(results.perClusterCredentials)),
    "",
  );

  push(
    "## 1. Provider create (real implementation and SDK clients, in a process of its own)",
    "",
    "| Identities | Create (median) | First create | n GETs through the limiter (measured) | Floor ceil(n/c)×latency | Create / floor | ARM GETs | Max in flight | Token requests |",
    "|---|---|---|---|---|---|---|---|---|",
    ...results.providerCreates.map(
      (result) =>
        `| ${result.identities} | ${milliseconds(result.createTimeInMs)} | ${milliseconds(result.coldCreateTimeInMs)} | ${milliseconds(result.concurrentTimeInMs)} | ${milliseconds(result.concurrencyFloorInMs)} | ${ratio(result.createTimeInMs / result.concurrencyFloorInMs)} | ${result.armRequests} | ${result.armMaxInFlight} | ${result.tokenRequests} |`,
    ),
    "",
    `Every identity was resolved in Cosmos: ${results.providerCreates.every((result) => result.resolvedEveryIdentity) ? "yes" : "**no**"}.`,
    "",
    "## 2–4. A fleet through the real engine",
    "",
    `200 clusters × 4 identities, ${results.latencyInMs} ms on every ARM and Cosmos request.`,
    "",
    "| | Time (median) | Runs |",
    "|---|---|---|",
    `| \`pulumi up\` | ${milliseconds(fleet.upInMs)} | ${fleet.upTimes.map(milliseconds).join(", ")} |`,
    `| Floor (whole process / its own work) | ${milliseconds(fleet.floorInMs)} / ${milliseconds(fleet.floorWorkInMs)} | |`,
    `| No-op \`pulumi up\` | ${milliseconds(fleet.noOpUpInMs)} | ${fleet.noOpCosmosReads} Cosmos reads |`,
    `| Floor: one Cosmos read per cluster | ${milliseconds(fleet.readFloorInMs)} | |`,
    `| \`pulumi refresh\` | ${milliseconds(fleet.refreshInMs)} | |`,
    "",
    `First \`up\`: ${fleet.upArmRequests} ARM GETs (max ${fleet.upArmMaxInFlight} in flight), ${fleet.upCosmosWrites} Cosmos writes (${fleet.upUnconditionalWrites} without If-Match),`,
    `${fleet.upTokenRequests} token request(s), ${fleet.upHostProcesses} provider host process(es) peaking at ${megabytes(fleet.upHostPeakBytes)};`,
    `CPU: provider host ${milliseconds(fleet.upHostCpuInMs)}, engine ${milliseconds(fleet.upEngineCpuInMs)}. ${fleet.resolvedInCosmos} / ${fleet.expectedIdentities} identities resolved in Cosmos.`,
    `Checkpoint after the run: ${megabytes(fleet.checkpointBytes)} (${(fleet.checkpointBytes / 200 / 1024).toFixed(1)} KB per cluster).`,
    "",
    ...scaleSection(results),
    `Provider create = ${milliseconds(createFit.intercept)} + ${createFit.slope.toFixed(2)} ms per identity (R² ${createFit.rSquared.toFixed(3)}).`,
    "",
    "Provider-host peak memory by identities per cluster (one cluster, real engine):",
    "",
    "| Identities | `up` | Host peak RSS | Resolved |",
    "|---|---|---|---|",
    ...results.hostMemory.map(
      (result) => `| ${result.identities} | ${milliseconds(result.upInMs)} | ${megabytes(result.hostPeakBytes)} | ${result.resolved ? "yes" : "**no**"} |`,
    ),
    "",
    "## 6. Throttling",
    "",
    `${throttle.expectedIdentities / 4} clusters × 4 identities; the sandbox answers 30 % of ARM requests (seeded) with 429 and \`Retry-After: 1\`.`,
    "",
    "| `up` run | Time | Result | ARM requests | 429 answers | Max in flight |",
    "|---|---|---|---|---|---|",
    ...throttle.runs.map(
      (run, index) =>
        `| ${index + 1} | ${milliseconds(run.wallTimeInMs)} | ${run.succeeded ? "succeeded" : "failed (lookups out of retries; status persisted)"} | ${run.armRequests} | ${run.throttled} | ${run.armMaxInFlight} |`,
    ),
    "",
    `Retry-After asked ${milliseconds(throttle.retryAfterRequestedInMs)} in total; for the ${milliseconds(throttle.retryAfterOfRetriedInMs)} of it that was followed by a retry, the clients waited ${milliseconds(throttle.waitedInMs)}.`,
    `${throttle.abandoned} throttled lookup(s) not retried within their run. Token requests: ${throttle.tokenRequests}.`,
    "",
    ...(results.throttleFleet === undefined ? [] : throttleFleetSection(results.throttleFleet)),
  );
  if (results.comparisons !== undefined) {
    push(...settingsSection(results, results.comparisons));
  }
  push(...shardSection(results));
  if (results.perClusterCredentials !== undefined) push(...perClusterSection(results.perClusterCredentials));
  if (results.optIns !== undefined) push(...optInSection(results.optIns));
  return `${lines.join("\n")}\n`;
}

/** Section 7: the engine settings the project's doors choose, each set back to the engine's own. */
function settingsSection(results: BenchmarkResults, comparisons: NonNullable<BenchmarkResults["comparisons"]>): string[] {
  const toFloor = (value: number | undefined, floor: number | undefined): string =>
    value === undefined ? "—" : `${milliseconds(value)}${floor === undefined ? "" : ` (${ratio(value / floor)})`}`;
  const row = (clusters: number, label: string, result: FleetScenarioResult | undefined): string => {
    if (result === undefined) {
      return `| ${clusters} | ${label} | — | — | — | — | — | — |`;
    }
    const up = toFloor(result.up.wallTimeInMs, result.floor?.processWallTimeInMs);
    const noOp = toFloor(result.noOpUp?.wallTimeInMs, result.engineFloor?.noOpUp.wallTimeInMs);
    const refresh = toFloor(result.refresh?.wallTimeInMs, result.engineFloor?.refresh.wallTimeInMs);
    const peaks = `${megabytes(result.up.host.peakResidentBytes)} / ${result.refresh === undefined ? "—" : megabytes(result.refresh.host.peakResidentBytes)}`;
    return `| ${clusters} | ${label} | ${up} | ${noOp} | ${refresh} | ${milliseconds(result.up.host.engineCpuTimeInMs)} | ${milliseconds(result.up.host.hostCpuTimeInMs)} | ${peaks} |`;
  };
  const large = comparisons.engineOwnParallelLarge.clusters;
  const chosen = `default (\`PULUMI_PARALLEL=${results.engineParallel}\`, \`refresh --parallel ${results.refreshParallel}\`, \`PULUMI_SKIP_CHECKPOINTS=true\`)`;
  const own = `engine's own \`--parallel ${comparisons.engineOwnParallel}\` (4 × cores)`;
  return [
    "## 7. Engine settings compared",
    "",
    "One run per row; the default rows are the runs of section 5 at those sizes.",
    "",
    "| Clusters | Setting | `up` (/ plain script) | No-op `up` (/ engine floor) | `refresh` (/ engine floor) | Engine CPU (`up`) | Host CPU (`up`) | Host peak `up` / `refresh` |",
    "|---|---|---|---|---|---|---|---|",
    row(
      200,
      chosen,
      results.scaling.find((point) => point.clusters === 200),
    ),
    row(200, "per-step checkpoints (`PULUMI_SKIP_CHECKPOINTS=false`)", comparisons.perStepCheckpoints),
    row(200, own, comparisons.engineOwnParallelSmall),
    row(
      large,
      chosen,
      results.scaling.find((point) => point.clusters === large),
    ),
    row(large, own, comparisons.engineOwnParallelLarge),
    row(large, "default, each cluster in its own subscription", comparisons.subscriptionPerCluster),
    "",
  ];
}
