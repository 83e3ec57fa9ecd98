/**
 * Issue 27 item 3: what the two opt-ins for large fleets (resources/index.ts) are worth. The same
 * fleet through the real engine, once with the project's own program (index.ts calls
 * `quietSdkRegistrationDebugLogs()` and `registerWithoutStackTraces()` before declaring the fleet)
 * and once with a program that declares the same fleet the same way (program/declareFleet.ts)
 * with both turned off. Each variant: a first `up` on a fresh stack from the same seeded documents,
 * then a no-op `up` (the registration of every resource and little else). Pairs alternate which
 * variant goes first, because this shared machine drifts between runs.
 *
 * Measured per run: wall time, CPU of the program (this process: the inline program; the sandbox
 * runs in its own), of the engine and of the provider host, the program's peak heap above where it
 * started, and the state's size.
 */
import * as pulumi from "@pulumi/pulumi";
import type * as automation from "@pulumi/pulumi/automation";
import type { EngineCommand } from "../../cli/engine";
import { projectProgram } from "../../cli/engine";
import { declareFleet } from "../../program/declareFleet";
import { clusterListFromFile } from "../../program/fleet";
import { quietSdkRegistrationDebugLogs, registerWithoutStackTraces } from "../../resources";
import type { EngineRun } from "./benchmarkStack";
import { driveFleet, sameLatency } from "./fleetDriver";
import { startSandboxProcess } from "./sandboxProcess";

/** How the scenario runs. */
export interface OptInScenarioOptions {
  readonly engine: EngineCommand;
  readonly clusters: number;
  /** Pairs of variants (with, without), each pair in alternating order. */
  readonly pairs: number;
  readonly armLatencyInMs: number;
  readonly lookupConcurrency: number;
  readonly log: (line: string) => void;
}

/** One engine run with the program's peak heap. */
export interface OptInEngineRun extends EngineRun {
  /** Highest `heapUsed` of this process during the run, above its value just before. */
  readonly programHeapPeakBytes: number;
}

/** One variant on a fresh stack: its first `up` and the no-op `up` after it. */
export interface OptInRun {
  /** Whether the program opted in to both. */
  readonly optIns: boolean;
  readonly up: OptInEngineRun;
  readonly noOpUp: OptInEngineRun;
  readonly checkpointBytes: number;
}

/** What the scenario measured. */
export interface OptInResult {
  readonly clusters: number;
  /** In the order run. */
  readonly runs: readonly OptInRun[];
}

/**
 * The project's program without the opt-ins: the fleet from the stack's clusters file, declared by
 * the same function index.ts uses. Both opt-ins are turned off first (an earlier run of the project's
 * program in this process left them on: a program never turns them off).
 */
const programWithoutOptIns: automation.PulumiFn = async () => {
  quietSdkRegistrationDebugLogs()();
  registerWithoutStackTraces()();
  const clusters = clusterListFromFile(new pulumi.Config().require("clustersFile"), "clustersFile");
  const { outputs } = await declareFleet(clusters);
  return { clusters: outputs };
};

/** Runs `run` while sampling this process's heap every 20 ms. */
async function withHeapPeak(run: () => Promise<EngineRun>): Promise<OptInEngineRun> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 20);
  try {
    const result = await run();
    return { ...result, programHeapPeakBytes: Math.max(0, peak - before) };
  } finally {
    clearInterval(timer);
  }
}

/** Runs the pairs against one sandbox in a process of its own. */
export async function runOptInScenario(options: OptInScenarioOptions): Promise<OptInResult> {
  const size = { clusters: options.clusters, identitiesPerCluster: 4 };
  const runs: OptInRun[] = [];
  const benchmark = await startSandboxProcess(sameLatency(options));
  await driveFleet({ engine: options.engine, sandbox: benchmark, seed: () => benchmark.seedFleet(size) }, async (driver) => {
    await benchmark.saveDocuments();
    for (let pair = 0; pair < options.pairs; pair += 1) {
      for (const optIns of pair % 2 === 0 ? [true, false] : [false, true]) {
        await benchmark.restoreDocuments();
        const stack = await driver.openStack(`optins-${optIns ? "on" : "off"}-${options.clusters}`, {
          program: optIns ? projectProgram() : programWithoutOptIns,
        });
        try {
          const up = await withHeapPeak(() => stack.up());
          const noOpUp = await withHeapPeak(() => stack.up());
          const run: OptInRun = { optIns, up, noOpUp, checkpointBytes: await stack.checkpointBytes() };
          runs.push(run);
          options.log(
            `  ${optIns ? "with" : "without"} the opt-ins: up ${Math.round(up.wallTimeInMs)} ms (program CPU ${Math.round(up.benchProcessCpuTimeInMs)} ms, ` +
              `engine ${Math.round(up.host.engineCpuTimeInMs)} ms), no-op up ${Math.round(noOpUp.wallTimeInMs)} ms, state ${Math.round(run.checkpointBytes / 1024)} KB`,
          );
        } finally {
          stack.remove();
        }
      }
    }
  });
  return { clusters: options.clusters, runs };
}
