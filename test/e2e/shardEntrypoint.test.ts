/**
 * A region's run as the Kubernetes Job's pods run it: tools/shard-entrypoint.sh started as N separate
 * processes at once, each with only JOB_COMPLETION_INDEX telling them apart, the literal Pulumi CLI
 * on PATH, Azurite as the one shared `azblob://` backend (the shard plan and the run records live
 * beside the state there), against the sandbox in production's credential mode (each cluster read
 * as its own service managed identity). Then tools/region-verdict.sh, as the verdict job runs it,
 * judges the run from what the shards left beside the state. The scripts run from the image's /app as
 * tools/image-layout.sh lays it out for deploy/Dockerfile (the compiled project, the production npm
 * packages, outside this checkout so nothing resolves from its node_modules), and must write nothing
 * there: the pod's root filesystem is read-only. Nothing is set up for the scripts that a pod would
 * not have: the plan is uploaded beside the state as an operator would, the settings are the file the
 * chart's ConfigMap mounts.
 */
import { execFile, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RegionReport } from "../../resources/report/regionReport";
import type { ShardPlanFile } from "../../resources/shards/shardPlanFile";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { demoTenantIds, seedDemoFleet, seedTenantFleet } from "../../sandbox/seed";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import { type AzblobBackend, type Azurite, createAzblobBackend, startAzurite } from "../../sandbox/azurite";
import { waitUntil } from "./azblobBackend";
import { e2eScratchDirectory, engineModule, revokedCertificateFault, storedClientId, tamperWithFirstIdentities, wrongClientId } from "./engineHelpers";

const projectDirectory = resolve(__dirname, "..", "..");
const region = "testregion";
const shardCount = 3;

interface Finished {
  readonly code: number;
  /** Standard output then standard error. */
  readonly output: string;
  readonly stdout: string;
}

/** Runs a command as a separate process; never rejects. Asynchronous: the sandbox answers from this event loop. */
function run(command: string, argumentsList: readonly string[], environment: NodeJS.ProcessEnv, cwd = projectDirectory): Promise<Finished> {
  return new Promise((resolveRun) => {
    execFile(command, argumentsList, { cwd, env: environment, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 540_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolveRun({ code, output: `${stdout}${stderr}`, stdout });
    });
  });
}

let sandbox: Sandbox;
let azurite: Azurite;
let backend: AzblobBackend;
let fleet: FleetClusterDescription[];
let scratch: string;
let podEnvironment: NodeJS.ProcessEnv;
let plan: ShardPlanFile;
/** The image's /app. */
let image: string;
/** tools/blob-files, built: what an operator uses to put files beside the state. */
let blobFilesBinary: string;

/** What a shard's pod has: the image's PATH (the CLI and blob-files), the chart's settings and backend, its index. */
function shardEnvironment(index: number, runId: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...podEnvironment,
    JOB_COMPLETION_INDEX: String(index),
    ARO_HCP_RUN_ID: runId,
    ARO_HCP_SCRATCH_DIRECTORY: join(scratch, `pod-${runId}-${index}`),
    ...extra,
  };
}

function shard(index: number, runId: string, extra: NodeJS.ProcessEnv = {}): Promise<Finished> {
  return run("bash", [join(image, "tools", "shard-entrypoint.sh")], shardEnvironment(index, runId, extra), "/");
}

/** The verdict job's pod: the region's newest run unless a run is named; its exit code, output and the report it wrote. */
async function verdict(runId?: string): Promise<Finished & { report: RegionReport }> {
  const environment = {
    ...podEnvironment,
    ARO_HCP_SCRATCH_DIRECTORY: join(scratch, `verdict-${runId ?? "newest"}`),
    ...(runId === undefined ? {} : { ARO_HCP_RUN_ID: runId }),
  };
  const finished = await run("bash", [join(image, "tools", "region-verdict.sh")], environment, "/");
  const reportFile = join(scratch, `verdict-${runId ?? "newest"}`, `${region}-verdict`, "region-report.json");
  return { ...finished, report: JSON.parse(readFileSync(reportFile, "utf8")) as RegionReport };
}

