/**
 * Two parts of docs/performance.md's generated section, as numbers: the fleet in
 * `clusterServiceManagedIdentity` mode against its floors, and the two opt-ins for large fleets
 * with and without.
 */
import type { SandboxStatisticsSnapshot } from "../../sandbox/sandboxStatistics";
import type { EngineRun } from "./benchmarkStack";
import type { FleetScenarioResult } from "./fleetScenario";
import type { OptInEngineRun, OptInResult, OptInRun } from "./optInScenario";
import { pairCount, pairSpreadLines, productionPairs } from "./productionPairs";
import type { Pairs, RunCost } from "./runCost";
import {
  formatMegabytes as megabytes,
  formatMilliseconds as milliseconds,
  formatRatio as ratio,
  formatRatioSpread,
  median,
  spread,
  sumOfCounts,
  targetStatus as status,
} from "./statistics";

/** Requests to the data plane, Entra and ARM: none expected when nothing is due. */
function credentialChainRequests(statistics: SandboxStatisticsSnapshot | undefined): number {
  return statistics === undefined ? Number.NaN : statistics.dataPlane.requests + statistics.entra.requests + statistics.arm.getRequests;
}

/**
 * The production targets of rows 14a–14c and 14f (issue 55's, at 2,000 clusters): `up` against
 * the plain script, a no-op `up` and a `refresh` against the engine floor, and the provider host's
 * peak.
 */
const productionTargets = { upRatio: 1.2, noOpUpRatio: 1.15, refreshRatio: 1.25, hostPeakMegabytes: 200 } as const;

/**
 * Rows 14a–14f of the targets table. Each ratio is the median [interquartile range] of the
 * per-pair ratios (productionPairs.ts), and a target is judged on the median; the result and the
 * floor shown are the pair whose ratio is the median.
 */
export function perClusterTargetRows(result: FleetScenarioResult): string[] {
  const pairs = productionPairs(result);
  const cells = (
    each: Pairs | undefined,
    floorLabel: string,
  ): { readonly result: string; readonly floor: string; readonly ratio: string; readonly median: number } =>
    each === undefined
      ? { result: "—", floor: `${floorLabel}: —`, ratio: "—", median: Number.NaN }
      : {
          result: milliseconds(each.medianPair.ours.wallTimeInMs),
          floor: `${floorLabel}: ${milliseconds(each.medianPair.floor.wallTimeInMs)}`,
          ratio: formatRatioSpread(each.wallRatio),
          median: each.wallRatio.median,
        };
  const up = cells(pairs.up, "plain script, same data plane, token, ARM and Cosmos calls");
  const noOp = cells(pairs.noOpUp, "engine floor");
  const refresh = cells(pairs.refresh, "engine floor");
  const idle = credentialChainRequests(result.noOpUp?.statistics) + credentialChainRequests(result.refresh?.statistics);
  const layout = `${result.clusters} clusters × 4, each in its own tenant and subscription, \`clusterServiceManagedIdentity\``;
  const stateKb = result.checkpointBytes / result.clusters / 1024;
  const upPeak = Math.max(...(result.upRuns ?? [{ up: result.up }]).map((run) => run.up.host.peakResidentBytes));
  const refreshPeak = Math.max(...(result.refreshes ?? (result.refresh === undefined ? [] : [result.refresh])).map((run) => run.host.peakResidentBytes));
  const peak = Math.max(upPeak, refreshPeak);
  const hostPeakBytes = productionTargets.hostPeakMegabytes * 2 ** 20;
  const judged = (cell: typeof up, target: number): string => status(cell.median <= target, `by ${ratio(cell.median / target)}`);
  const count = pairCount(pairs);
  return [
    `| 14a | \`up\`, ${layout}, both halves of the status (${count}, median [IQR]) | ${up.result} | ${up.floor} | ${up.ratio} | ≤ ${productionTargets.upRatio}× | ${judged(up, productionTargets.upRatio)} |`,
    `| 14b | No-op \`up\`, same fleet (${count}) | ${noOp.result} | ${noOp.floor} | ${noOp.ratio} | ≤ ${productionTargets.noOpUpRatio}× | ${judged(noOp, productionTargets.noOpUpRatio)} |`,
    `| 14c | \`refresh\` before the recheck time, same fleet (${count}) | ${refresh.result} | ${refresh.floor} | ${refresh.ratio} | ≤ ${productionTargets.refreshRatio}× | ${judged(refresh, productionTargets.refreshRatio)} |`,
    `| 14d | Data plane, Entra and ARM requests of the no-op \`up\` and the \`refresh\` | ${idle} | — | — | 0 | ${status(idle === 0)} |`,
    `| 14e | State per cluster, same fleet | ${stateKb.toFixed(2)} KB | — | — | ≤ 4 KB | ${status(stateKb <= 4, `by ${ratio(stateKb / 4)}`)} |`,
    `| 14f | Provider-host peak RSS, same fleet: \`up\` / \`refresh\` | ${megabytes(upPeak)} / ${megabytes(refreshPeak)} | — | — | < ${productionTargets.hostPeakMegabytes} MB | ${status(peak < hostPeakBytes, `by ${ratio(peak / hostPeakBytes)}`)} |`,
  ];
}

