/**
 * How one stack's cost grows with its clusters (`npm run bench -- --growth`), the shard size that
 * follows from it, and a region run as the engines run it against the shard model's prediction:
 * numbers for docs/performance.md's "Growth" block. Pure: the scenarios measured, this computes.
 */
import { defaultMaxShardClusters } from "../../resources/shards/shardPlan";
import type { FleetScenarioResult } from "./fleetScenario";
import type { RegionResult, RegionRun } from "./regionScenario";
import type { ShardPrediction, StackCosts } from "./shardModel";
import { cpuOfRun, largestShard, predictShards, stackCosts } from "./shardModel";
import type { LinearFit } from "./statistics";
import {
  formatKilobytes as kilobytes,
  formatMegabytes as megabytes,
  formatMilliseconds as milliseconds,
  formatRatio as ratio,
  linearFit,
  sumOfCounts,
} from "./statistics";

/** What a shard must stay within: a drift check's wall time on a 2-core machine and the provider host's peak (issue 55's targets). */
export const shardLimits = { driftCheckInMs: 5 * 60_000, hostPeakBytes: 200 * 2 ** 20 } as const;

/** One stack's measurements at one size. */
export interface GrowthPoint {
  readonly clusters: number;
  readonly upInMs: number;
  /** NaN where the plain script was not run (growthOnly skips it at the largest sizes). */
  readonly plainScriptInMs: number;
  readonly upCpuInMs: number;
  readonly noOpUpInMs: number;
  readonly noOpFloorInMs: number;
  readonly refreshInMs: number;
  readonly refreshFloorInMs: number;
  /** `refresh`, then a no-op `up`: what a scheduled run does when no recheck is due. */
  readonly driftCheckInMs: number;
  readonly driftCheckCpuInMs: number;
  /** The provider host's highest peak RSS over the `up`, the no-op `up` and the `refresh`. */
  readonly hostPeakBytes: number;
  readonly checkpointBytes: number;
  /** One write of the whole checkpoint through the engine (`pulumi stack import`, CLI start-up included). */
  readonly checkpointWriteInMs: number;
}

/** The point of one fleet scenario run with its follow-ups, engine floor and checkpoint write. */
export function growthPoint(result: FleetScenarioResult): GrowthPoint {
  const { noOpUp, refresh, engineFloor, floor, checkpointWrite } = result;
  if (noOpUp === undefined || refresh === undefined || engineFloor === undefined || checkpointWrite === undefined) {
    throw new Error(`the growth run at ${result.clusters} clusters lacks its follow-ups, engine floor or checkpoint write`);
  }
  return {
    clusters: result.clusters,
    upInMs: result.up.wallTimeInMs,
    plainScriptInMs: floor?.processWallTimeInMs ?? Number.NaN,
    upCpuInMs: cpuOfRun(result.up),
    noOpUpInMs: noOpUp.wallTimeInMs,
    noOpFloorInMs: engineFloor.noOpUp.wallTimeInMs,
    refreshInMs: refresh.wallTimeInMs,
    refreshFloorInMs: engineFloor.refresh.wallTimeInMs,
    driftCheckInMs: refresh.wallTimeInMs + noOpUp.wallTimeInMs,
    driftCheckCpuInMs: cpuOfRun(refresh) + cpuOfRun(noOpUp),
    hostPeakBytes: Math.max(result.up.host.peakResidentBytes, noOpUp.host.peakResidentBytes, refresh.host.peakResidentBytes),
    checkpointBytes: checkpointWrite.bytes,
    checkpointWriteInMs: checkpointWrite.timeInMs,
  };
}

/** A measure's line through the sizes and its log-log exponent (1: linear; above 1: faster than linear). */
export interface GrowthFit extends LinearFit {
  /** Slope of log(value) over log(clusters), least squares: the power the measure grows with. */
  readonly exponent: number;
}