/** Every document in the sandbox's Cosmos container, read back through the Cosmos client: id to `_etag`. */
async function etags(): Promise<Record<string, string>> {
  const { resources } = await sandbox.cosmosContainer.items.readAll<{ id: string; _etag: string }>().fetchAll();
  return Object.fromEntries(resources.map((document) => [document.id, document._etag]));
}

/** Puts local files beside the state, as the operator does with blob-files. */
async function putBesideState(files: Readonly<Record<string, string>>): Promise<void> {
  for (const [key, file] of Object.entries(files)) {
    const put = await run(blobFilesBinary, ["put", backend.url, key, file], podEnvironment);
    expect(put.code, put.output).toBe(0);
  }
}

/** The clusters a plan directory's shard file lists. */
const clustersOf = (directory: string, clustersFile: string): { clusterResourceId: string }[] =>
  JSON.parse(readFileSync(join(directory, clustersFile), "utf8")) as { clusterResourceId: string }[];

const nameOf = (cluster: FleetClusterDescription): string => {
  const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
  return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
};

beforeAll(async () => {
  scratch = e2eScratchDirectory("shard-entrypoint");
  image = join(mkdtempSync(join(tmpdir(), "aro-hcp-image-")), "app");
  const [blobFiles, cli, layout] = await Promise.all([
    run("bash", [join(projectDirectory, "tools", "build-go-tool.sh"), "blob-files"], process.env),
    engineModule().engineCommand(),
    run("bash", [join(projectDirectory, "tools", "image-layout.sh"), image], process.env),
  ]);
  expect(blobFiles.code, blobFiles.output).toBe(0);
  expect(layout.code, layout.output).toBe(0);
  blobFilesBinary = blobFiles.stdout.trim().split("\n").pop() ?? "";
  sandbox = await startSandbox({ certificateDirectory: join(scratch, "sandbox-ca"), perClusterCredentials: true });
  // Two tenants of the demo fleet (the first holds two clusters) and three clusters each in a tenant of its own.
  fleet = [...seedDemoFleet(sandbox), ...seedTenantFleet(sandbox, { clusters: 3, identitiesPerCluster: 1 })];
  azurite = await startAzurite();
  backend = await createAzblobBackend(azurite, "region-state");

  // The chart's settings: a JSON file of config keys (the values' `settings`), the secrets of the sandbox in the environment.
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const settingsFile = join(scratch, "settings.json");
  writeFileSync(settingsFile, JSON.stringify({ ...config, documentWaitSeconds: "2" }));
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("PULUMI_") && !name.startsWith("ARO_HCP_")));
  podEnvironment = {
    ...inherited,
    PATH: `${join(cli.root, "bin")}:${dirname(blobFilesBinary)}:${process.env.PATH ?? ""}`,
    HOME: join(scratch, "home"),
    ARO_HCP_SETTINGS_FILE: settingsFile,
    ...environment,
    ...backend.environment,
    PULUMI_BACKEND_URL: backend.url,
    PULUMI_CONFIG_PASSPHRASE: "shard-entrypoint-test-passphrase",
    ARO_HCP_REGION: region,
    ARO_HCP_PROJECT_DIR: image,
  };

  // The operator plans the region and puts the plan beside the state.
  const regionFile = join(scratch, "region.json");
  writeFileSync(regionFile, JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId }))));
  const planned = await run(
    process.execPath,
    [join(projectDirectory, "dist", "cli", "shardPlan.js"), regionFile, "--shards", String(shardCount), "--out", join(scratch, "plan")],
    process.env,
  );
  expect(planned.code, planned.output).toBe(0);
  plan = JSON.parse(readFileSync(join(scratch, "plan", "shard-plan.json"), "utf8")) as ShardPlanFile;
  const names = ["shard-plan.json", ...plan.shards.map((item) => item.clustersFile)];
  await putBesideState(Object.fromEntries(names.map((name) => [`aro-hcp/${region}/shard-plan/${name}`, join(scratch, "plan", name)])));
}, 600_000);

