/** The scale parts of docs/performance.md's generated section (issue 12): targets, the scaling table and the shard model, as numbers. */
import type { EngineRun } from "./benchmarkStack";
import type { FleetScenarioResult } from "./fleetScenario";
import { cpuOfRun, measuredCosts, predictShards } from "./shardModel";
import type { ShardResult } from "./shardScenario";
import {
  formatKilobytes as kilobytes,
  formatMegabytes as megabytes,
  formatMilliseconds as milliseconds,
  formatRatio as ratio,
  linearFit,
  targetStatus as status,
} from "./statistics";

/** What the scale parts read of a run's results (report.ts BenchmarkResults has them all). */
export interface ScaleResults {
  readonly cores: number;
  /** One result per fleet size, smallest first. */
  readonly scaling: readonly FleetScenarioResult[];
  readonly shards: ShardResult;
}

/** The sizes the issue names, or the largest measured with its engine floor (--quick). */
function targetSizes(scaling: readonly FleetScenarioResult[]): { sizes: FleetScenarioResult[]; quick: boolean } {
  const withFloor = scaling.filter((result) => result.engineFloor !== undefined);
  const named = withFloor.filter((result) => result.clusters === 1000 || result.clusters === 2000);
  return named.length > 0 ? { sizes: named, quick: false } : { sizes: withFloor.slice(-1), quick: true };
}

/**
 * The log-log growth exponent of `up` between the smallest fleet of at least 200 clusters and the
 * largest, after subtracting the start-up cost (the `up` of one cluster in the same run).
 */
export function growthAfterStartUp(scaling: readonly FleetScenarioResult[]): { exponent: number; from: number; to: number; startUpInMs: number } | undefined {
  const startUp = scaling.find((result) => result.clusters === 1);
  const sized = scaling.filter((result) => result.clusters >= 200);
  if (startUp === undefined || sized.length < 2 || sized[0].clusters === sized[sized.length - 1].clusters) {
    return undefined;
  }
  const first = sized[0];
  const last = sized[sized.length - 1];
  const startUpInMs = startUp.up.wallTimeInMs;
  const exponent = Math.log((last.up.wallTimeInMs - startUpInMs) / (first.up.wallTimeInMs - startUpInMs)) / Math.log(last.clusters / first.clusters);
  return { exponent, from: first.clusters, to: last.clusters, startUpInMs };
}

/** CPU of one engine run: provider host / engine / program (the benchmark process) [/ sandbox, in its own process]. */
function cpuOf(run: EngineRun & { readonly sandboxCpuTimeInMs?: number }): string {
  const sandbox = run.sandboxCpuTimeInMs === undefined ? "" : ` / ${milliseconds(run.sandboxCpuTimeInMs)}`;
  return `${milliseconds(run.host.hostCpuTimeInMs)} / ${milliseconds(run.host.engineCpuTimeInMs)} / ${milliseconds(run.benchProcessCpuTimeInMs)}${sandbox}`;
}

/** Each first `up` of a size and its ratio to the plain-script run before it, in the order run. */
function upRunsText(result: FleetScenarioResult): string {
  const runs = result.upRuns ?? [{ up: result.up, ...(result.floor === undefined ? {} : { floor: result.floor }) }];
  return runs
    .map((run) =>
      run.floor === undefined
        ? milliseconds(run.up.wallTimeInMs)
        : `${milliseconds(run.up.wallTimeInMs)} ÷ ${milliseconds(run.floor.processWallTimeInMs)} = ${ratio(run.up.wallTimeInMs / run.floor.processWallTimeInMs)}`,
    )
    .join(", ");
}

/** The highest provider-host peak among a size's `refresh` runs. */
function refreshPeakBytes(result: FleetScenarioResult): number | undefined {
  const runs = result.refreshes ?? (result.refresh === undefined ? [] : [result.refresh]);
  return runs.length === 0 ? undefined : Math.max(...runs.map((run) => run.host.peakResidentBytes));
}