/** The time of one side of the pair of median ratio, or a dash without pairs. */
function pairTime(pairs: Pairs | undefined, side: (pair: Pairs["medianPair"]) => RunCost): string {
  return pairs === undefined ? "—" : milliseconds(side(pairs.medianPair).wallTimeInMs);
}

/** Every pair as `ours ÷ floor = ratio`, in the order run. */
function pairList(pairs: Pairs | undefined): string {
  if (pairs === undefined) return "—";
  return pairs.ours
    .map(
      (ours, index) =>
        `${milliseconds(ours.wallTimeInMs)} ÷ ${milliseconds(pairs.floors[index].wallTimeInMs)} = ${ratio(ours.wallTimeInMs / pairs.floors[index].wallTimeInMs)}`,
    )
    .join(", ");
}

/** One column of the calls table: what a run asked of the sandbox. */
export function calls(statistics: SandboxStatisticsSnapshot | undefined): string[] {
  if (statistics === undefined) return ["—", "—", "—", "—", "—"];
  return [
    `${statistics.dataPlane.requests} (${statistics.dataPlane.challenges} challenged)`,
    `${statistics.entra.discoveryRequests} / ${statistics.entra.tokensIssued}`,
    `${statistics.arm.getRequests} (max ${statistics.arm.maxInFlight} in flight)`,
    `${statistics.cosmos.documentReads} / ${sumOfCounts(statistics.cosmos.documentWritesByMethod)}`,
    `${statistics.cosmos.requests}`,
  ];
}

/** Section 9: the fleet in `clusterServiceManagedIdentity` mode. */
export function perClusterSection(result: FleetScenarioResult): string[] {
  const floor = result.floor;
  const engineFloor = result.engineFloor;
  const issuance = result.credentialIssuance;
  const cpu = (run: EngineRun & { readonly sandboxCpuTimeInMs?: number }): string =>
    `${milliseconds(run.host.hostCpuTimeInMs)} / ${milliseconds(run.host.engineCpuTimeInMs)} / ${milliseconds(run.benchProcessCpuTimeInMs)}${run.sandboxCpuTimeInMs === undefined ? "" : ` / ${milliseconds(run.sandboxCpuTimeInMs)}`}`;
  const upStatistics = result.up.statistics;
  const pairs = productionPairs(result);
  const lines = [
    "## 9. Each cluster's own credential (`clusterServiceManagedIdentity`)",
    "",
    `${result.clusters} clusters × 4 identities, each cluster in its own tenant and subscription (seedTenantFleet), its identities readable by its own service managed identity only; ` +
      "the hook asks the sandbox's Managed Identities data plane for each SMI's certificate as the first-party application. " +
      `The sandbox answers ARM, Cosmos, Entra and the data plane after the same latency.` +
      (issuance === undefined
        ? ""
        : ` Before anything was timed, the sandbox issued the ${issuance.issued} SMI certificates (${issuance.keyPoolSize} RSA keys shared among them) in ${milliseconds(issuance.timeInMs)} (its CPU ${milliseconds(issuance.cpuTimeInMs)}).`),
    "",
    "| | Time (pair of median ratio) | Floor (same pair) | Ratio, median [IQR] | Pairs, in the order run |",
    "|---|---|---|---|---|",
    `| \`up\` | ${pairTime(pairs.up, (pair) => pair.ours)} | plain script (floorWorker.ts mode \`cluster\`): ${floor === undefined ? "—" : `${pairTime(pairs.up, (pair) => pair.floor)} (its own work ${milliseconds(floor.workTimeInMs)})`} | ${pairs.up === undefined ? "—" : formatRatioSpread(pairs.up.wallRatio)} | ${pairList(pairs.up)} |`,
    `| No-op \`up\` | ${pairTime(pairs.noOpUp, (pair) => pair.ours)} | engine floor: ${pairTime(pairs.noOpUp, (pair) => pair.floor)} | ${pairs.noOpUp === undefined ? "—" : formatRatioSpread(pairs.noOpUp.wallRatio)} | ${pairList(pairs.noOpUp)} |`,
    `| \`refresh\` | ${pairTime(pairs.refresh, (pair) => pair.ours)} | engine floor: ${pairTime(pairs.refresh, (pair) => pair.floor)}; + read floor ${result.readFloor === undefined ? "—" : milliseconds(result.readFloor.processWallTimeInMs)} | ${pairs.refresh === undefined ? "—" : `${formatRatioSpread(pairs.refresh.wallRatio)}; ${result.readFloor === undefined ? "—" : ratio(pairs.refresh.medianPair.ours.wallTimeInMs / (pairs.refresh.medianPair.floor.wallTimeInMs + result.readFloor.processWallTimeInMs))}`} | ${pairList(pairs.refresh)} |`,
    "",
    ...pairSpreadLines(result),
    "What each run asked of the sandbox:",
    "",
    "| Run | Data plane requests | Entra discovery / tokens | ARM GETs | Cosmos reads / writes | Cosmos requests |",
    "|---|---|---|---|---|---|",
    `| \`up\` | ${calls(upStatistics).join(" | ")} |`,
    `| plain script | ${calls(result.floorStatistics).join(" | ")} |`,
    `| no-op \`up\` | ${calls(result.noOpUp?.statistics).join(" | ")} |`,
    `| \`refresh\` | ${calls(result.refresh?.statistics).join(" | ")} |`,
    "",
    `CPU of \`up\`, provider host / engine / program / sandbox: ${cpu(result.up)}; the plain script: ${floor === undefined ? "—" : `${milliseconds(floor.cpuTimeInMs)} + sandbox ${milliseconds(floor.sandboxCpuTimeInMs)}`}.`,
    ...cpuPerCluster(result),
    ...(result.noOpUp === undefined || result.refresh === undefined || engineFloor === undefined
      ? []
      : [
          `CPU, provider host / engine / program (/ sandbox): no-op \`up\` ${cpu(result.noOpUp)} against the engine floor's ${cpu(engineFloor.noOpUp)}; ` +
            `\`refresh\` ${cpu(result.refresh)} against the engine floor's ${cpu(engineFloor.refresh)}.`,
        ]),
    `Provider host peak RSS (highest of the runs): \`up\` ${(result.upRuns ?? [{ up: result.up }]).map((run) => megabytes(run.up.host.peakResidentBytes)).join(", ")}; \`refresh\` ${(result.refreshes ?? []).map((run) => megabytes(run.host.peakResidentBytes)).join(", ")}.`,
    `State per cluster: ${(result.checkpointBytes / result.clusters / 1024).toFixed(1)} KB. ${result.resolvedInCosmos} / ${result.expectedIdentities} identities resolved in Cosmos after every \`up\`.`,
    "",
  ];
  return lines;
}

