/**
 * The fleet benchmark's sandbox in a process of its own (bench/performance/sandboxProcess.ts): the
 * benchmark drives it over IPC while a floor worker (another process, the real SDK clients) syncs
 * a small fleet through it; what the worker wrote is read back in the sandbox's own store.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { FleetSandbox } from "../../bench/performance/sandboxProcess";
import { processIsAlive } from "../../bench/reliability/interruptedRun";

// The built benchmark, as `npm run bench` runs it: it finds its scripts under the project's dist/.
const projectDirectory = join(__dirname, "..", "..");
const nativeRequire = createRequire(join(projectDirectory, "package.json"));
const { startSandboxProcess } = nativeRequire(
  join(projectDirectory, "dist", "bench", "performance", "sandboxProcess.js"),
) as typeof import("../../bench/performance/sandboxProcess");
const { floorPlan, runFloorWorker } = nativeRequire(
  join(projectDirectory, "dist", "bench", "performance", "floors.js"),
) as typeof import("../../bench/performance/floors");

describe("the fleet benchmark's sandbox process", () => {
  let sandbox: FleetSandbox | undefined;

  afterAll(async () => {
    await sandbox?.stop();
  });

  it("answers a floor worker, counts what it wrote, puts the seeded documents back and goes away on stop", async () => {
    sandbox = await startSandboxProcess({ armLatencyInMs: 0, cosmosLatencyInMs: 0, lookupConcurrency: 4 });
    expect(sandbox.pid).not.toBe(process.pid);
    expect(processIsAlive(sandbox.pid)).toBe(true);
    const caFile = sandbox.config.tlsCaFile;
    expect(caFile).toBe(join(projectDirectory, ".sandbox", `bench-${sandbox.pid}`, "ca.pem"));
    expect(existsSync(caFile)).toBe(true);

    const fleet = await sandbox.seedFleet({ clusters: 3, identitiesPerCluster: 2 });
    expect(fleet).toHaveLength(3);
    await sandbox.saveDocuments();
    expect(await sandbox.countResolved()).toBe(0);

    await sandbox.resetStatistics();
    const run = await runFloorWorker(sandbox, "sync", floorPlan(fleet), () => sandbox!.cpuTimeInMs());
    // What the hook's pass makes in processCredential mode: the two data plane operator identities,
    // and the MSI half's control plane operator identity and service managed identity, per cluster.
    expect(run.lookups).toBe(12);
    // The sandbox's CPU is its own process's, not this one's.
    expect(run.sandboxCpuTimeInMs).toBeGreaterThan(0);
    const statistics = await sandbox.statistics();
    expect(statistics.arm.getRequests).toBe(12);
    expect(await sandbox.countResolved()).toBe(6);

    await sandbox.restoreDocuments();
    expect(await sandbox.countResolved()).toBe(0);

    const pid = sandbox.pid;
    await sandbox.stop();
    expect(processIsAlive(pid)).toBe(false);
    // Its CA bundle and the directory it made for it are gone with it.
    expect(existsSync(join(projectDirectory, ".sandbox", `bench-${pid}`))).toBe(false);
    await expect(sandbox.statistics()).rejects.toThrow("sandbox process exited");
    sandbox = undefined;
  });
});