export function growthFit(points: ReadonlyArray<readonly [number, number]>): GrowthFit {
  const line = linearFit(points);
  const logLog = linearFit(points.map(([clusters, value]) => [Math.log(clusters), Math.log(value)] as const));
  return { ...line, exponent: logLog.slope };
}

/** The measures the growth table fits, by name. */
export const growthMeasures = {
  up: (point: GrowthPoint) => point.upInMs,
  upCpu: (point: GrowthPoint) => point.upCpuInMs,
  driftCheck: (point: GrowthPoint) => point.driftCheckInMs,
  driftCheckCpu: (point: GrowthPoint) => point.driftCheckCpuInMs,
  hostPeak: (point: GrowthPoint) => point.hostPeakBytes,
  checkpointBytes: (point: GrowthPoint) => point.checkpointBytes,
  checkpointWrite: (point: GrowthPoint) => point.checkpointWriteInMs,
} as const;

export type GrowthFits = { readonly [Measure in keyof typeof growthMeasures]: GrowthFit };

export function growthFits(points: readonly GrowthPoint[]): GrowthFits {
  const fit = (measure: (point: GrowthPoint) => number): GrowthFit => growthFit(points.map((point) => [point.clusters, measure(point)] as const));
  return {
    up: fit(growthMeasures.up),
    upCpu: fit(growthMeasures.upCpu),
    driftCheck: fit(growthMeasures.driftCheck),
    driftCheckCpu: fit(growthMeasures.driftCheckCpu),
    hostPeak: fit(growthMeasures.hostPeak),
    checkpointBytes: fit(growthMeasures.checkpointBytes),
    checkpointWrite: fit(growthMeasures.checkpointWrite),
  };
}

/** The largest n with intercept + slope·n ≤ limit (Infinity when the measure does not grow; 0 when even the intercept is over). */
export function largestWithin(fit: LinearFit, limit: number): number {
  if (fit.intercept > limit) return 0;
  if (fit.slope <= 0) return Number.POSITIVE_INFINITY;
  return Math.floor((limit - fit.intercept) / fit.slope);
}

/** The default shard size and what bounds it. */
export interface ShardSize {
  /** Clusters a shard should hold, rounded down to a hundred; 0 when no measured size meets the bounds. */
  readonly clusters: number;
  /** The largest stack whose drift check stays under the limit, by the fit. */
  readonly byDriftCheck: number;
  /** The largest stack whose `up` (a run in which every recheck is due does an `up`'s work) stays under the drift check's limit, by the fit. */
  readonly byUp: number;
  /** The largest stack whose provider host stays under the limit, by the fit; 0 when no size does (not a bound then: it is missed at every size). */
  readonly byHostPeak: number;
  /** The largest measured size whose `up` takes at most {@link costTolerance} more CPU per cluster than the cheapest measured size's. */
  readonly byCostPerCluster: number;
  readonly boundBy: "drift check" | "up" | "host memory" | "cost per cluster";
}

/**
 * How much more CPU per cluster than the cheapest measured size a shard's `up` may take: past it,
 * splitting the stack costs less. 5 %: the spread of one run's cost on this machine (the production
 * block's interquartile ranges are 1–7 % wide), so a smaller rise is no rise.
 */
export const costTolerance = 0.05;

/**
 * The shard size: the largest stack within every bound that can be met. The time bounds come from the
 * fits; the cost bound from the measured sizes (a stack whose `up` costs more per cluster than a smaller
 * one's is better split); the memory bound only when some size meets it.
 */