/**
 * CPU per cluster of the `up` whose ratio is the median: the credential chain's (the provider host,
 * which makes every data plane, Entra, ARM and Cosmos call, plus the sandbox answering them) against
 * the plain script's (the worker plus the sandbox answering it), and the engine's share apart.
 */
function cpuPerCluster(result: FleetScenarioResult): string[] {
  const floor = result.floor;
  const sandbox = result.up.sandboxCpuTimeInMs;
  if (floor === undefined || sandbox === undefined) return [];
  const perCluster = (value: number): string => `${(value / result.clusters).toFixed(2)} ms`;
  const chain = result.up.host.hostCpuTimeInMs + sandbox;
  const plain = floor.cpuTimeInMs + floor.sandboxCpuTimeInMs;
  const engine = result.up.host.engineCpuTimeInMs + result.up.benchProcessCpuTimeInMs;
  // The same ratio in every pair, for its spread.
  const pairs = (result.upRuns ?? []).filter((run) => run.floor !== undefined);
  const chainRatios = pairs.map((run) => (run.up.host.hostCpuTimeInMs + run.up.sandboxCpuTimeInMs) / (run.floor!.cpuTimeInMs + run.floor!.sandboxCpuTimeInMs));
  return [
    `CPU per cluster of the chain: provider host + sandbox ${perCluster(chain)} (host ${perCluster(result.up.host.hostCpuTimeInMs)}, sandbox ${perCluster(sandbox)}) ` +
      `against the plain script's worker + sandbox ${perCluster(plain)} (worker ${perCluster(floor.cpuTimeInMs)}, sandbox ${perCluster(floor.sandboxCpuTimeInMs)}): ${ratio(chain / plain)}` +
      `${chainRatios.length < 2 ? "" : ` (over the ${chainRatios.length} pairs ${formatRatioSpread(spread(chainRatios))})`}; ` +
      `the engine and the program add ${perCluster(engine)}.`,
  ];
}

/**
 * The generated block of `npm run bench -- --production` (section 9 and its targets alone, for a
 * machine where the whole benchmark does not fit the time at hand).
 */
