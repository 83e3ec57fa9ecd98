/**
 * Section 9's runs as pairs (runCost.ts): each first `up` with the plain-script run made right
 * before it, each no-op `up` and `refresh` with the engine floor's made right after it; and the
 * lines that show their ratios' spread and the CPU of every process per cluster.
 */
import type { FleetScenarioResult } from "./fleetScenario";
import type { Pairs } from "./runCost";
import { engineRunCost, formatProcessCpu, medianCpuPerCluster, pairsOf, plainScriptCost, totalCpuInMs } from "./runCost";
import { formatRatioSpread, median } from "./statistics";

/** The pairs of each operation; an operation the scenario did not run with its floor has none. */
export interface ProductionPairs {
  readonly up?: Pairs;
  readonly noOpUp?: Pairs;
  readonly refresh?: Pairs;
}

export function productionPairs(result: FleetScenarioResult): ProductionPairs {
  const upRuns = (result.upRuns ?? [{ up: result.up, ...(result.floor === undefined ? {} : { floor: result.floor }) }]).filter(
    (run) => run.floor !== undefined,
  );
  const engineFloor = result.engineFloor;
  return {
    ...(upRuns.length === 0
      ? {}
      : {
          up: pairsOf(
            upRuns.map((run) => engineRunCost(run.up)),
            upRuns.map((run) => plainScriptCost(run.floor!)),
          ),
        }),
    ...(engineFloor === undefined || result.noOpUps === undefined
      ? {}
      : { noOpUp: pairsOf(result.noOpUps.map(engineRunCost), engineFloor.noOpUps.map(engineRunCost)) }),
    ...(engineFloor === undefined || result.refreshes === undefined
      ? {}
      : { refresh: pairsOf(result.refreshes.map(engineRunCost), engineFloor.refreshes.map(engineRunCost)) }),
  };
}

/** How many pairs each operation had: `5 pairs`, or `5, 5 and 5 pairs` when they differ. */
export function pairCount(pairs: ProductionPairs): string {
  const counts = [pairs.up, pairs.noOpUp, pairs.refresh].filter((each) => each !== undefined).map((each) => each.ours.length);
  if (counts.length === 0) return "no pairs";
  const same = counts.every((count) => count === counts[0]);
  return `${same ? counts[0] : counts.join(", ")} pair${counts.length === 1 && counts[0] === 1 ? "" : "s"}`;
}

/**
 * The spread table of section 9: per operation, the ratio of wall times and of CPU (every process)
 * to the floor's, each the median [interquartile range] of the per-pair ratios, and the CPU per
 * cluster of each process, medians of each side's runs.
 */
export function pairSpreadLines(result: FleetScenarioResult): string[] {
  const pairs = productionPairs(result);
  const row = (label: string, floorLabel: string, each: Pairs | undefined): string[] => {
    if (each === undefined) return [];
    const perCluster = (runs: Pairs["ours"]): string => `${(median(runs.map(totalCpuInMs)) / result.clusters).toFixed(2)} ms`;
    return [
      `| ${label} | ${formatRatioSpread(each.wallRatio)} | ${perCluster(each.ours)} / ${perCluster(each.floors)} | ${formatRatioSpread(each.cpuRatio)} | ` +
        `${formatProcessCpu(medianCpuPerCluster(each.ours, result.clusters))} | ${floorLabel}: ${formatProcessCpu(medianCpuPerCluster(each.floors, result.clusters))} |`,
    ];
  };
  return [
    `Each ratio over ${pairCount(pairs)}, as the median [interquartile range] of the per-pair ratios; CPU is every process of the run, per cluster (medians of each side's runs):`,
    "",
    "| | Wall time / floor | CPU per cluster: ours / floor's | CPU / floor's | Ours: provider host / engine / program / sandbox | Floor's, by process |",
    "|---|---|---|---|---|---|",
    ...row("`up`", "plain script worker / sandbox", pairs.up),
    ...row("No-op `up`", "engine floor host / engine / program / sandbox", pairs.noOpUp),
    ...row("`refresh`", "engine floor host / engine / program / sandbox", pairs.refresh),
    "",
  ];
}
