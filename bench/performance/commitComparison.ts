/**
 * `npm run bench -- --compare <A> <B>`: what a change costs before it lands. Builds both commits
 * (commitWorktree.ts), then runs the production scenario's hook side of each (section 9:
 * `clusterServiceManagedIdentity`, each cluster in its own tenant) against ONE sandbox process and
 * ONE engine floor, in rounds of A, B and the floor in turn (B before A in even rounds, see
 * {@link inTurn}):
 *
 * 1. first `up`s: per round the plain script, A's `up` and B's `up`, each on a fresh stack from the
 *    seeded documents;
 * 2. no-op `up`s of the last round's stacks: A, B, the engine floor;
 * 3. `refresh`es: A, B, the engine floor.
 *
 * With B traced (`--traced-b`), steps 2 and 3 also run the engine floor traced as B is, right after
 * its untraced run: its provider makes no spans, so its traced / untraced is what the engine's part of
 * the flag (its own spans, its OTLP receiver, the file) costs alone, and what B / A has above it is
 * the provider's part.
 *
 * Every engine operation runs in a fresh Node process with its own checkout's program, SDK and
 * provider (stackRunner.ts), the engine floor's too. The sandbox, the plain script and the engine
 * floor are this checkout's, so that both commits meet the same ones. Both stacks read the one
 * sandbox's documents, which B's `up` wrote last: a change to what the hook writes shows in A's
 * `refresh`. Prints the report (comparisonReport.ts); writes nothing into docs/performance.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EngineCommand } from "../../cli/engine";
import { engineEnvironment, projectDirectory, pulumiProjectName, refreshParallelism, sandboxPassphrase } from "../../cli/engine";
import type { SandboxStatisticsSnapshot } from "../../sandbox/sandboxStatistics";
import { clusterDeclaration } from "../clusterDeclaration";
import type { CommitWorktree } from "./commitWorktree";
import { buildCommitWorktree } from "./commitWorktree";
import type { CountedRun } from "./fleetScenario";
import { benchmarkFleet, counted } from "./fleetScenario";
import type { FloorRun } from "./floors";
import { floorPlan, runFloorWorker } from "./floors";
import { startSandboxProcess } from "./sandboxProcess";
import type { StackRun, StackRunRequest } from "./stackRunner";
import { runStackOperation } from "./stackRunner";

/** A run of A's or B's (or the engine floor's), with the sandbox's counters and CPU during it. */
export type ComparedRun = StackRun & CountedRun;

/** One commit of the comparison. */
export interface ComparedCommit {
  readonly name: string;
  readonly commit: string;
  readonly subject: string;
  /** Where its engine runs sent their traces, when they were traced. */
  readonly traces?: string;
}

/** The runs of one operation, in the order run: the i-th of each list belong to round i. */
export interface ComparedOperation<FloorRunOf> {
  readonly a: readonly ComparedRun[];
  readonly b: readonly ComparedRun[];
  readonly floor: readonly FloorRunOf[];
  /** The engine floor traced as B is, when B is traced, in the same rounds. */
  readonly tracedFloor?: readonly FloorRunOf[];
}

/** Everything a comparison measured. */
export interface CommitComparison {
  readonly clusters: number;
  readonly rounds: number;
  readonly a: ComparedCommit;
  readonly b: ComparedCommit;
  /** Against the plain script (floorWorker.ts mode `cluster`). */
  readonly up: ComparedOperation<FloorRun>;
  /** The sandbox's counters during the last plain-script run. */
  readonly plainScriptStatistics: SandboxStatisticsSnapshot;
  /** Against the engine floor (engineFloor.ts). */
  readonly noOpUp: ComparedOperation<ComparedRun>;
  readonly refresh: ComparedOperation<ComparedRun>;
  /** Fewest identities resolved in Cosmos after any `up` of each commit, of {@link expectedIdentities}. */
  readonly resolved: { readonly a: number; readonly b: number };
  readonly expectedIdentities: number;
  /** State of each commit's last stack after its `up`, in bytes. */
  readonly checkpointBytes: { readonly a: number; readonly b: number };
}

/** Options of {@link compareCommits}. */
export interface CompareCommitsOptions {
  readonly engine: EngineCommand;
  /** A: what the change is measured against (a commit name git understands). */
  readonly base: string;
  /** B: the change. */
  readonly candidate: string;
  /** Where B's engine runs send their traces (Pulumi's `--otel-traces`); A's and the floor's run untraced, and the engine floor once more traced ({@link floorTracesAddress}). */
  readonly candidateTraces?: string;
  readonly clusters: number;
  /** Rounds of A, B and the floor per operation. */
  readonly rounds: number;
  readonly log: (line: string) => void;
}