/** Rows 8–13 of the targets table. */
export function scaleTargetRows(results: ScaleResults): string[] {
  const { sizes, quick } = targetSizes(results.scaling);
  const note = quick ? " (--quick: largest size measured)" : "";
  const rows: string[] = [];
  for (const [index, result] of sizes.entries()) {
    const suffix = sizes.length > 1 ? ("ab"[index] ?? "") : "";
    const floor = result.engineFloor!;
    const noOp = result.noOpUp!.wallTimeInMs / floor.noOpUp.wallTimeInMs;
    const refresh = result.refresh!.wallTimeInMs / floor.refresh.wallTimeInMs;
    rows.push(
      `| 8${suffix} | No-op \`up\`, ${result.clusters} clusters${note} | ${milliseconds(result.noOpUp!.wallTimeInMs)} | engine floor (trivial provider, same layout): ${milliseconds(floor.noOpUp.wallTimeInMs)} | ${ratio(noOp)} | ≤ 1.3× | ${status(noOp <= 1.3, `by ${ratio(noOp / 1.3)}`)} |`,
      `| 9${suffix} | \`refresh\` before the recheck time, ${result.clusters} clusters${note} | ${milliseconds(result.refresh!.wallTimeInMs)} | engine floor: ${milliseconds(floor.refresh.wallTimeInMs)} | ${ratio(refresh)} | ≤ 1.5× | ${status(refresh <= 1.5, `by ${ratio(refresh / 1.5)}`)} |`,
    );
  }
  const largest = results.scaling[results.scaling.length - 1];
  const plainFloor = largest.floor?.processWallTimeInMs ?? Number.NaN;
  const upRatio = largest.up.wallTimeInMs / plainFloor;
  rows.push(
    `| 10 | \`up\`, ${largest.clusters} clusters × 4${largest.clusters === 2000 ? "" : " (target is at 2,000)"} | ${milliseconds(largest.up.wallTimeInMs)} | plain script: ${milliseconds(plainFloor)} | ${ratio(upRatio)} | ≤ 1.4× | ${status(upRatio <= 1.4, `by ${ratio(upRatio / 1.4)}`)} |`,
  );
  const growth = growthAfterStartUp(results.scaling);
  rows.push(
    growth === undefined
      ? "| 11 | `up` growth | not measured (needs 1 cluster and two sizes ≥ 200) | — | — | ≤ 1.05 | not measured |"
      : `| 11 | \`up\` growth ${growth.from} → ${growth.to} clusters, start-up (\`up\` of 1 cluster, ${milliseconds(growth.startUpInMs)}) subtracted | log-log exponent ${growth.exponent.toFixed(2)} | 1 = linear | — | ≤ 1.05 | ${status(growth.exponent <= 1.05)} |`,
  );
  const statePerCluster = largest.checkpointBytes / largest.clusters;
  const floorState = sizes[sizes.length - 1]?.engineFloor;
  rows.push(
    `| 12 | State per cluster (${largest.clusters} clusters) | ${kilobytes(statePerCluster)} | engine floor: ${floorState === undefined ? "—" : kilobytes(floorState.checkpointBytes / sizes[sizes.length - 1].clusters)} | — | ≤ 4 KB | ${status(statePerCluster <= 4096, `by ${ratio(statePerCluster / 4096)}`)} |`,
  );
  const upPeak = largest.up.host.peakResidentBytes;
  const refreshPeak = refreshPeakBytes(largest);
  rows.push(
    `| 13 | Provider-host peak RSS, ${largest.clusters} clusters: \`up\` / \`refresh\` | ${megabytes(upPeak)} / ${refreshPeak === undefined ? "—" : megabytes(refreshPeak)} | — | — | < 250 MB | ${status(upPeak < 250 * 2 ** 20 && (refreshPeak ?? 0) < 250 * 2 ** 20)} |`,
  );
  return rows;
}