export function shardSize(points: readonly GrowthPoint[], limits: typeof shardLimits = shardLimits): ShardSize {
  const fits = growthFits(points);
  const byDriftCheck = largestWithin(fits.driftCheck, limits.driftCheckInMs);
  const byUp = largestWithin(fits.up, limits.driftCheckInMs);
  const byHostPeak = largestWithin(fits.hostPeak, limits.hostPeakBytes);
  const cheapest = Math.min(...points.map((point) => point.upCpuInMs / point.clusters));
  const byCostPerCluster = Math.max(
    0,
    ...points.filter((point) => point.upCpuInMs / point.clusters <= cheapest * (1 + costTolerance)).map((point) => point.clusters),
  );
  const bounds: Array<[ShardSize["boundBy"], number]> = [
    ["drift check", byDriftCheck],
    ["up", byUp],
    ["cost per cluster", byCostPerCluster],
    ...(byHostPeak > 0 ? [["host memory", byHostPeak] as [ShardSize["boundBy"], number]] : []),
  ];
  const [boundBy, largest] = bounds.reduce((tightest, bound) => (bound[1] < tightest[1] ? bound : tightest));
  return { clusters: Math.floor(largest / 100) * 100, byDriftCheck, byUp, byHostPeak, byCostPerCluster, boundBy };
}

/** The fewest shards whose largest (hashing's spread included, shardModel.ts largestShard) holds at most `size` clusters. */
export function shardsFor(clusters: number, size: number): number {
  if (size <= 0) throw new RangeError("a shard must hold at least one cluster");
  let shards = Math.max(1, Math.ceil(clusters / size));
  while (largestShard(clusters, shards) > size) shards += 1;
  return shards;
}

/** The shard model's inputs from the growth runs: one stack's `up`, `refresh` and drift check. */
export interface GrowthModel {
  readonly up: StackCosts;
  readonly refresh: StackCosts;
  readonly driftCheck: StackCosts;
  readonly stateBytesPerCluster: number;
}

/** The model fitted to the growth points; `startUpCpuInMs` is the CPU of an `up` of one cluster in the same run. */
export function growthModel(points: readonly GrowthPoint[], refreshCpu: readonly number[], startUpCpuInMs: number): GrowthModel {
  const largest = points[points.length - 1];
  return {
    up: stackCosts(
      points.map((point) => ({ clusters: point.clusters, wallTimeInMs: point.upInMs, cpuTimeInMs: point.upCpuInMs })),
      startUpCpuInMs,
    ),
    refresh: stackCosts(
      points.map((point, index) => ({ clusters: point.clusters, wallTimeInMs: point.refreshInMs, cpuTimeInMs: refreshCpu[index] })),
      startUpCpuInMs,
    ),
    driftCheck: stackCosts(
      points.map((point) => ({ clusters: point.clusters, wallTimeInMs: point.driftCheckInMs, cpuTimeInMs: point.driftCheckCpuInMs })),
      2 * startUpCpuInMs,
    ),
    stateBytesPerCluster: largest.checkpointBytes / largest.clusters,
  };
}

/** What the model predicts for the region's two runs on one machine of `cores` cores. */
export interface RegionPrediction {
  /** An empty `refresh` (its start-up), then `up`. */
  readonly adoption: ShardPrediction;
  readonly driftCheck: ShardPrediction;
}

export function predictRegion(model: GrowthModel, clusters: number, shards: number, cores: number): RegionPrediction {
  // The adoption run's empty refresh: one more start-up, in time and in CPU, per shard.
  const adoptionCosts: StackCosts = {
    ...model.up,
    fixedInMs: model.up.fixedInMs + model.refresh.fixedInMs,
    startUpCpuInMs: model.up.startUpCpuInMs + model.refresh.startUpCpuInMs,
  };
  return {
    adoption: predictShards(adoptionCosts, model.stateBytesPerCluster, clusters, shards, cores),
    driftCheck: predictShards(model.driftCheck, model.stateBytesPerCluster, clusters, shards, cores),
  };
}

/** Everything the "Growth" block shows. */
export interface GrowthResults {
  readonly commandLine: string;
  readonly date: string;
  readonly durationInMs: number;
  readonly machine: string;
  readonly cores: number;
  readonly latencyInMs: number;
  readonly lookupConcurrency: number;
  /** The `up` of one cluster: the start-up. */
  readonly startUp: FleetScenarioResult;
  /** One result per size, smallest first. */
  readonly sizes: readonly FleetScenarioResult[];
  /** Sizes whose runs failed, with what failed: the rest is reported without them. */
  readonly failedSizes?: ReadonlyArray<{ readonly clusters: number; readonly error: string }>;
  /** Sizes at which the plain script was not run, and why. */
  readonly plainScriptSkipped?: { readonly above: number; readonly reason: string };
  readonly region?: RegionResult;
}