/** Builds both commits in temporary worktrees, compares them, and removes the worktrees. */
export async function buildAndCompare(options: CompareCommitsOptions): Promise<CommitComparison> {
  const root = mkdtempSync(join(tmpdir(), "aro-hcp-compare-"));
  const built: CommitWorktree[] = [];
  try {
    options.log(`compare: building ${options.base} (A) and ${options.candidate} (B) in ${root}`);
    for (const [side, name] of [
      ["a", options.base],
      ["b", options.candidate],
    ] as const) {
      built.push(
        await buildCommitWorktree({ repository: projectDirectory, name, directory: join(root, side), pulumiVersion: options.engine.version, log: options.log }),
      );
    }
    return await compareBuilt(options, built[0], built[1], root);
  } finally {
    for (const worktree of built) {
      await worktree.remove().catch((error: unknown) => options.log(`compare: could not remove ${worktree.directory}: ${String(error)}`));
    }
    rmSync(root, { recursive: true, force: true });
  }
}

/** Who runs in a round: A's and B's checkouts with their own program, the engine floor with this checkout's. */
interface Runner<Label extends string = string> {
  readonly label: Label;
  readonly checkout: string;
  readonly program: StackRunRequest["program"];
  /** Where its engine runs send their traces, when traced. */
  readonly traces?: string;
}

/**
 * Where the traced engine floor's runs send their traces: beside B's file (`…/b-traces.json` →
 * `…/b-traces.floor.json`), so that neither run's file overwrites the other's; a gRPC collector
 * takes both as they are.
 */
export function floorTracesAddress(candidateTraces: string): string {
  if (!candidateTraces.startsWith("file://")) return candidateTraces;
  const dot = candidateTraces.lastIndexOf(".");
  const slash = candidateTraces.lastIndexOf("/");
  return dot > slash ? `${candidateTraces.slice(0, dot)}.floor${candidateTraces.slice(dot)}` : `${candidateTraces}.floor`;
}

/**
 * A and B in odd rounds, B and A in even ones, so that an effect of position (right after the
 * plain script's or the floor's run, or right after the other commit's) counts as spread in B / A
 * rather than as a difference between the commits. Cheap insurance, not a measured need: two
 * comparisons of the same code at 200 clusters had A's `up` slower in 3 of 3 rounds in a fixed
 * order, then B's in 3 of 4 alternating, whichever went first; both within chance at so few rounds.
 */
export function inTurn<Side>(sides: readonly Side[], round: number): Side[] {
  return round % 2 === 1 ? [...sides] : [...sides].reverse();
}