/** Section 5: every fleet size, against both floors. */
export function scaleSection(results: ScaleResults): string[] {
  const upFit = linearFit(results.scaling.map((result) => [result.clusters, result.up.wallTimeInMs] as const));
  const memoryFit = linearFit(results.scaling.map((result) => [result.clusters, result.up.host.peakResidentBytes / 2 ** 20] as const));
  const optional = (value: number | undefined): string => (value === undefined ? "—" : milliseconds(value));
  const optionalMegabytes = (value: number | undefined): string => (value === undefined ? "—" : megabytes(value));
  const times = (runs: ReadonlyArray<{ readonly wallTimeInMs: number }> | undefined): string =>
    (runs ?? []).map((run) => milliseconds(run.wallTimeInMs)).join(", ");
  const repeated = results.scaling.filter((result) => (result.noOpUps?.length ?? 0) > 1 && result.engineFloor !== undefined);
  const over = (value: number | undefined, floor: number | undefined): string =>
    value === undefined || floor === undefined ? "" : ` (${ratio(value / floor)})`;
  return [
    "## 5. Scaling",
    "",
    repeated.length === 0
      ? ""
      : `Runs at ${repeated.map((result) => result.clusters).join(" and ")} clusters: no-op \`up\` and \`refresh\` ${repeated[0].noOpUps!.length} each, first \`up\` ${repeated[0].upRuns?.length ?? 1}; the table shows medians (for \`up\`, the run of median ratio to its plain script), every run is listed below it.`,
    "",
    "| Clusters | `up` (/ plain script) | Engine floor `up` | No-op `up` (/ engine floor) | Engine floor no-op | `refresh` (/ engine floor) | Engine floor `refresh` | State per cluster | Host peak `up` / `refresh` | CPU of `up`: host / engine / program / sandbox |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...results.scaling.map((result) => {
      const floor = result.engineFloor;
      return `| ${result.clusters} | ${milliseconds(result.up.wallTimeInMs)}${over(result.up.wallTimeInMs, result.floor?.processWallTimeInMs)} | ${optional(floor?.up.wallTimeInMs)} | ${optional(result.noOpUp?.wallTimeInMs)}${over(result.noOpUp?.wallTimeInMs, floor?.noOpUp.wallTimeInMs)} | ${optional(floor?.noOpUp.wallTimeInMs)} | ${optional(result.refresh?.wallTimeInMs)}${over(result.refresh?.wallTimeInMs, floor?.refresh.wallTimeInMs)} | ${optional(floor?.refresh.wallTimeInMs)} | ${kilobytes(result.checkpointBytes / result.clusters)} | ${megabytes(result.up.host.peakResidentBytes)} / ${optionalMegabytes(refreshPeakBytes(result))} | ${cpuOf(result.up)} |`;
    }),
    "",
    ...repeated.map(
      (result) =>
        `- ${result.clusters} clusters, in the order run: \`up\` ${upRunsText(result)}; no-op \`up\` ${times(result.noOpUps)} (engine floor ${times(result.engineFloor!.noOpUps)}); \`refresh\` ${times(result.refreshes)} (engine floor ${times(result.engineFloor!.refreshes)}).`,
    ),
    ...(repeated.length === 0
      ? []
      : [
          "",
          "`refresh` against the engine floor's plus the read floor (one Cosmos read per cluster):",
          "",
          "| Clusters | `refresh` | Engine floor `refresh` + read floor | `refresh` / that sum | CPU of `refresh`: host / engine / program / sandbox | Engine floor's: host / engine / program |",
          "|---|---|---|---|---|---|",
          ...repeated.map((result) => {
            const refresh = result.refresh!;
            const floor = result.engineFloor!.refresh;
            const readFloor = result.readFloor?.processWallTimeInMs ?? Number.NaN;
            return `| ${result.clusters} | ${milliseconds(refresh.wallTimeInMs)} | ${milliseconds(floor.wallTimeInMs)} + ${milliseconds(readFloor)} = ${milliseconds(floor.wallTimeInMs + readFloor)} | ${ratio(refresh.wallTimeInMs / (floor.wallTimeInMs + readFloor))} | ${cpuOf(refresh)} | ${cpuOf(floor)} |`;
          }),
        ]),
    ...(repeated.length === 0 ? [] : [""]),
    ...upCpuBudget(results),
    `Fit \`up\` = a + b·clusters: a = ${milliseconds(upFit.intercept)}, b = ${milliseconds(upFit.slope)} per cluster, R² = ${upFit.rSquared.toFixed(3)}.`,
    `Host peak RSS = ${memoryFit.intercept.toFixed(0)} MB + ${(memoryFit.slope * 1024).toFixed(0)} KB per cluster (R² ${memoryFit.rSquared.toFixed(3)}).`,
    `Every size resolved every identity in Cosmos: ${results.scaling.every((result) => result.resolvedInCosmos === result.expectedIdentities) ? "yes" : "**no**"}.`,
  ];
}

/**
 * Target 10 by CPU: an engine-driven `up` does the engine floor's work (engine, program, host for N
 * dynamic resources) and the plain script's (the SDK clients, and the sandbox answering them), all
 * on this machine's cores. Their CPU over the cores is what the `up` would take if every core were
 * busy all the time; the ratio of that to the plain script shows how far the target is reachable here.
 */
export function upCpuBudget(results: ScaleResults): string[] {
  const sizes = results.scaling.filter((result) => result.engineFloor !== undefined && result.floor?.cpuTimeInMs !== undefined);
  if (sizes.length === 0) {
    return [];
  }
  return [
    `CPU of \`up\`, every process, against the engine floor's \`up\` plus the plain script's, over this machine's ${results.cores} cores:`,
    "",
    "| Clusters | `up` CPU: host / engine / program / sandbox = total | Engine floor `up` CPU | Plain script CPU: worker + sandbox | (Engine floor + plain script) / cores | / plain script | `up` wall / CPU over cores |",
    "|---|---|---|---|---|---|---|",
    ...sizes.map((result) => {
      const floor = result.floor!;
      const engineFloorCpu = cpuOfRun(result.engineFloor!.up);
      const plainCpu = floor.cpuTimeInMs + floor.sandboxCpuTimeInMs;
      const least = (engineFloorCpu + plainCpu) / results.cores;
      const ours = cpuOfRun(result.up);
      return `| ${result.clusters} | ${cpuOf(result.up)} = ${milliseconds(ours)} | ${milliseconds(engineFloorCpu)} | ${milliseconds(floor.cpuTimeInMs)} + ${milliseconds(floor.sandboxCpuTimeInMs)} = ${milliseconds(plainCpu)} | ${milliseconds(least)} | ${ratio(least / floor.processWallTimeInMs)} | ${ratio(result.up.wallTimeInMs / (ours / results.cores))} |`;
    }),
    "",
  ];
}

