/**
 * Issue 10, item 3: throttling at fleet scale. 2,000 clusters × 4 identities, lookupConcurrency 8,
 * 30 % of ARM requests answered 429 with Retry-After, every create in flight at once: the
 * provider host queues all 8,000 lookups on its one limiter, and throttled lookups go back to the
 * end of that queue after each wait. It must converge in ONE `up`: every identity resolved in
 * Cosmos, no lookup failed because it waited its turn (the deadline starts at the slot), no
 * retry sooner than its Retry-After, never more than `lookupConcurrency` requests in flight.
 *
 * Cost, and why Retry-After is 1 s: a lookup waits out Retry-After outside its concurrency slot
 * (lookUpIdentity.ts), so the waits overlap with other identities' requests. The run costs about
 * the ARM work, 8,000 / 0.7 ≈ 11,400 requests × 20 ms / 8 slots ≈ 29 s, plus the longest retry
 * chain (≈ 7 throttled answers in a row somewhere among 8,000 identities: 7 × R) plus the
 * engine's own cost per resource. Were the slot held during the wait, the waits alone would be
 * 8,000 × 0.43 (429s per identity, p / (1 − p)) × R / 8 ≈ 430 s × R. R is bounded by the lookup
 * deadline too: the longest chain must fit in `lookupTimeoutSeconds` (30 s by default), so
 * 7 × R < 30 s keeps R ≤ 3 s; at R = 1 s the scenario is also comparable with targets 6a–6c.
 * It still takes a minute or more on 2 shared cores, so it runs in the full benchmark only, not
 * in `--quick`; `node dist/bench/performance/throttleFleet.js` runs it alone and updates its rows
 * and section in docs/performance.md.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import type { EngineCommand } from "../../cli/engine";
import { engineCommand, projectDirectory } from "../../cli/engine";
import { formatMilliseconds as milliseconds, targetStatus as status } from "./statistics";
import type { ThrottleResult } from "./throttleScenario";
import { runThrottleScenario } from "./throttleScenario";

/** The scenario's size and fault, as item 3 of issue 10 asks. */
export const throttleFleetPlan = {
  clusters: 2000,
  identitiesPerCluster: 4,
  probability: 0.3,
  retryAfterSeconds: 1,
  latencyInMs: 20,
  lookupConcurrency: 8,
} as const;

/** What the scenario measured, with its plan. */
export interface ThrottleFleetResult {
  readonly plan: typeof throttleFleetPlan;
  readonly result: ThrottleResult;
  /** When it ran and how busy the machine was (it may run apart from the rest of the benchmark). */
  readonly startedAt: string;
  readonly loadAverageAtStart: number;
  readonly cores: number;
}

/** Runs the scenario: one `up` with every create in flight at once (`--parallel` = clusters). */
export async function runThrottleFleet(engine: EngineCommand, log: (line: string) => void): Promise<ThrottleFleetResult> {
  const plan = throttleFleetPlan;
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = loadavg()[0] ?? 0;
  const result = await runThrottleScenario({
    engine,
    clusters: plan.clusters,
    identitiesPerCluster: plan.identitiesPerCluster,
    armLatencyInMs: plan.latencyInMs,
    lookupConcurrency: plan.lookupConcurrency,
    probability: plan.probability,
    retryAfterSeconds: plan.retryAfterSeconds,
    maxRuns: 1,
    parallel: plan.clusters,
    log,
  });
  return { plan, result, startedAt, loadAverageAtStart, cores: availableParallelism() };
}

/** Rows 6d–6g of the targets table. */
export function throttleFleetTargetRows({ plan, result }: ThrottleFleetResult): string[] {
  const run = result.runs[0];
  const failed = Object.values(result.failedEntriesByCode).reduce((sum, count) => sum + count, 0);
  const timeouts = result.failedEntriesByCode.Timeout ?? 0;
  const floorInMs = Math.ceil(run.armRequests / plan.lookupConcurrency) * plan.latencyInMs;
  const fault = `${plan.probability * 100} % 429, Retry-After ${plan.retryAfterSeconds} s`;
  return [
    `| 6d | Throttled fleet in one \`up\`: ${plan.clusters} clusters × ${plan.identitiesPerCluster}, ${fault}, every create in flight (\`--parallel ${plan.clusters}\`) | ${result.resolvedInCosmos} / ${result.expectedIdentities} resolved after 1 \`up\` (${run.succeeded ? "succeeded" : "failed"}) in ${milliseconds(run.wallTimeInMs)} | ARM work alone: ceil(${run.armRequests} / ${plan.lookupConcurrency}) × ${plan.latencyInMs} ms = ${milliseconds(floorInMs)} | ${(run.wallTimeInMs / floorInMs).toFixed(2)}× | all resolved in one \`up\` | ${status(run.succeeded && result.resolvedInCosmos === result.expectedIdentities)} |`,
    `| 6e | Lookups failed by the deadline or by queueing (6d) | ${failed} stored failure(s), ${timeouts} Timeout | — | — | 0 | ${status(failed === 0)} |`,
    `| 6f | Retry-After honoured (6d) | waited ${milliseconds(result.waitedInMs)}; ${result.earlyRetries} early retries | asked ${milliseconds(result.retryAfterOfRetriedInMs)} | ${(result.waitedInMs / Math.max(1, result.retryAfterOfRetriedInMs)).toFixed(2)}× | ≥ 1×, no early retry | ${status(result.earlyRetries === 0 && result.waitedInMs >= result.retryAfterOfRetriedInMs)} |`,
    `| 6g | ARM requests in flight (6d) | max ${run.armMaxInFlight} | lookupConcurrency ${plan.lookupConcurrency} | — | ≤ ${plan.lookupConcurrency} | ${status(run.armMaxInFlight <= plan.lookupConcurrency)} |`,
  ];
}

