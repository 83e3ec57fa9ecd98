/**
 * The printed report of `npm run bench -- --compare <A> <B>` (commitComparison.ts): per
 * measurement the medians of A, B and the floor, the median [interquartile range] of the per-round
 * ratios A / floor, B / floor and B / A, and whether B / A tells B from A (statistics.ts
 * ratioVerdict: only when its whole interquartile range is off 1 and the sign test of its rounds says so).
 */
import type { CommitComparison, ComparedCommit, ComparedRun } from "./commitComparison";
import { calls } from "./credentialReport";
import type { FloorRun } from "./floors";
import type { RunCost } from "./runCost";
import { engineRunCost, plainScriptCost, totalCpuInMs } from "./runCost";
import { formatMegabytes, formatMilliseconds, formatRatioSpread, median, pairRatios, ratioVerdict, signTestChance, spread, verdictChance } from "./statistics";

/** How a measurement's verdict reads: for times, slower and faster; for memory, larger and smaller. */
interface VerdictWords {
  readonly higher: string;
  readonly lower: string;
}

const timeWords: VerdictWords = { higher: "**B slower**", lower: "**B faster**" };
const memoryWords: VerdictWords = { higher: "**B larger**", lower: "**B smaller**" };
const tracedWords: VerdictWords = { higher: "**traced slower**", lower: "**traced faster**" };

/** The cells of per-round ratios' rounds above 1 and verdict (statistics.ts ratioVerdict), in those words. */
function verdictCells(ratios: readonly number[], words: VerdictWords): string {
  const verdict = ratioVerdict(ratios);
  return `${ratios.filter((ratio) => ratio > 1).length} of ${ratios.length} | ${verdict === "none" ? "no difference told" : words[verdict]}`;
}

/** One row: A's, B's and (when it has one) the floor's value in each round. */
function measurementRow(
  label: string,
  format: (value: number) => string,
  values: { readonly a: readonly number[]; readonly b: readonly number[]; readonly floor?: readonly number[] },
  words: VerdictWords,
): string {
  const { a, b, floor } = values;
  const toFloor = (side: readonly number[]): string => (floor === undefined ? "—" : formatRatioSpread(spread(pairRatios(side, floor))));
  const bToA = pairRatios(b, a);
  return (
    `| ${label} | ${format(median(a))} | ${format(median(b))} | ${floor === undefined ? "—" : format(median(floor))} | ` +
    `${toFloor(a)} | ${toFloor(b)} | ${formatRatioSpread(spread(bToA))} | ${verdictCells(bToA, words)} |`
  );
}

/**
 * With B traced: per follow-up measurement, the engine floor untraced and traced (its provider makes
 * no spans, so traced / untraced is the engine's part of the flag), B / A, and per round B / A over
 * the floor's traced / untraced: the provider's part. No rows when the floor ran untraced only.
 */
