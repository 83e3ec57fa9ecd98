/**
 * Floors measured in the same run as what they bound: the floor worker in its own process for
 * engine runs, and sequential GETs through the in-process arm-msi client for the provider.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectDirectory } from "../../cli/engine";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { BenchmarkSandbox } from "./benchmarkSandbox";
import type { FloorCluster, FloorWorkerReport } from "./floorWorker";
import { processCpuTimeInMs } from "./statistics";

/** A floor worker run: its whole process (start to exit) and its own work time. */
export interface FloorRun extends FloorWorkerReport {
  readonly processWallTimeInMs: number;
  /** CPU time of the sandbox meanwhile, answering the worker. */
  readonly sandboxCpuTimeInMs: number;
}

/** What the floor worker does (floorWorker.ts). */
export type FloorMode = "sync" | "read" | "cluster";

/** The floor plan of a fleet. */
export function floorPlan(fleet: readonly FleetClusterDescription[]): FloorCluster[] {
  return fleet.map((cluster) => ({
    partitionKey: cluster.partitionKey,
    documentId: cluster.serviceProviderClusterDocumentId,
    clusterDocumentId: cluster.clusterDocumentId,
    identityResourceIds: Object.values(cluster.dataPlaneOperators),
  }));
}

/**
 * Runs the floor worker (`sync`, `read`, or `cluster` for `clusterServiceManagedIdentity` mode)
 * and times the whole process from the outside.
 * `sandboxCpuTimeInMs` reads the CPU time of the sandbox's process (default: this process, for a
 * sandbox started in it).
 */
export async function runFloorWorker(
  benchmark: Pick<BenchmarkSandbox, "settingsEnvironment">,
  mode: FloorMode,
  plan: readonly FloorCluster[],
  sandboxCpuTimeInMs: () => number | Promise<number> = processCpuTimeInMs,
): Promise<FloorRun> {
  const directory = mkdtempSync(join(tmpdir(), "aro-hcp-floor-"));
  const planFile = join(directory, "plan.json");
  writeFileSync(planFile, JSON.stringify(plan));
  const script = join(projectDirectory, "dist", "bench", "performance", "floorWorker.js");
  const cpuBefore = await sandboxCpuTimeInMs();
  const started = performance.now();
  try {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [script, mode, planFile],
        {
          cwd: projectDirectory,
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...benchmark.settingsEnvironment },
          maxBuffer: 16 * 1024 * 1024,
        },
        (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(`floor worker (${mode}) failed: ${stderr.trim() || error.message}`))),
      );
    });
    const processWallTimeInMs = performance.now() - started;
    return {
      ...(JSON.parse(output.trim().split("\n").pop() ?? "{}") as FloorWorkerReport),
      processWallTimeInMs,
      sandboxCpuTimeInMs: (await sandboxCpuTimeInMs()) - cpuBefore,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