/** The numbers of 6d–6g (docs/performance.md explains the scenario outside the generated section). */
export function throttleFleetSection({ plan, result, startedAt, loadAverageAtStart, cores }: ThrottleFleetResult): string[] {
  const run = result.runs[0];
  const failures = Object.entries(result.failedEntriesByCode);
  return [
    "## 6d–6g. Throttling at fleet scale",
    "",
    `${plan.clusters} clusters × ${plan.identitiesPerCluster} identities, \`lookupConcurrency\` ${plan.lookupConcurrency}, ${plan.latencyInMs} ms per ARM and Cosmos request, ${plan.probability * 100} % of ARM requests (seeded) answered 429 with \`Retry-After: ${plan.retryAfterSeconds}\`, \`--parallel ${plan.clusters}\`.`,
    `Run started ${startedAt} on ${cores} cores with a 1-minute load average of ${loadAverageAtStart.toFixed(1)}.`,
    "",
    "| `up` | Time | Result | ARM requests | 429 answers | Max in flight | Stored failures | Token requests |",
    "|---|---|---|---|---|---|---|---|",
    `| 1 | ${milliseconds(run.wallTimeInMs)} | ${run.succeeded ? "succeeded" : "failed"} | ${run.armRequests} | ${run.throttled} | ${run.armMaxInFlight} | ${failures.length === 0 ? "0" : failures.map(([code, count]) => `${count} ${code}`).join(", ")} | ${result.tokenRequests} |`,
    "",
    `Retry-After asked ${milliseconds(result.retryAfterRequestedInMs)} in total; for the ${milliseconds(result.retryAfterOfRetriedInMs)} of it that was followed by a retry, the clients waited ${milliseconds(result.waitedInMs)}`,
    `(${result.earlyRetries} early retries); ${result.abandoned} throttled lookup(s) were not retried within the run. ${result.resolvedInCosmos} / ${result.expectedIdentities} identities resolved in Cosmos.`,
    `The identity asked last was first asked ${milliseconds(run.lastFirstRequestInMs)} after the run's first ARM request.`,
    "",
  ];
}

/** Splices the rows and the section into an existing docs/performance.md (replacing earlier ones). */
export function spliceThrottleFleet(document: string, fleet: ThrottleFleetResult): string {
  const lines = document.split("\n").filter((line) => !/^\| 6[d-g] \|/.test(line));
  const rowAnchor = lines.findIndex((line) => line.startsWith("| 6c |"));
  if (rowAnchor < 0) throw new Error("docs/performance.md has no target row 6c");
  lines.splice(rowAnchor + 1, 0, ...throttleFleetTargetRows(fleet));
  const sectionStart = lines.findIndex((line) => line.startsWith("## 6d–6g."));
  if (sectionStart >= 0) {
    const sectionEnd = lines.findIndex((line, index) => index > sectionStart && line.startsWith("## "));
    lines.splice(sectionStart, (sectionEnd < 0 ? lines.length : sectionEnd) - sectionStart);
  }
  const next = lines.findIndex((line, index) => index > rowAnchor && line.startsWith("## ") && !line.startsWith("## 1") && !/^## [2-6]/.test(line));
  lines.splice(next < 0 ? lines.length : next, 0, ...throttleFleetSection(fleet));
  return lines.join("\n");
}

async function main(): Promise<void> {
  const started = Date.now();
  const log = (line: string): void => console.log(`[throttle-fleet ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  const engine = await engineCommand(log);
  // The stacks' private directories go under .pulumi/ (benchmarkStack.ts), absent in a fresh clone.
  mkdirSync(join(projectDirectory, ".pulumi"), { recursive: true });
  const fleet = await runThrottleFleet(engine, log);
  console.log(JSON.stringify({ ...fleet, durationInMs: Date.now() - started }, null, 2));
  const path = join(projectDirectory, "docs", "performance.md");
  writeFileSync(path, spliceThrottleFleet(readFileSync(path, "utf8"), fleet));
  // The sandbox's CA bundle (benchmarkSandbox.ts).
  rmSync(join(projectDirectory, ".sandbox", `bench-${process.pid}`), { recursive: true, force: true });
  log(`updated ${path}`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