const perCluster = (value: number, clusters: number): string => `${(value / clusters).toFixed(2)} ms`;
const fitText = (fit: GrowthFit, unit: (value: number) => string, perUnit: string): string =>
  `${unit(fit.intercept)} + ${perUnit} · n (R² ${fit.rSquared.toFixed(3)})`;

function regionRow(label: string, measured: RegionRun, predicted: ShardPrediction, cores: number): string[] {
  const cpu = measured.shardsCpuInMs + measured.sandboxCpuInMs;
  const slowest = Math.max(...measured.shardTimesInMs);
  return [
    `| ${label}: wall, every shard at once on ${cores} cores | ${milliseconds(predicted.oneMachineInMs)} | ${milliseconds(measured.wallTimeInMs)} | ${ratio(measured.wallTimeInMs / predicted.oneMachineInMs)} |`,
    `| ${label}: CPU of the shards and the sandbox | ${milliseconds(predicted.cpuInMs)} | ${milliseconds(cpu)} (Azurite ${milliseconds(measured.azuriteCpuInMs)} more) | ${ratio(cpu / predicted.cpuInMs)} |`,
    `| ${label}: the largest shard alone (separate machines) | ${milliseconds(predicted.separateMachinesInMs)} | — (slowest shard here ${milliseconds(slowest)}, sharing the cores) | — |`,
  ];
}

