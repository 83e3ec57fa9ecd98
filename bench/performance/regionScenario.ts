/**
 * A region as the engines run it (docs/operations.md, "Running a region"): the region's clusters
 * planned into shards with `aro-hcp-shard-plan`, the plan put beside the state, and every shard's
 * tools/shard-entrypoint.sh started at once as a process of its own, with only JOB_COMPLETION_INDEX
 * telling them apart, as an Indexed Job's pods are. One sandbox (a process of its own, production's
 * credential mode: each cluster in its own tenant, read as its own service managed identity) and
 * one Azurite, the shared `azblob://` backend. Run 1 adopts the fresh region (an empty `refresh`,
 * then `up`); run 2 is the drift check (`refresh`, then a no-op `up`). tools/region-verdict.sh
 * judges each run from the records the shards left beside the state.
 *
 * Measured: the wall time of each run until its last shard finished, each shard's, the CPU of every
 * process (the shards' whole process trees, reaped; the sandbox's; Azurite's), the provider hosts'
 * peak memory, each shard's checkpoint size as stored in the backend, and what the sandbox was asked.
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EngineCommand } from "../../cli/engine";
import { projectDirectory } from "../../cli/engine";
import type { ShardPlanFile } from "../../resources/shards/shardPlanFile";
import type { Azurite } from "../../sandbox/azurite";
import { createAzblobBackend, startAzurite } from "../../sandbox/azurite";
import type { SandboxStatisticsSnapshot } from "../../sandbox/sandboxStatistics";
import { smiKeyPoolSize } from "./benchmarkSandbox";
import { sameLatency } from "./fleetDriver";
import type { ProviderHostObservation } from "./providerHostMonitor";
import { cpuTimeInMs, finishedChildrenCpuTimeInMs, monitorProviderHosts } from "./providerHostMonitor";
import type { FleetSandbox } from "./sandboxProcess";
import { startSandboxProcess } from "./sandboxProcess";
import { sumOfCounts } from "./statistics";

/** One run of every shard at once. */
export interface RegionRun {
  /** From the start of the first shard's process to the end of the last one's. */
  readonly wallTimeInMs: number;
  /** Each shard's process, by shard index. */
  readonly shardTimesInMs: readonly number[];
  /** Each shard's exit code, by shard index (0: its verdict is ok). */
  readonly exitCodes: readonly number[];
  /** CPU of the shards' process trees (entrypoint, CLI, language hosts, programs, provider hosts), reaped. */
  readonly shardsCpuInMs: number;
  readonly sandboxCpuInMs: number;
  readonly azuriteCpuInMs: number;
  /** Provider hosts and engines as sampled during the run: the hosts' highest peak, their CPU and the engines'. */
  readonly host: ProviderHostObservation;
  readonly statistics: SandboxStatisticsSnapshot;
  /** The region's verdict on this run (tools/region-verdict.sh): its exit code and verdict. */
  readonly verdict: {
    readonly code: number;
    readonly verdict: string;
    readonly problems: readonly string[];
    /** Each cause of failed clusters, with how many it failed. */
    readonly causes: ReadonlyArray<{ readonly cause: string; readonly clusters: number }>;
  };
}

/** What the region scenario measured. */
export interface RegionResult {
  readonly clusters: number;
  readonly shards: number;
  readonly clustersPerShard: readonly number[];
  readonly credentialIssuance: { readonly issued: number; readonly timeInMs: number; readonly keyPoolSize: number };
  readonly adoption: RegionRun;
  readonly driftCheck: RegionRun;
  /** Each shard's checkpoint as the backend holds it after the drift check, bytes, by shard index. */
  readonly checkpointBytes: readonly number[];
  readonly resolvedInCosmos: number;
  readonly expectedIdentities: number;
}

interface Finished {
  readonly code: number;
  /** Standard output and error, in that order. */
  readonly output: string;
  readonly stdout: string;
}

/** Runs a command to its end; never rejects. */
function run(command: string, argumentsList: readonly string[], environment: NodeJS.ProcessEnv, cwd = projectDirectory): Promise<Finished> {
  return new Promise((resolveRun) => {
    execFile(command, argumentsList, { cwd, env: environment, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolveRun({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: `${stdout}${stderr}`, stdout });
    });
  });
}

/** Runs a command that must succeed; returns its standard output (a build's progress on stderr is not part of its answer). */
async function mustRun(what: string, command: string, argumentsList: readonly string[], environment: NodeJS.ProcessEnv): Promise<string> {
  const finished = await run(command, argumentsList, environment);
  if (finished.code !== 0) throw new Error(`${what} exited ${finished.code}:\n${finished.output.slice(-4000)}`);
  return finished.stdout;
}