export function productionReport(
  result: FleetScenarioResult,
  run: {
    readonly date: string;
    readonly durationInMs: number;
    readonly machine: string;
    readonly latencyInMs: number;
    readonly lookupConcurrency: number;
    readonly engineParallel: number;
    readonly refreshParallel: number;
    /** As typed, e.g. `npm run bench -- --production --clusters 200 --pairs 3`. */
    readonly commandLine: string;
  },
): string {
  return [
    `Run: \`${run.commandLine}\` on ${run.date} (${(run.durationInMs / 60_000).toFixed(1)} min): section 9 alone, with its targets; ${pairCount(productionPairs(result))} of ours and the floor's, interleaved.`,
    "",
    `Machine: ${run.machine}.`,
    `Sandbox latency ${run.latencyInMs} ms per request (ARM, Cosmos, Entra, the data plane); \`lookupConcurrency\` ${run.lookupConcurrency}; the engine's \`--parallel\` ${run.engineParallel}, and ${run.refreshParallel} for a \`refresh\`.`,
    "",
    "| # | Measurement | Result | Floor (same run) | Ratio, median [IQR] | Target (on the median) | Status |",
    "|---|---|---|---|---|---|---|",
    ...perClusterTargetRows(result),
    "",
    ...perClusterSection(result).map((line) => (line.startsWith("## ") ? `#${line}` : line)),
  ].join("\n");
}

/** Medians of one variant's runs. */
function medians(runs: readonly OptInRun[], pick: (run: OptInRun) => number): number {
  return runs.length === 0 ? Number.NaN : median(runs.map(pick));
}

/** Section 10: the opt-ins with and without. */
export function optInSection(result: OptInResult): string[] {
  const row = (run: OptInRun, index: number): string => {
    const part = (engineRun: OptInEngineRun): string =>
      `${milliseconds(engineRun.wallTimeInMs)} | ${milliseconds(engineRun.benchProcessCpuTimeInMs)} / ${milliseconds(engineRun.host.engineCpuTimeInMs)} / ${milliseconds(engineRun.host.hostCpuTimeInMs)} | ${megabytes(engineRun.programHeapPeakBytes)}`;
    return `| ${index + 1} | ${run.optIns ? "with" : "without"} | ${part(run.up)} | ${part(run.noOpUp)} | ${(run.checkpointBytes / result.clusters / 1024).toFixed(2)} KB |`;
  };
  const withRuns = result.runs.filter((run) => run.optIns);
  const withoutRuns = result.runs.filter((run) => !run.optIns);
  const difference = (pick: (run: OptInRun) => number): number => medians(withoutRuns, pick) - medians(withRuns, pick);
  const signed = (value: number, format: (magnitude: number) => string): string => `${value < 0 ? "−" : "+"}${format(Math.abs(value))}`;
  const share = (pick: (run: OptInRun) => number): string => `${((difference(pick) / medians(withRuns, pick)) * 100).toFixed(0)} %`;
  /** Without − with for one engine run of each variant: wall time (and its share), program and engine CPU, program heap peak. */
  const differences = (label: string, of: (run: OptInRun) => OptInEngineRun): string => {
    const delta = (pick: (engineRun: OptInEngineRun) => number, format = milliseconds): string =>
      signed(
        difference((run) => pick(of(run))),
        format,
      );
    return `${label} ${delta((run) => run.wallTimeInMs)} (${share((run) => of(run).wallTimeInMs)}), program CPU ${delta((run) => run.benchProcessCpuTimeInMs)}, engine CPU ${delta((run) => run.host.engineCpuTimeInMs)}, program heap peak ${delta((run) => run.programHeapPeakBytes, megabytes)}`;
  };
  return [
    "## 10. The opt-ins for large fleets, with and without",
    "",
    `${result.clusters} clusters × 4 identities (process credential, 4 subscriptions): the project's program (index.ts, which calls \`quietSdkRegistrationDebugLogs()\` and \`registerWithoutStackTraces()\`) against the same fleet declared the same way with both off. ` +
      "Each run a fresh stack from the same documents: its first `up`, then a no-op `up`; runs in the order made.",
    "",
    "| Run | Opt-ins | `up` | CPU: program / engine / host | Program heap peak | No-op `up` | CPU: program / engine / host | Program heap peak | State per cluster |",
    "|---|---|---|---|---|---|---|---|---|",
    ...result.runs.map(row),
    "",
    `Without − with, medians: ${differences("`up`", (run) => run.up)}; ${differences("no-op `up`", (run) => run.noOpUp)}; ` +
      `state ${signed(difference((run) => run.checkpointBytes) / result.clusters, (bytes) => `${Math.round(bytes)} bytes`)} per cluster.`,
    "",
  ];
}