/** The generated "Growth" block. */
export function renderGrowthReport(results: GrowthResults): string {
  const points = results.sizes.map(growthPoint);
  const fits = growthFits(points);
  const size = shardSize(points);
  const count = (clusters: number): string => (Number.isFinite(clusters) ? String(clusters) : "any number of");
  const startUpCpuInMs = cpuOfRun(results.startUp.up);
  const model = growthModel(
    points,
    results.sizes.map((result) => cpuOfRun(result.refresh!)),
    startUpCpuInMs,
  );
  const largest = points[points.length - 1];
  const lines = [
    `Run: \`${results.commandLine}\` on ${results.date} (${(results.durationInMs / 60_000).toFixed(1)} min).`,
    "",
    `Machine: ${results.machine}.`,
    `Production's credential mode: each cluster × 4 identities in its own tenant and subscription, read as its own service managed identity; ${results.latencyInMs} ms per request; \`lookupConcurrency\` ${results.lookupConcurrency}. One run of each operation per size, each with its floor right after it (the plain script right before the \`up\`). Each \`refresh\` runs the program (\`--run-program\`), the engine floor's too, as a shard's refresh does (tools/shard-entrypoint.sh): the drift check is the shard's.`,
    "",
    "| Clusters | `up` (/ plain script) | `up` CPU (per cluster) | No-op `up` (/ engine floor) | `refresh` (/ engine floor) | Drift check: `refresh` + no-op `up` | Drift check CPU (per cluster) | Host peak | State (per cluster) | One checkpoint write |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...points.map(
      (point) =>
        `| ${point.clusters} | ${milliseconds(point.upInMs)} (${Number.isNaN(point.plainScriptInMs) ? "no plain script" : ratio(point.upInMs / point.plainScriptInMs)}) | ${milliseconds(point.upCpuInMs)} (${perCluster(point.upCpuInMs, point.clusters)}) | ` +
        `${milliseconds(point.noOpUpInMs)} (${ratio(point.noOpUpInMs / point.noOpFloorInMs)}) | ${milliseconds(point.refreshInMs)} (${ratio(point.refreshInMs / point.refreshFloorInMs)}) | ` +
        `${milliseconds(point.driftCheckInMs)} | ${milliseconds(point.driftCheckCpuInMs)} (${perCluster(point.driftCheckCpuInMs, point.clusters)}) | ${megabytes(point.hostPeakBytes)} | ` +
        `${megabytes(point.checkpointBytes)} (${kilobytes(point.checkpointBytes / point.clusters)}) | ${milliseconds(point.checkpointWriteInMs)} |`,
    ),
    ...(results.plainScriptSkipped === undefined
      ? []
      : ["", `No plain script above ${results.plainScriptSkipped.above} clusters: ${results.plainScriptSkipped.reason}.`]),
    ...(results.failedSizes ?? []).flatMap((failed) => ["", `**${failed.clusters} clusters failed**, and are left out of the fits: ${failed.error}`]),
    "",
    `The \`up\` of one cluster (the start-up): ${milliseconds(results.startUp.up.wallTimeInMs)}, CPU ${milliseconds(startUpCpuInMs)}.`,
    "",
    "Fits over the sizes above (n clusters); the exponent is the slope of log(measure) over log(n), 1 for linear growth:",
    "",
    "| Measure | Fit | Exponent |",
    "|---|---|---|",
    `| \`up\` wall time | ${fitText(fits.up, milliseconds, `${fits.up.slope.toFixed(2)} ms`)} | ${fits.up.exponent.toFixed(2)} |`,
    `| \`up\` CPU, every process | ${fitText(fits.upCpu, milliseconds, `${fits.upCpu.slope.toFixed(2)} ms`)} | ${fits.upCpu.exponent.toFixed(2)} |`,
    `| Drift check wall time | ${fitText(fits.driftCheck, milliseconds, `${fits.driftCheck.slope.toFixed(2)} ms`)} | ${fits.driftCheck.exponent.toFixed(2)} |`,
    `| Drift check CPU, every process | ${fitText(fits.driftCheckCpu, milliseconds, `${fits.driftCheckCpu.slope.toFixed(2)} ms`)} | ${fits.driftCheckCpu.exponent.toFixed(2)} |`,
    `| Provider host peak RSS | ${fitText(fits.hostPeak, megabytes, `${kilobytes(fits.hostPeak.slope)}`)} | ${fits.hostPeak.exponent.toFixed(2)} |`,
    `| State | ${fitText(fits.checkpointBytes, megabytes, `${kilobytes(fits.checkpointBytes.slope)}`)} | ${fits.checkpointBytes.exponent.toFixed(2)} |`,
    `| One checkpoint write | ${fitText(fits.checkpointWrite, milliseconds, `${(fits.checkpointWrite.slope * 1000).toFixed(1)} ms per 1,000 clusters`)} | ${fits.checkpointWrite.exponent.toFixed(2)} |`,
    "",
    `With a checkpoint after every step (\`PULUMI_SKIP_CHECKPOINTS=false\`), an \`up\` of n clusters writes about n checkpoints: at ${largest.clusters} clusters, ${largest.clusters} × ${milliseconds(largest.checkpointWriteInMs)} ≈ ${milliseconds(largest.clusters * largest.checkpointWriteInMs)} of writing alone, against the ${milliseconds(largest.upInMs)} the \`up\` took with only its final checkpoint.`,
    "",
    `**Shard size**, by the fits: a drift check under ${shardLimits.driftCheckInMs / 60_000} minutes allows ${count(size.byDriftCheck)} clusters, an \`up\` under ${shardLimits.driftCheckInMs / 60_000} minutes (a run in which every recheck is due does an \`up\`'s work) ${count(size.byUp)}; ` +
      `the \`up\`'s CPU per cluster stays within ${costTolerance * 100} % of its lowest up to ${size.byCostPerCluster} clusters (${points.map((point) => `${(point.upCpuInMs / point.clusters).toFixed(2)} ms at ${point.clusters}`).join(", ")}); ` +
      (size.byHostPeak > 0
        ? `a provider host under ${megabytes(shardLimits.hostPeakBytes)} allows ${count(size.byHostPeak)}. `
        : `no size keeps the provider host under ${megabytes(shardLimits.hostPeakBytes)} (its fit starts at ${megabytes(fits.hostPeak.intercept)}): that target is missed at every size, and bounds none. `) +
      (size.clusters > 0
        ? `By this run, a shard should hold at most **${size.clusters}** clusters (bound by the ${size.boundBy}); \`aro-hcp-shard-plan\`'s default (resources/shards/shardPlan.ts defaultMaxShardClusters) is ${defaultMaxShardClusters}${size.clusters === defaultMaxShardClusters ? "" : ", not this run's size: see below the block"}. By the model's spread of the hash, a 10,000-cluster region takes ${shardsFor(10_000, size.clusters)} shards, a 20,000-cluster one ${shardsFor(20_000, size.clusters)}.`
        : `No measured size meets the bounds.`),
    "",
  ];
  const region = results.region;
  if (region !== undefined) {
    const predicted = predictRegion(model, region.clusters, region.shards, results.cores);
    const adoptionWrites = sumOfCounts(region.adoption.statistics.cosmos.documentWritesByMethod);
    const driftWrites = sumOfCounts(region.driftCheck.statistics.cosmos.documentWritesByMethod);
    lines.push(
      `**A region as the engines run it**: ${region.clusters} clusters in ${region.shards} shards (${region.clustersPerShard.join(", ")} clusters), each shard's tools/shard-entrypoint.sh a process of its own started at once with its JOB_COMPLETION_INDEX, as an Indexed Job's pods; one sandbox (its ${region.credentialIssuance.issued} SMI certificates issued before, in ${milliseconds(region.credentialIssuance.timeInMs)}), one Azurite as the shared \`azblob://\` backend, the plan and the run records beside the state. The model (section 8's, shardModel.ts) is fitted to the single stacks above.`,
      "",
      "| | Model | Measured | Measured / model |",
      "|---|---|---|---|",
      ...regionRow("Adoption (empty `refresh`, then `up`)", region.adoption, predicted.adoption, results.cores),
      ...regionRow("Drift check (`refresh`, then no-op `up`)", region.driftCheck, predicted.driftCheck, results.cores),
      `| State, all shards | ${megabytes(predicted.driftCheck.stateBytesTotal)} | ${megabytes(region.checkpointBytes.reduce((sum, bytes) => sum + bytes, 0))} | ${ratio(region.checkpointBytes.reduce((sum, bytes) => sum + bytes, 0) / predicted.driftCheck.stateBytesTotal)} |`,
      "",
      `Adoption: shards' exit codes ${region.adoption.exitCodes.join(", ")}, region verdict **${region.adoption.verdict.verdict}** (exit ${region.adoption.verdict.code}); ${region.resolvedInCosmos} / ${region.expectedIdentities} identities resolved in Cosmos; ${adoptionWrites} Cosmos writes; provider hosts' highest peak ${megabytes(region.adoption.host.peakResidentBytes)}. ` +
        `Drift check: exit codes ${region.driftCheck.exitCodes.join(", ")}, verdict **${region.driftCheck.verdict.verdict}** (exit ${region.driftCheck.verdict.code}); ${driftWrites} Cosmos writes, ${region.driftCheck.statistics.arm.getRequests} ARM, ${region.driftCheck.statistics.entra.requests} Entra and ${region.driftCheck.statistics.dataPlane.requests} data plane requests; hosts' peak ${megabytes(region.driftCheck.host.peakResidentBytes)}.`,
      ...[...region.adoption.verdict.problems, ...region.driftCheck.verdict.problems].map((problem) => `- verdict problem: ${problem}`),
      ...(
        [
          ["adoption", region.adoption],
          ["drift check", region.driftCheck],
        ] as const
      ).flatMap(([label, run]) =>
        run.verdict.causes.map(
          (each) => `- ${label}: ${each.clusters} cluster${each.clusters === 1 ? "" : "s"} failed: ${each.cause.replace(/\s+/g, " ").slice(0, 300)}`,
        ),
      ),
      "",
    );
  }
  return lines.join("\n");
}
