/**
 * What an Automation API inline run leaves in the process that ran it, and the benchmark's release
 * of it (bench/performance/inlineRunMemory.ts): with the real engine, a run's declared resource (the
 * project's, against the sandbox) is
 * still reachable after the run has returned (the SDK's run store, kept alive by an object of the
 * run), and is collected once `release()` has emptied that store. Watches the SDK internals the
 * release relies on: if a later SDK stops retaining the graph, the first test says so; if it
 * changes its store, the second fails.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { engineModule } from "./engineHelpers";

const projectDirectory = resolve(__dirname, "..", "..");
const nativeRequire = createRequire(__filename);
type ReleasingModule = typeof import("../../bench/performance/inlineRunMemory");
type ResourcesModule = typeof import("../../resources");
const { releasingProgram } = nativeRequire(join(projectDirectory, "dist", "bench", "performance", "inlineRunMemory.js")) as ReleasingModule;
const { ServiceProviderClusterIdentityStatus } = nativeRequire(join(projectDirectory, "dist", "resources", "index.js")) as ResourcesModule;

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let root: string;

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/e2e-inline-memory-${process.pid}` });
  mkdirSync(join(projectDirectory, ".pulumi"), { recursive: true });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 1 });
  root = mkdtempSync(join(projectDirectory, ".pulumi", "test-inline-memory-"));
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

/** Names of the resources the garbage collector has reclaimed (a WeakRef would keep its target through the job that made it). */
const reclaimed = new Set<string>();
const finalization = new FinalizationRegistry<string>((name) => reclaimed.add(name));

/** Runs `up` of a one-resource program on a fresh stack; returns the release of its run. */
async function upOnce(name: string, cluster: FleetClusterDescription): Promise<{ release: () => void }> {
  const engine = engineModule();
  const { settingsForRunningSandbox } = nativeRequire(
    join(projectDirectory, "dist", "cli", "sandboxSettings.js"),
  ) as typeof import("../../cli/sandboxSettings");
  const { config, environment } = settingsForRunningSandbox(sandbox);
  let declared = false;
  const released = releasingProgram(() => {
    const resource = new ServiceProviderClusterIdentityStatus(`${name}-cluster`, {
      clusterResourceId: cluster.clusterResourceId,
      dataPlaneOperators: cluster.dataPlaneOperators,
    });
    finalization.register(resource, name);
    declared = true;
    return Promise.resolve({});
  });
  const stack = await engine.openStack({
    engine: await engine.engineCommand(),
    stackName: name,
    paths: { state: join(root, name, "state"), home: join(root, name, "home"), workDirectory: join(root, name, "work") },
    program: released.program,
    config: { ...config, clusters: "[]" },
    environment,
  });
  const result = await stack.up({ color: "never" });
  expect(result.summary.result).toBe("succeeded");
  expect(result.summary.resourceChanges?.create).toBe(2);
  expect(declared).toBe(true);
  return { release: () => released.release() };
}

/** Collects garbage until the resource of run `name` is reclaimed or `rounds` have passed; whether it was. */
async function collected(name: string, rounds = 20): Promise<boolean> {
  for (let round = 0; round < rounds && !reclaimed.has(name); round += 1) {
    collectGarbage();
    await new Promise((resolveTurn) => setTimeout(resolveTurn, 20));
  }
  return reclaimed.has(name);
}

describe("an inline run's resources in the process that ran it", () => {
  it("stay reachable after the run returns, when nothing releases them", async () => {
    await upOnce("kept", fleet[0]);
    expect(await collected("kept")).toBe(false);
  });

  it("are collected once release() has emptied the run's store", async () => {
    const { release } = await upOnce("released", fleet[1]);
    release();
    expect(await collected("released")).toBe(true);
  });
});