export function tracingPartRows(
  measurements: ReadonlyArray<{
    readonly label: string;
    readonly format: (value: number) => string;
    readonly values: {
      readonly a: readonly number[];
      readonly b: readonly number[];
      readonly floor: readonly number[];
      readonly tracedFloor?: readonly number[];
    };
  }>,
): string[] {
  const rows = measurements.flatMap(({ label, format, values }) => {
    if (values.tracedFloor === undefined) return [];
    const engineRatios = pairRatios(values.tracedFloor, values.floor);
    const bToA = pairRatios(values.b, values.a);
    return [
      `| ${label} | ${format(median(values.floor))} | ${format(median(values.tracedFloor))} | ${formatRatioSpread(spread(engineRatios))} | ` +
        `${verdictCells(engineRatios, tracedWords)} | ${formatRatioSpread(spread(bToA))} | ${formatRatioSpread(spread(pairRatios(bToA, engineRatios)))} |`,
    ];
  });
  if (rows.length === 0) return [];
  return [
    "What tracing's parts cost: the engine floor ran once more traced, right after its untraced run in each round. Its provider makes no spans, " +
      "so its traced / untraced is the engine's part of the flag (its spans, its OTLP receiver, the trace file); the provider's part is B / A over it, per round.",
    "",
    "| Measurement | Engine floor | Engine floor traced | Traced / untraced (engine's part) | Rounds > 1 | Verdict | B / A | (B / A) ÷ engine's part (provider's part) |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ];
}

/** How often the verdict rule could speak about two builds of the same code at this many rounds: the sign test's chance of its most uneven outcome, or never. */
function falseVerdictShare(rounds: number): string {
  const chance = signTestChance(rounds, rounds);
  return chance >= verdictChance ? "never (too few rounds for the sign test)" : `under ${Math.round(verdictChance * 100)} %`;
}

const commitLine = (label: string, commit: ComparedCommit): string =>
  `${label} = \`${commit.name}\` = ${commit.commit.slice(0, 12)} "${commit.subject}"` +
  (commit.traces === undefined ? "" : `, every engine run traced (\`--otel-traces=${commit.traces}\`)`);

/** Renders the comparison; `run` says when, where and how it was started. */
export function renderComparison(
  comparison: CommitComparison,
  run: { readonly commandLine: string; readonly date: string; readonly durationInMs: number; readonly machine: string },
): string {
  const clusters = comparison.clusters;
  const cpuPerCluster = (value: number): string => `${(value / clusters).toFixed(2)} ms`;
  const engineCosts = (runs: readonly ComparedRun[]): RunCost[] => runs.map(engineRunCost);
  const up = { a: engineCosts(comparison.up.a), b: engineCosts(comparison.up.b), floor: comparison.up.floor.map((each: FloorRun) => plainScriptCost(each)) };
  const noOp = { a: engineCosts(comparison.noOpUp.a), b: engineCosts(comparison.noOpUp.b), floor: engineCosts(comparison.noOpUp.floor) };
  const refresh = { a: engineCosts(comparison.refresh.a), b: engineCosts(comparison.refresh.b), floor: engineCosts(comparison.refresh.floor) };
  const wall = (costs: typeof up) => ({
    a: costs.a.map((cost) => cost.wallTimeInMs),
    b: costs.b.map((cost) => cost.wallTimeInMs),
    floor: costs.floor.map((cost) => cost.wallTimeInMs),
  });
  const cpu = (costs: typeof up) => ({ a: costs.a.map(totalCpuInMs), b: costs.b.map(totalCpuInMs), floor: costs.floor.map(totalCpuInMs) });
  const tracedFloor = {
    noOp: comparison.noOpUp.tracedFloor === undefined ? undefined : engineCosts(comparison.noOpUp.tracedFloor),
    refresh: comparison.refresh.tracedFloor === undefined ? undefined : engineCosts(comparison.refresh.tracedFloor),
  };
  const withTracedFloor = (values: ReturnType<typeof wall>, traced: readonly RunCost[] | undefined, measure: (cost: RunCost) => number) =>
    traced === undefined ? values : { ...values, tracedFloor: traced.map(measure) };
  const peak = (runs: { readonly a: readonly ComparedRun[]; readonly b: readonly ComparedRun[] }) => ({
    a: runs.a.map((each) => each.host.peakResidentBytes),
    b: runs.b.map((each) => each.host.peakResidentBytes),
  });
  const rounds = (runs: { readonly a: readonly RunCost[]; readonly b: readonly RunCost[]; readonly floor: readonly RunCost[] }): string =>
    runs.a
      .map(
        (each, index) =>
          `${formatMilliseconds(each.wallTimeInMs)} / ${formatMilliseconds(runs.b[index].wallTimeInMs)} / ${formatMilliseconds(runs.floor[index].wallTimeInMs)}`,
      )
      .join("; ");
  const last = <Item>(list: readonly Item[]): Item => list[list.length - 1];
  return [
    `Comparison: \`${run.commandLine}\` on ${run.date} (${(run.durationInMs / 60_000).toFixed(1)} min).`,
    "",
    `${commitLine("A", comparison.a)}; ${commitLine("B", comparison.b)}.`,
    `${clusters} clusters × 4 identities, each in its own tenant and subscription, \`clusterServiceManagedIdentity\`; ${comparison.rounds} rounds of A, B and the floor in turn (B before A in even rounds), ` +
      "against one sandbox process and one engine floor; every engine operation in a Node process of its own (bench/performance/stackRunner.ts).",
    `Machine: ${run.machine}.`,
    "",
    "A, B and Floor: medians of the rounds. Ratios: median [interquartile range] of the per-round ratios. " +
      "CPU: every process of the run (provider host, engine, program, sandbox; the plain script's worker and sandbox), per cluster. " +
      "Verdict on B / A: B slower (or larger) only when its whole interquartile range is above 1 and the sign test of its rounds says so, faster (or smaller) likewise below 1. " +
      `Two builds of the same code get a verdict on a measurement ${falseVerdictShare(comparison.rounds)} of the time at ${comparison.rounds} rounds (the sign test, docs/performance.md).`,
    "",
    "| Measurement | A | B | Floor | A / floor | B / floor | B / A | Rounds B / A > 1 | Verdict |",
    "|---|---|---|---|---|---|---|---|---|",
    measurementRow("`up`, wall time (floor: plain script)", formatMilliseconds, wall(up), timeWords),
    measurementRow("`up`, CPU per cluster", cpuPerCluster, cpu(up), timeWords),
    measurementRow("No-op `up`, wall time (floor: engine floor)", formatMilliseconds, wall(noOp), timeWords),
    measurementRow("No-op `up`, CPU per cluster", cpuPerCluster, cpu(noOp), timeWords),
    measurementRow("`refresh`, wall time (floor: engine floor)", formatMilliseconds, wall(refresh), timeWords),
    measurementRow("`refresh`, CPU per cluster", cpuPerCluster, cpu(refresh), timeWords),
    measurementRow("`up`, provider host peak RSS", formatMegabytes, peak(comparison.up), memoryWords),
    measurementRow("`refresh`, provider host peak RSS", formatMegabytes, peak(comparison.refresh), memoryWords),
    "",
    ...tracingPartRows([
      { label: "No-op `up`, wall time", format: formatMilliseconds, values: withTracedFloor(wall(noOp), tracedFloor.noOp, (cost) => cost.wallTimeInMs) },
      { label: "No-op `up`, CPU per cluster", format: cpuPerCluster, values: withTracedFloor(cpu(noOp), tracedFloor.noOp, totalCpuInMs) },
      { label: "`refresh`, wall time", format: formatMilliseconds, values: withTracedFloor(wall(refresh), tracedFloor.refresh, (cost) => cost.wallTimeInMs) },
      { label: "`refresh`, CPU per cluster", format: cpuPerCluster, values: withTracedFloor(cpu(refresh), tracedFloor.refresh, totalCpuInMs) },
    ]),
    "Wall times by round, A / B / floor (B ran before A in even rounds):",
    "",
    `- \`up\`: ${rounds(up)}`,
    `- no-op \`up\`: ${rounds(noOp)}`,
    `- \`refresh\`: ${rounds(refresh)}`,
    "",
    "What the last round asked of the sandbox:",
    "",
    "| Run | Data plane requests | Entra discovery / tokens | ARM GETs | Cosmos reads / writes | Cosmos requests |",
    "|---|---|---|---|---|---|",
    `| A \`up\` | ${calls(last(comparison.up.a).statistics).join(" | ")} |`,
    `| B \`up\` | ${calls(last(comparison.up.b).statistics).join(" | ")} |`,
    `| plain script | ${calls(comparison.plainScriptStatistics).join(" | ")} |`,
    `| A no-op \`up\` | ${calls(last(comparison.noOpUp.a).statistics).join(" | ")} |`,
    `| B no-op \`up\` | ${calls(last(comparison.noOpUp.b).statistics).join(" | ")} |`,
    `| A \`refresh\` | ${calls(last(comparison.refresh.a).statistics).join(" | ")} |`,
    `| B \`refresh\` | ${calls(last(comparison.refresh.b).statistics).join(" | ")} |`,
    "",
    `Identities resolved in Cosmos after every \`up\`: A ${comparison.resolved.a} / ${comparison.expectedIdentities}, B ${comparison.resolved.b} / ${comparison.expectedIdentities}. ` +
      `State per cluster: A ${(comparison.checkpointBytes.a / clusters / 1024).toFixed(2)} KB, B ${(comparison.checkpointBytes.b / clusters / 1024).toFixed(2)} KB.`,
    "",
  ].join("\n");
}