/** Section 8: the shard model, and its check against the measured shard run. */
export function shardSection(results: ScaleResults): string[] {
  const costs = measuredCosts(results.scaling);
  const largest = results.scaling[results.scaling.length - 1];
  const stateBytesPerCluster = largest.checkpointBytes / largest.clusters;
  const shards = results.shards;
  const check = predictShards(costs.up, stateBytesPerCluster, shards.clusters, shards.shards, results.cores);
  const checkDrift = predictShards(costs.driftCheck, stateBytesPerCluster, shards.clusters, shards.shards, results.cores);
  const measuredState = shards.checkpointBytes.reduce((sum, bytes) => sum + bytes, 0);
  const fleetRow = (shardCount: number): string => {
    const up = predictShards(costs.up, stateBytesPerCluster, 20_000, shardCount, results.cores);
    const drift = predictShards(costs.driftCheck, stateBytesPerCluster, 20_000, shardCount, results.cores);
    return `| 20,000 | ${shardCount} | ${up.largestShard} | ${milliseconds(up.separateMachinesInMs)} | ${milliseconds(drift.separateMachinesInMs)} | ${milliseconds(up.oneMachineInMs)} | ${megabytes(up.stateBytesPerShard)} | ${megabytes(up.stateBytesTotal)} |`;
  };
  const cost = (label: string, value: { fixedInMs: number; perClusterInMs: number; cpuPerClusterInMs: number; startUpCpuInMs: number }): string =>
    `- ${label}: start-up a = ${milliseconds(value.fixedInMs)}, b = ${value.perClusterInMs.toFixed(2)} ms per cluster; CPU: ${milliseconds(value.startUpCpuInMs)} per stack + c = ${value.cpuPerClusterInMs.toFixed(2)} ms per cluster (engine + provider host + program and sandbox)`;
  return [
    "## 8. Shards: a 20,000-cluster fleet",
    "",
    "Model inputs (`bench/performance/shardModel.ts`), from this run's single-stack costs:",
    "",
    cost("`up`", costs.up),
    cost("drift check (`refresh`, then no-op `up`)", costs.driftCheck),
    `- state: ${kilobytes(stateBytesPerCluster)} per cluster (at ${largest.clusters} clusters)`,
    "",
    "Predicted:",
    "",
    "| Clusters | Shards | Largest shard | `up`, separate machines | Drift check, separate machines | `up`, all on one 2-core machine | State per shard | State total |",
    "|---|---|---|---|---|---|---|---|",
    fleetRow(10),
    fleetRow(40),
    "",
    `Check: ${shards.clusters} clusters in ${shards.shards} shards (${shards.clustersPerShard.join(", ")} clusters), all started at once on this machine against one sandbox:`,
    "",
    "| | Model | Measured | Measured / model |",
    "|---|---|---|---|",
    `| \`up\`, all shards | ${milliseconds(check.oneMachineInMs)} | ${milliseconds(shards.upWallTimeInMs)} (shards ${shards.shardUpTimesInMs.map(milliseconds).join(", ")}) | ${ratio(shards.upWallTimeInMs / check.oneMachineInMs)} |`,
    `| Drift check, all shards | ${milliseconds(checkDrift.oneMachineInMs)} | ${milliseconds(shards.driftCheckWallTimeInMs)} | ${ratio(shards.driftCheckWallTimeInMs / checkDrift.oneMachineInMs)} |`,
    `| CPU of the shards' \`up\`, all processes | ${milliseconds(check.cpuInMs)} | ${milliseconds(shards.upCpuInMs)} | ${ratio(shards.upCpuInMs / check.cpuInMs)} |`,
    `| State, all shards | ${megabytes(check.stateBytesTotal)} | ${megabytes(measuredState)} | ${ratio(measuredState / check.stateBytesTotal)} |`,
    "",
    `The shards' \`up\` got ${(shards.upCpuInMs / shards.upWallTimeInMs).toFixed(2)} of this machine's ${results.cores} cores on average (CPU / wall).`,
    `${shards.resolvedInCosmos} / ${shards.expectedIdentities} identities resolved in Cosmos after the shards' \`up\`; CPU during it of the benchmark process (4 inline programs) ${milliseconds(shards.benchProcessCpuInMs)}, of the sandbox ${milliseconds(shards.sandboxCpuInMs)}.`,
    `The same run's single stack of ${largest.clusters} clusters: \`up\` ${milliseconds(largest.up.wallTimeInMs)}, CPU ${milliseconds(cpuOfRun(largest.up))}.`,
    "",
  ];
}