/** One shard's entrypoint as a pod runs it; its output goes to a log file under the scratch directory. */
function startShard(environment: NodeJS.ProcessEnv, logFile: string): Promise<{ readonly code: number; readonly timeInMs: number }> {
  const started = performance.now();
  return new Promise((resolveShard, rejectShard) => {
    const child = spawn("bash", [join(projectDirectory, "tools", "shard-entrypoint.sh")], { cwd: "/", env: environment, stdio: ["ignore", "pipe", "pipe"] });
    const output: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
    child.on("error", rejectShard);
    child.on("close", (code) => {
      writeFileSync(logFile, Buffer.concat(output));
      resolveShard({ code: code ?? 1, timeInMs: performance.now() - started });
    });
  });
}

/** Runs a region of `clusters` in `shards` shards twice (adoption, then the drift check). */
export async function runRegionScenario(options: {
  readonly engine: EngineCommand;
  readonly clusters: number;
  /** The shard count; or, as `aro-hcp-shard-plan --max-shard-clusters` picks it, the most clusters a shard may hold. */
  readonly shards: { readonly count: number } | { readonly maxShardClusters: number };
  readonly armLatencyInMs: number;
  readonly lookupConcurrency: number;
  readonly log: (line: string) => void;
}): Promise<RegionResult> {
  const region = "benchregion";
  mkdirSync(join(projectDirectory, ".pulumi"), { recursive: true });
  const scratch = mkdtempSync(join(projectDirectory, ".pulumi", "bench-region-"));
  const blobFilesBuild = mustRun("tools/build-go-tool.sh blob-files", "bash", [join(projectDirectory, "tools", "build-go-tool.sh"), "blob-files"], process.env);
  const sandbox: FleetSandbox = await startSandboxProcess({ ...sameLatency(options), perClusterCredentials: true });
  let azurite: Azurite | undefined;
  try {
    const fleet = await sandbox.seedTenantFleet({ clusters: options.clusters, identitiesPerCluster: 4 });
    const issued = await sandbox.issueClusterCredentials();
    options.log(`  region: ${fleet.length} clusters seeded, ${issued.issued} SMI certificates issued in ${Math.round(issued.timeInMs)} ms`);
    azurite = await startAzurite();
    const backend = await createAzblobBackend(azurite, "region-state");
    const blobFiles = (await blobFilesBuild).trim().split("\n").pop() ?? "";

    // The operator plans the region and puts the plan beside the state.
    const regionFile = join(scratch, "region.json");
    writeFileSync(regionFile, JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId }))));
    const planDirectory = join(scratch, "plan");
    const sharding = "count" in options.shards ? ["--shards", String(options.shards.count)] : ["--max-shard-clusters", String(options.shards.maxShardClusters)];
    await mustRun(
      "aro-hcp-shard-plan",
      process.execPath,
      [join(projectDirectory, "dist", "cli", "shardPlan.js"), regionFile, ...sharding, "--out", planDirectory],
      process.env,
    );
    const plan = JSON.parse(readFileSync(join(planDirectory, "shard-plan.json"), "utf8")) as ShardPlanFile;
    const backendEnvironment = { ...process.env, ...backend.environment };
    for (const name of ["shard-plan.json", ...plan.shards.map((item) => item.clustersFile)]) {
      await mustRun(
        `blob-files put ${name}`,
        blobFiles,
        ["put", backend.url, `aro-hcp/${region}/shard-plan/${name}`, join(planDirectory, name)],
        backendEnvironment,
      );
    }

    // What every pod has: the CLI and blob-files on PATH, the chart's settings file, the backend.
    const { clustersFile: _clustersFile, clusters: _clusters, ...settings } = sandbox.config;
    const settingsFile = join(scratch, "settings.json");
    writeFileSync(settingsFile, JSON.stringify(settings));
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("PULUMI_") && !name.startsWith("ARO_HCP_")));
    const podEnvironment: NodeJS.ProcessEnv = {
      ...inherited,
      PATH: `${join(options.engine.root, "bin")}:${join(blobFiles, "..")}:${process.env.PATH ?? ""}`,
      HOME: join(scratch, "home"),
      ARO_HCP_SETTINGS_FILE: settingsFile,
      ...sandbox.environment,
      ...backend.environment,
      PULUMI_BACKEND_URL: backend.url,
      PULUMI_CONFIG_PASSPHRASE: "region-benchmark-passphrase",
      ARO_HCP_REGION: region,
    };

    const azuriteProcess = azurite.pid;
    const regionRun = async (runId: string): Promise<RegionRun> => {
      await sandbox.resetStatistics();
      const sandboxBefore = await sandbox.cpuTimeInMs();
      const azuriteBefore = cpuTimeInMs(azuriteProcess) ?? 0;
      const childrenBefore = finishedChildrenCpuTimeInMs();
      const monitor = monitorProviderHosts(200);
      const started = performance.now();
      const finished = await Promise.all(
        plan.shards.map((item) =>
          startShard(
            {
              ...podEnvironment,
              JOB_COMPLETION_INDEX: String(item.index),
              ARO_HCP_RUN_ID: runId,
              ARO_HCP_SCRATCH_DIRECTORY: join(scratch, `pod-${runId}-${item.index}`),
            },
            join(scratch, `${runId}-shard-${item.index}.log`),
          ),
        ),
      );
      const wallTimeInMs = performance.now() - started;
      const host = monitor.stop();
      const shardsCpuInMs = finishedChildrenCpuTimeInMs() - childrenBefore;
      const sandboxCpuInMs = (await sandbox.cpuTimeInMs()) - sandboxBefore;
      const azuriteCpuInMs = (cpuTimeInMs(azuriteProcess) ?? azuriteBefore) - azuriteBefore;
      const statistics = await sandbox.statistics();
      const verdictDirectory = join(scratch, `verdict-${runId}`);
      const judged = await run("bash", [join(projectDirectory, "tools", "region-verdict.sh")], {
        ...podEnvironment,
        ARO_HCP_RUN_ID: runId,
        ARO_HCP_SCRATCH_DIRECTORY: verdictDirectory,
      });
      writeFileSync(join(scratch, `verdict-${runId}.log`), judged.output);
      const report = JSON.parse(readFileSync(join(verdictDirectory, `${region}-verdict`, "region-report.json"), "utf8")) as {
        verdict: string;
        problems: string[];
        causes?: Array<{ cause: string; resources: string[] }>;
      };
      options.log(
        `  region ${runId}: ${Math.round(wallTimeInMs)} ms (shards ${finished.map((shard) => Math.round(shard.timeInMs)).join(", ")} ms; exit ${finished.map((shard) => shard.code).join(", ")}), ` +
          `CPU shards ${Math.round(shardsCpuInMs)} ms, sandbox ${Math.round(sandboxCpuInMs)} ms, Azurite ${Math.round(azuriteCpuInMs)} ms; host peak ${Math.round(host.peakResidentBytes / 2 ** 20)} MB; ` +
          `Cosmos writes ${sumOfCounts(statistics.cosmos.documentWritesByMethod)}; verdict ${report.verdict} (exit ${judged.code})`,
      );
      return {
        wallTimeInMs,
        shardTimesInMs: finished.map((shard) => shard.timeInMs),
        exitCodes: finished.map((shard) => shard.code),
        shardsCpuInMs,
        sandboxCpuInMs,
        azuriteCpuInMs,
        host,
        statistics,
        verdict: {
          code: judged.code,
          verdict: report.verdict,
          problems: report.problems,
          causes: (report.causes ?? []).map((each) => ({ cause: each.cause, clusters: each.resources.length })),
        },
      };
    };

    const adoption = await regionRun("adoption");
    const resolvedInCosmos = await sandbox.countResolved();
    const driftCheck = await regionRun("drift-check");

    // Each shard's checkpoint, as the shards left it in the backend.
    const stateDirectory = join(scratch, "state");
    await mustRun("blob-files get .pulumi/stacks", blobFiles, ["get", backend.url, ".pulumi/stacks", stateDirectory], backendEnvironment);
    const sizes = new Map<string, number>();
    const walk = (directory: string): void => {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        const path = join(directory, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".json")) sizes.set(entry.name, statSync(path).size);
      }
    };
    walk(stateDirectory);
    const checkpointBytes = plan.shards.map((item) => sizes.get(`${region}-shard-${item.index}.json`) ?? Number.NaN);
    return {
      clusters: options.clusters,
      shards: plan.shardCount,
      clustersPerShard: plan.shards.map((item) => item.clusters),
      credentialIssuance: { issued: issued.issued, timeInMs: issued.timeInMs, keyPoolSize: smiKeyPoolSize },
      adoption,
      driftCheck,
      checkpointBytes,
      resolvedInCosmos,
      expectedIdentities: options.clusters * 4,
    };
  } finally {
    await azurite?.stop();
    await sandbox.stop();
    if (process.env.BENCH_KEEP_STATE !== "1") rmSync(scratch, { recursive: true, force: true });
  }
}