async function compareBuilt(options: CompareCommitsOptions, a: CommitWorktree, b: CommitWorktree, root: string): Promise<CommitComparison> {
  const { identitiesPerCluster, latencyInMs, lookupConcurrency } = benchmarkFleet;
  const { log } = options;
  const sandbox = await startSandboxProcess({ armLatencyInMs: latencyInMs, cosmosLatencyInMs: latencyInMs, lookupConcurrency, perClusterCredentials: true });
  try {
    const fleet = await sandbox.seedTenantFleet({ clusters: options.clusters, identitiesPerCluster });
    const issuance = await sandbox.issueClusterCredentials();
    log(`  SMI certificates: ${issuance.issued} issued in ${Math.round(issuance.timeInMs)} ms`);
    await sandbox.saveDocuments();
    const clustersFile = join(root, "clusters.json");
    writeFileSync(clustersFile, `${JSON.stringify(fleet.map(clusterDeclaration))}\n`);
    const run = (runner: Runner, stack: string, operation: StackRunRequest["operation"], extra: Partial<StackRunRequest> = {}): Promise<ComparedRun> =>
      counted(sandbox, () =>
        runStackOperation({
          ...(runner.traces === undefined ? {} : { otelTraces: runner.traces }),
          checkout: runner.checkout,
          program: runner.program,
          engineRoot: options.engine.root,
          stackName: stack,
          projectName: pulumiProjectName,
          stackDirectory: join(root, "stacks", stack),
          config: { ...sandbox.config, clustersFile },
          // The provider host loads the implementation from ARO_HCP_PROJECT_DIR (resources/provider/providerLoader.ts).
          environment: engineEnvironment({ PULUMI_CONFIG_PASSPHRASE: sandboxPassphrase, ...sandbox.environment, ARO_HCP_PROJECT_DIR: runner.checkout }),
          operation,
          ...extra,
        }),
      );
    const sides: ReadonlyArray<Runner<"a" | "b">> = [
      { label: "a", checkout: a.directory, program: "project" },
      { label: "b", checkout: b.directory, program: "project", ...(options.candidateTraces === undefined ? {} : { traces: options.candidateTraces }) },
    ];
    const floorRunner: Runner = { label: "floor", checkout: projectDirectory, program: "engineFloor" };
    const tracedFloorRunner: Runner | undefined =
      options.candidateTraces === undefined ? undefined : { ...floorRunner, traces: floorTracesAddress(options.candidateTraces) };
    const seconds = (value: number): string => `${(value / 1000).toFixed(1)} s`;

    // 1. First `up`s, each from the seeded documents on a fresh stack.
    const ups = { a: [] as ComparedRun[], b: [] as ComparedRun[], floor: [] as FloorRun[] };
    const resolved = { a: Number.POSITIVE_INFINITY, b: Number.POSITIVE_INFINITY };
    const stackOf = { a: "", b: "" };
    let plainScriptStatistics: SandboxStatisticsSnapshot | undefined;
    for (let round = 1; round <= options.rounds; round += 1) {
      await sandbox.restoreDocuments();
      await sandbox.resetStatistics();
      ups.floor.push(await runFloorWorker(sandbox, "cluster", floorPlan(fleet), () => sandbox.cpuTimeInMs()));
      plainScriptStatistics = await sandbox.statistics();
      for (const side of inTurn(sides, round)) {
        const key = side.label;
        await sandbox.restoreDocuments();
        if (stackOf[key] !== "") rmSync(join(root, "stacks", stackOf[key]), { recursive: true, force: true });
        stackOf[key] = `${key}-${round}`;
        ups[key].push(await run(side, stackOf[key], "up", { exportState: round === options.rounds }));
        resolved[key] = Math.min(resolved[key], await sandbox.countResolved());
      }
      log(
        `  round ${round}/${options.rounds} up: A ${seconds(ups.a[round - 1].wallTimeInMs)}, B ${seconds(ups.b[round - 1].wallTimeInMs)}, plain script ${seconds(ups.floor[round - 1].processWallTimeInMs)}`,
      );
    }

    // 2–3. No-op `up`s, then `refresh`es, of the last stacks and of the engine floor's.
    log("  engine floor: its first up");
    await run(floorRunner, "floor", "up");
    const followUp = async (operation: StackRunRequest["operation"], extra: Partial<StackRunRequest>): Promise<ComparedOperation<ComparedRun>> => {
      const runs = { a: [] as ComparedRun[], b: [] as ComparedRun[], floor: [] as ComparedRun[] };
      const tracedFloor: ComparedRun[] = [];
      for (let round = 1; round <= options.rounds; round += 1) {
        for (const side of inTurn(sides, round)) runs[side.label].push(await run(side, stackOf[side.label], operation, extra));
        runs.floor.push(await run(floorRunner, "floor", operation, extra));
        if (tracedFloorRunner !== undefined) tracedFloor.push(await run(tracedFloorRunner, "floor", operation, extra));
        log(
          `  round ${round}/${options.rounds} ${operation === "up" ? "no-op up" : operation}: A ${seconds(runs.a[round - 1].wallTimeInMs)}, B ${seconds(runs.b[round - 1].wallTimeInMs)}, engine floor ${seconds(runs.floor[round - 1].wallTimeInMs)}` +
            (tracedFloorRunner === undefined ? "" : `, traced ${seconds(tracedFloor[round - 1].wallTimeInMs)}`),
        );
      }
      return tracedFloorRunner === undefined ? runs : { ...runs, tracedFloor };
    };
    const noOpUp = await followUp("up", {});
    // A refresh gets the slots the project's doors give it (cli/engine.ts), all three alike.
    const refreshParallel = refreshParallelism();
    const refresh = await followUp("refresh", refreshParallel === undefined ? {} : { parallel: refreshParallel });
    return {
      clusters: options.clusters,
      rounds: options.rounds,
      a: { name: a.name, commit: a.commit, subject: a.subject },
      b: { name: b.name, commit: b.commit, subject: b.subject, ...(options.candidateTraces === undefined ? {} : { traces: options.candidateTraces }) },
      up: ups,
      plainScriptStatistics: plainScriptStatistics!,
      noOpUp,
      refresh,
      resolved,
      expectedIdentities: options.clusters * identitiesPerCluster,
      checkpointBytes: { a: ups.a[ups.a.length - 1].checkpointBytes ?? Number.NaN, b: ups.b[ups.b.length - 1].checkpointBytes ?? Number.NaN },
    };
  } finally {
    await sandbox.stop();
  }
}
