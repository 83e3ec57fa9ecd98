/**
 * The real Pulumi engine over the project's program, with private state, home and work
 * directories per scenario (cli/engine.ts openStack), timed, with the provider host's peak
 * memory sampled from /proc.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import type { EngineCommand } from "../../cli/engine";
import { openStack, projectDirectory, projectProgram, setClusterFile } from "../../cli/engine";
import type { ClusterDeclaration } from "../../program/fleet";
import type { BenchmarkSandbox } from "./benchmarkSandbox";
import { releasingProgram } from "./inlineRunMemory";
import type { ProviderHostObservation } from "./providerHostMonitor";
import { monitorProviderHosts } from "./providerHostMonitor";
import { processCpuTimeInMs } from "./statistics";

/** One timed engine operation. */
export interface EngineRun {
  readonly wallTimeInMs: number;
  readonly host: ProviderHostObservation;
  readonly resourceChanges: Readonly<Record<string, number>>;
  /** CPU time of this process during the run: the inline program (and a sandbox started in this process). */
  readonly benchProcessCpuTimeInMs: number;
}

/** A stack over the project's program pointed at a benchmark sandbox. */
export interface BenchmarkStack {
  setClusters(clusters: readonly ClusterDeclaration[]): Promise<void>;
  up(options?: { parallel?: number }): Promise<EngineRun>;
  /** `runProgram`: the engine runs the program too (`--run-program`), as tools/shard-entrypoint.sh does. */
  refresh(options?: { parallel?: number; runProgram?: boolean }): Promise<EngineRun>;
  /** Size of the stack's latest checkpoint in bytes. */
  checkpointBytes(): Promise<number>;
  /**
   * Writes the stack's checkpoint once through the engine (`pulumi stack import` of its own export,
   * which validates the snapshot and writes it whole, as the engine does after a step) and says how
   * long that took, CLI start-up included, and how large the checkpoint is.
   */
  checkpointWrite(): Promise<{ readonly bytes: number; readonly timeInMs: number }>;
  /** Removes the private directories. */
  remove(): void;
}

let profiledOperations = 0;

/**
 * With ARO_HCP_PROFILE_DIRECTORY set, profiles this process's CPU (the inline program's, as the
 * provider hosts' are by hostProfiler.ts) until the returned function is called, which writes
 * `<directory>/program-<n>-<stack>.cpuprofile`; without it, does nothing.
 */
function profileInlineProgram(stackName: string): () => void {
  const directory = process.env.ARO_HCP_PROFILE_DIRECTORY;
  if (directory === undefined) return () => undefined;
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  session.post("Profiler.start");
  profiledOperations += 1;
  const file = join(directory, `program-${profiledOperations}-${stackName}.cpuprofile`);
  return () => {
    // The same-thread session answers synchronously.
    session.post("Profiler.stop", (error, result) => {
      if (error === null) writeFileSync(file, JSON.stringify(result.profile));
    });
    session.disconnect();
  };
}

/** Opens a fresh stack with private directories under .pulumi/bench-*. */
export async function openBenchmarkStack(
  engine: EngineCommand,
  benchmark: Pick<BenchmarkSandbox, "config" | "environment">,
  name: string,
  extraEnvironment: Readonly<Record<string, string>> = {},
  /** Another inline program than the project's (the engine floor's). */
  program?: automation.PulumiFn,
): Promise<BenchmarkStack> {
  mkdirSync(join(projectDirectory, ".pulumi"), { recursive: true });
  const root = mkdtempSync(join(projectDirectory, ".pulumi", `bench-${name}-`));
  const paths = { state: join(root, "state"), home: join(root, "home"), workDirectory: join(root, "work") };
  // Every run of the benchmark process's inline programs would otherwise stay in its heap
  // (inlineRunMemory.ts): released after each operation, so that a later scenario's program does
  // not collect the garbage of the earlier ones.
  const released = releasingProgram(program ?? projectProgram());
  const stack = await openStack({
    engine,
    stackName: name,
    paths,
    program: released.program,
    config: { ...benchmark.config, clusters: "[]" },
    environment: { ...benchmark.environment, ...extraEnvironment },
  });
  const timed = async (operation: () => Promise<automation.UpResult | automation.RefreshResult>): Promise<EngineRun> => {
    const monitor = monitorProviderHosts();
    const stopProfile = profileInlineProgram(name);
    const cpuBefore = processCpuTimeInMs();
    const started = performance.now();
    let result: automation.UpResult | automation.RefreshResult;
    try {
      result = await operation();
    } catch (error) {
      stopProfile();
      throw error;
    } finally {
      monitor.stop();
      released.release();
    }
    const wallTimeInMs = performance.now() - started;
    const host = monitor.stop();
    const benchProcessCpuTimeInMs = processCpuTimeInMs() - cpuBefore;
    stopProfile();
    return { wallTimeInMs, host, resourceChanges: { ...(result.summary.resourceChanges ?? {}) }, benchProcessCpuTimeInMs };
  };
  return {
    async setClusters(clusters) {
      // The fleet layout: a clusters file, not the `clusters` list in config, which the engine
      // would copy twice more into the default provider's state (cli/engine.ts setClusterFile).
      await setClusterFile(stack, clusters, join(root, "clusters.json"));
    },
    up: (options = {}) => timed(() => stack.up({ ...(options.parallel === undefined ? {} : { parallel: options.parallel }) })),
    refresh: (options = {}) =>
      timed(() =>
        stack.refresh({
          ...(options.parallel === undefined ? {} : { parallel: options.parallel }),
          ...(options.runProgram === true ? { runProgram: true } : {}),
        }),
      ),
    async checkpointBytes() {
      const deployment = await stack.exportStack();
      return Buffer.byteLength(JSON.stringify(deployment));
    },
    async checkpointWrite() {
      const deployment = await stack.exportStack();
      const started = performance.now();
      await stack.importStack(deployment);
      return { bytes: Buffer.byteLength(JSON.stringify(deployment)), timeInMs: performance.now() - started };
    },
    remove() {
      if (process.env.BENCH_KEEP_STATE !== "1") rmSync(root, { recursive: true, force: true });
    },
  };
}