afterAll(async () => {
  await azurite?.stop();
  await sandbox?.stop();
  if (image !== undefined) rmSync(dirname(image), { recursive: true, force: true });
});

describe("the shard entrypoint, run as an Indexed Job's pods, and the region's verdict job", () => {
  it("corrects every cluster it can, and the region's verdict names the refused tenant's clusters once; a shard that never ran fails it", async () => {
    const refused = fleet.filter((cluster) => cluster.tenantId === demoTenantIds[0]);
    const others = fleet.filter((cluster) => cluster.tenantId !== demoTenantIds[0]);
    expect(refused).toHaveLength(2);
    expect(plan.shards.filter((item) => item.clusters > 0).length, "shards holding clusters").toBeGreaterThan(1);

    const layoutBuilt = join(scratch, "layout-built");
    writeFileSync(layoutBuilt, "");
    // Run 1 adopts the region: every shard at once, each its own process. The largest shard's pod reads
    // its clusters from a copy of the plan whose file for it lost its first cluster: it runs the rest,
    // green, and exits 0; the verdict names the cluster its run left unaccounted for.
    const [cut] = [...plan.shards].sort((left, right) => right.clusters - left.clusters);
    expect(cut.clusters, "clusters of the largest shard").toBeGreaterThan(1);
    const cutPlan = join(scratch, "plan-cut");
    cpSync(join(scratch, "plan"), cutPlan, { recursive: true });
    const [dropped, ...kept] = clustersOf(cutPlan, cut.clustersFile);
    writeFileSync(join(cutPlan, cut.clustersFile), JSON.stringify(kept));
    const adopted = await Promise.all(
      plan.shards.map((item) => shard(item.index, "run-1", item.index === cut.index ? { ARO_HCP_SHARD_PLAN_DIRECTORY: cutPlan } : {})),
    );
    adopted.forEach((finished, index) => expect(finished.code, `shard ${index}:\n${finished.output}`).toBe(0));
    const partial = await verdict("run-1");
    expect(partial.code, partial.output).toBe(1);
    const droppedName = nameOf({ clusterResourceId: dropped.clusterResourceId } as FleetClusterDescription);
    expect(partial.report.problems).toEqual([
      `shard ${cut.index} (${cut.clustersFile}) left 1 of its ${cut.clusters} clusters unaccounted for (its run stopped part-way, or its program declared fewer): ${droppedName}`,
    ]);
    expect(partial.report.shards[cut.index]).toMatchObject({ unaccounted: [droppedName], verdict: "failed" });
    // The Job retries the index within the run, over the plan beside the state: its records replace the cut run's.
    const retried = await shard(cut.index, "run-1");
    expect(retried.code, retried.output).toBe(0);
    const green = await verdict("run-1");
    expect(green.code, green.output).toBe(0);
    expect(green.report).toMatchObject({ verdict: "ok", problems: [], planId: plan.planId, runId: "run-1", counts: { clusters: fleet.length } });

    // Someone changed every cluster's first identity in Cosmos; the refused tenant's clusters are due for their recheck.
    tamperWithFirstIdentities(sandbox, fleet, demoTenantIds[0]);
    sandbox.faults.add(revokedCertificateFault(demoTenantIds[0]));

    // Run 2: every shard at once again. A shard holding a refused cluster exits 3 (clusters failed, not worth a retry).
    const shardOf = (cluster: FleetClusterDescription): number =>
      plan.shards.findIndex((item) => readFileSync(join(scratch, "plan", item.clustersFile), "utf8").includes(cluster.clusterResourceId));
    const refusedShards = new Set(refused.map(shardOf));
    const corrected = await Promise.all(plan.shards.map((item) => shard(item.index, "run-2")));
    corrected.forEach((finished, index) => expect(finished.code, `shard ${index}:\n${finished.output}`).toBe(refusedShards.has(index) ? 3 : 0));

    for (const cluster of others) {
      expect(await storedClientId(sandbox, cluster), cluster.clusterResourceId).toBe(
        sandbox.identities.get(Object.values(cluster.dataPlaneOperators)[0])?.clientId,
      );
    }
    for (const cluster of refused) expect(await storedClientId(sandbox, cluster), cluster.clusterResourceId).toBe(wrongClientId);

    // The verdict job judges the newest run from what the shards left beside the state.
    const failed = await verdict();
    expect(failed.code, failed.output).toBe(1);
    expect(failed.output).toContain("judging run run-2");
    expect(failed.report).toMatchObject({ verdict: "failed", problems: [], runId: "run-2", counts: { clusters: fleet.length } });
    expect(failed.report.causes).toHaveLength(1);
    expect([...failed.report.causes[0].resources].sort()).toEqual(refused.map(nameOf).sort());
    expect(failed.report.causes[0].cause).toContain(demoTenantIds[0]);
    for (const cluster of others) expect(failed.report.clusters[nameOf(cluster)]?.outcome, cluster.clusterResourceId).toBe("driftCorrected");
    expect(failed.output.split("\n").filter((line) => line.includes("× invalid_client"))).toHaveLength(1);
    expect(await azurite.listBlobs("region-state", `aro-hcp/${region}/reports/`)).toEqual([1, 2].map((run) => `aro-hcp/${region}/reports/run-${run}.json`));

    // Run 3: one shard's pod never ran. The verdict names it.
    sandbox.faults.clear("entra");
    const [ran, ...neverRan] = plan.shards.filter((item) => item.clusters > 0);
    expect((await shard(ran.index, "run-3")).code).toBe(0);
    const missing = await verdict("run-3");
    expect(missing.code, missing.output).toBe(1);
    expect(missing.report.problems).toEqual(
      neverRan.map((item) => `shard ${item.index} (${item.clustersFile}, ${item.clusters} cluster${item.clusters === 1 ? "" : "s"}) did not report`),
    );
    expect(missing.output).toContain(`shard ${neverRan[0].index} (${neverRan[0].clustersFile}`);
    // The image's files are as built: a read-only root filesystem would have refused nothing.
    const written = await run("find", [image, "-newer", layoutBuilt, "-not", "-type", "d"], process.env);
    expect(written.stdout.trim(), "files the pods wrote under /app").toBe("");
    // Nothing secret in what the pods printed or left beside the state.
    for (const finished of [...adopted, ...corrected, failed, missing]) {
      expect(finished.output).not.toContain(sandbox.cosmosKey);
      expect(finished.output).not.toContain(backend.environment.AZURE_STORAGE_KEY);
    }
  }, 600_000);

  it("recovers a shard killed mid-run on its next run on the same host at once, its lock removed though young; another host's young lock is kept (exit 1)", async () => {
    const [target] = [...plan.shards].sort((left, right) => right.clusters - left.clusters);
    const clusters = fleet.filter((cluster) => readFileSync(join(scratch, "plan", target.clustersFile), "utf8").includes(cluster.clusterResourceId));
    const stack = `${region}-shard-${target.index}`;
    const locks = async (): Promise<string[]> => (await backend.blobs(".pulumi/locks/")).filter((key) => key.includes(`/${stack}/`));
    // Every cluster of the shard has drifted: the killed run had work to do, and the recovery must do it.
    tamperWithFirstIdentities(sandbox, clusters);

    // The shard's pod is evicted mid-run: its refresh or update holds the stack's lock when the whole
    // process tree is killed at once, as the kubelet kills a container (the CLI starts its plugins in
    // process groups of their own, so they are found by parent).
    const pod = spawn("bash", [join(image, "tools", "shard-entrypoint.sh")], {
      env: shardEnvironment(target.index, "run-4"),
      cwd: "/",
      detached: true,
      stdio: "ignore",
    });
    let exited = false;
    const podExit = new Promise<void>((resolveExit) => pod.on("exit", () => resolveExit()));
    void podExit.then(() => (exited = true));
    await waitUntil(async () => exited || (await locks()).length > 0, 50);
    expect(exited, "the pod ended before it locked its stack").toBe(false);
    const tree = await run("ps", ["-eo", "pid=,ppid="], process.env);
    const children = new Map<number, number[]>();
    for (const [pid, parent] of tree.stdout
      .trim()
      .split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number))) {
      children.set(parent, [...(children.get(parent) ?? []), pid]);
    }
    const doomed: number[] = [];
    for (const queue = [pod.pid ?? 0]; queue.length > 0;) {
      const pid = queue.shift() ?? 0;
      doomed.push(pid);
      queue.push(...(children.get(pid) ?? []));
    }
    process.kill(-(pod.pid ?? 0), "SIGKILL");
    for (const pid of doomed) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone with its group.
      }
    }
    await podExit;
    const left = await locks();
    expect(left, "the killed run's lock").toHaveLength(1);
    const lockName = left[0].split("/").pop() ?? "";
    const lockDirectory = join(scratch, "killed-lock");
    const got = await run(blobFilesBinary, ["get", backend.url, dirname(left[0]), lockDirectory], podEnvironment);
    expect(got.code, got.output).toBe(0);
    const lockFile = join(lockDirectory, lockName);
    const lock = JSON.parse(readFileSync(lockFile, "utf8")) as { hostname: string; pid: number; timestamp: string };
    // The CLI records the kernel's hostname (os.Hostname()): the runs below are on this machine, the
    // same host, as an Indexed Job's retry of the index is (its pod's hostname is <job-name>-<index>).
    expect(lock.hostname).toBe(hostname());

    // The same lock as another host's (a workflow's runner, an operator's machine), younger than the
    // stale age: another runner's, so exit 1, naming it, the lock kept.
    const elsewhere = join(scratch, "lock-elsewhere.json");
    writeFileSync(elsewhere, JSON.stringify({ ...lock, hostname: "shard-runner-elsewhere" }));
    await putBesideState({ [left[0]]: elsewhere });
    const refused = await shard(target.index, "run-5", { ARO_HCP_STALE_LOCK_SECONDS: "3600" });
    expect(refused.code, refused.output).toBe(1);
    expect(refused.output).toContain(`stack ${stack} is locked by ${lockName}`);
    expect(refused.output).toContain("another runner's; stale at");
    expect(await locks()).toEqual(left);

    // The lock as the killed run left it, its pid since taken by another process here (pids are reused:
    // a process started after the lock was taken), and beside it another host's lock two hours old.
    // The region's next run, every shard at once: the killed shard's pod removes this host's lock at
    // once though it is young (no process of its pid older than the lock runs here), the other by its
    // age, and corrects every cluster.
    const reuser = spawn("sleep", ["300"], { stdio: "ignore" });
    const reused = join(scratch, "lock-reused.json");
    // A minute old: young against the stale age, and older than the reusing process by more than the
    // start time's resolution (/proc's boot time is in whole seconds).
    writeFileSync(reused, JSON.stringify({ ...lock, pid: reuser.pid, timestamp: new Date(Date.now() - 60_000).toISOString() }));
    await putBesideState({ [left[0]]: reused });
    const oldName = "0f0f0f0f-0000-4000-8000-000000000000.json";
    const old = join(scratch, "lock-old.json");
    writeFileSync(old, JSON.stringify({ ...lock, hostname: "shard-runner-elsewhere", timestamp: new Date(Date.now() - 7_200_000).toISOString() }));
    await putBesideState({ [`${dirname(left[0])}/${oldName}`]: old });
    expect(await locks()).toHaveLength(2);
    const next = await Promise.all(plan.shards.map((item) => shard(item.index, "run-5", { ARO_HCP_STALE_LOCK_SECONDS: "3600" })));
    next.forEach((finished, index) => expect(finished.code, `shard ${index}:\n${finished.output}`).toBe(0));
    const recovered = next[target.index];
    expect(recovered.output).toContain(`stack ${stack} is locked by ${lockName}`);
    expect(recovered.output).toContain(`(pid ${reuser.pid}), this host's, and no process ${reuser.pid} older than the lock runs here`);
    reuser.kill();
    expect(recovered.output).toContain(`stack ${stack} is locked by a stale lock ${oldName}`);
    expect(await locks()).toEqual([]);
    for (const cluster of clusters) {
      expect(await storedClientId(sandbox, cluster), cluster.clusterResourceId).toBe(
        sandbox.identities.get(Object.values(cluster.dataPlaneOperators)[0])?.clientId,
      );
    }
    const judged = await verdict("run-5");
    expect(judged.code, judged.output).toBe(0);
    expect(judged.report).toMatchObject({ verdict: "ok", problems: [], counts: { clusters: fleet.length } });
  }, 300_000);

  it("moves the region to a new shard count through the entrypoint with no Cosmos write: every shard of the new plan at once, the verdict green", async () => {
    // The operator plans again with another count and puts the new plan beside the state, over the old one's files.
    const newDirectory = join(scratch, "plan-new");
    const planned = await run(
      process.execPath,
      [join(projectDirectory, "dist", "cli", "shardPlan.js"), join(scratch, "region.json"), "--shards", String(shardCount + 1), "--out", newDirectory],
      process.env,
    );
    expect(planned.code, planned.output).toBe(0);
    const newPlan = JSON.parse(readFileSync(join(newDirectory, "shard-plan.json"), "utf8")) as ShardPlanFile;
    expect(newPlan.planId).not.toBe(plan.planId);
    const shardsOf = (directory: string, of: ShardPlanFile): Map<string, number> =>
      new Map(
        of.shards.flatMap((item) => clustersOf(directory, item.clustersFile).map((cluster): [string, number] => [cluster.clusterResourceId, item.index])),
      );
    const [before, after] = [shardsOf(join(scratch, "plan"), plan), shardsOf(newDirectory, newPlan)];
    expect(
      fleet.filter((cluster) => before.get(cluster.clusterResourceId) !== after.get(cluster.clusterResourceId)).length,
      "clusters that move",
    ).toBeGreaterThan(0);
    const names = ["shard-plan.json", ...newPlan.shards.map((item) => item.clustersFile)];
    await putBesideState(Object.fromEntries(names.map((name) => [`aro-hcp/${region}/shard-plan/${name}`, join(newDirectory, name)])));

    // The fleet is current (the run before corrected every cluster). The one run after the change, with
    // ARO_HCP_ALLOW_CLUSTER_REMOVALS as section 9 says: every shard of the new plan at once.
    const etagsBefore = await etags();
    expect(Object.keys(etagsBefore).length).toBeGreaterThan(fleet.length);
    sandbox.statistics.reset();
    const moved = await Promise.all(newPlan.shards.map((item) => shard(item.index, "run-6", { ARO_HCP_ALLOW_CLUSTER_REMOVALS: "true" })));
    moved.forEach((finished, index) => expect(finished.code, `shard ${index}:\n${finished.output}`).toBe(0));
    expect(await etags(), "every document's _etag").toEqual(etagsBefore);
    const snapshot = sandbox.statistics.snapshot();
    expect(
      Object.values(snapshot.cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0),
      "Cosmos writes",
    ).toBe(0);
    expect(snapshot.arm.getRequests, "ARM reads").toBe(0);
    // Each shard's records account for exactly the clusters the new plan gives it.
    const judged = await verdict("run-6");
    expect(judged.code, judged.output).toBe(0);
    expect(judged.report).toMatchObject({
      verdict: "ok",
      planId: newPlan.planId,
      shardCount: shardCount + 1,
      problems: [],
      counts: { clusters: fleet.length },
    });
  }, 300_000);
});
