/**
 * One fleet size, with profiles: `node dist/bench/performance/profileFleet.js <clusters> [profile directory] [--parallel N] [--repetitions N] [--subscriptions N]`.
 *
 * Runs the fleet scenario (floor, up, no-op up, refresh, engine floor) at one size and prints its
 * numbers. With a directory, the provider host runs with hostProfiler.ts preloaded (through
 * NODE_OPTIONS, which the engine passes on to the host it starts) and the engine with its hidden
 * `--profiling` flag (Go pprof CPU and heap profiles), and the hottest functions of each are printed
 * (Go profiles: `go tool pprof -top`). Not part of `npm run bench`: profiles slow both processes down.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as automation from "@pulumi/pulumi/automation";
import type { EngineCommand } from "../../cli/engine";
import { engineCommand } from "../../cli/engine";
import type { EngineRun } from "./benchmarkStack";
import { runBenchmarkFleet } from "./fleetScenario";

/** An engine whose every invocation writes `<directory>/engine.<pid>.{cpu,mem,trace}`. */
async function profilingEngine(engine: EngineCommand, directory: string): Promise<EngineCommand> {
  const root = join(directory, "engine-root");
  mkdirSync(join(root, "bin"), { recursive: true });
  const wrapper = join(root, "bin", "pulumi");
  writeFileSync(wrapper, `#!/bin/sh\nexec "${join(engine.root, "bin", "pulumi")}" --profiling "${join(directory, "engine")}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  symlinkSync(join(engine.root, "bin", "pulumi-resource-pulumi-nodejs"), join(root, "bin", "pulumi-resource-pulumi-nodejs"));
  return { ...engine, root, command: await automation.PulumiCommand.get({ root, skipVersionCheck: true }) };
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

/** Self time by function of a V8 .cpuprofile, the top `count`, as lines. */
export function topOfCpuProfile(file: string, count = 25): string[] {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((sample, index) => {
    const frame = byNode.get(sample)?.callFrame;
    const delta = profile.timeDeltas[index] ?? 0;
    total += delta;
    const key = `${frame?.functionName || "(anonymous)"} ${(frame?.url ?? "").replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/dist\//, "dist/")}:${(frame?.lineNumber ?? 0) + 1}`;
    selfTime.set(key, (selfTime.get(key) ?? 0) + delta);
  });
  const sorted = [...selfTime.entries()].sort((left, right) => right[1] - left[1]).slice(0, count);
  return [
    `total ${(total / 1000).toFixed(0)} ms`,
    ...sorted.map(([key, micros]) => `${(micros / 1000).toFixed(0).padStart(7)} ms ${((100 * micros) / total).toFixed(1).padStart(5)} %  ${key}`),
  ];
}

async function main(): Promise<void> {
  const parallelAt = process.argv.indexOf("--parallel");
  const parallel = parallelAt > 0 ? { parallel: Number(process.argv[parallelAt + 1]) } : {};
  // No-op `up`s and `refresh`es, each followed by the engine floor's (fleetScenario.ts followUpRepetitions).
  const repetitionsAt = process.argv.indexOf("--repetitions");
  const followUpRepetitions = repetitionsAt > 0 ? Number(process.argv[repetitionsAt + 1]) : 1;
  // Subscriptions (Cosmos partitions) the clusters are spread over: the default is seedFleet's 4.
  const subscriptionsAt = process.argv.indexOf("--subscriptions");
  const subscriptions = subscriptionsAt > 0 ? { subscriptions: Number(process.argv[subscriptionsAt + 1]) } : {};
  const valued = new Set(["--parallel", "--repetitions", "--subscriptions"]);
  const positional = process.argv.slice(2).filter((argument, index, all) => !argument.startsWith("--") && !valued.has(all[index - 1] ?? ""));
  const clusters = Number(positional[0] ?? "1000");
  const directory = positional[1] === undefined ? undefined : resolve(positional[1]);
  const log = (line: string): void => console.log(line);
  let engine = await engineCommand(log);
  let engineEnvironment: Record<string, string> = {};
  if (directory !== undefined) {
    mkdirSync(directory, { recursive: true });
    engine = await profilingEngine(engine, directory);
    mkdirSync(join(directory, "host"), { recursive: true });
    engineEnvironment = { NODE_OPTIONS: `--require ${join(__dirname, "hostProfiler.js")}`, ARO_HCP_PROFILE_DIRECTORY: join(directory, "host") };
  }
  const result = await runBenchmarkFleet(engine, log, clusters, true, { engineEnvironment, followUpRepetitions, ...parallel, ...subscriptions });
  // The sandbox's CPU is measured for our runs only (CountedRun), not for the engine floor's.
  const cpuOf = (run: (EngineRun & { readonly sandboxCpuTimeInMs?: number }) | undefined) => ({
    host: run?.host.hostCpuTimeInMs,
    engine: run?.host.engineCpuTimeInMs,
    bench: run?.benchProcessCpuTimeInMs,
    sandbox: run?.sandboxCpuTimeInMs,
  });
  const seconds = (value: number | undefined): string => `${((value ?? Number.NaN) / 1000).toFixed(1)} s`;
  const floor = result.engineFloor;
  console.log(
    JSON.stringify(
      {
        clusters,
        up: seconds(result.up.wallTimeInMs),
        plainScriptFloor: seconds(result.floor?.processWallTimeInMs),
        noOpUp: seconds(result.noOpUp?.wallTimeInMs),
        refresh: seconds(result.refresh?.wallTimeInMs),
        engineFloor: { up: seconds(floor?.up.wallTimeInMs), noOpUp: seconds(floor?.noOpUp.wallTimeInMs), refresh: seconds(floor?.refresh.wallTimeInMs) },
        stateBytesPerCluster: Math.round(result.checkpointBytes / clusters),
        engineFloorStateBytesPerCluster: Math.round((floor?.checkpointBytes ?? 0) / clusters),
        hostPeakMegabytes: { up: result.up.host.peakResidentBytes / 2 ** 20, refresh: (result.refresh?.host.peakResidentBytes ?? 0) / 2 ** 20 },
        cpuInMs: {
          up: cpuOf(result.up),
          noOpUp: cpuOf(result.noOpUp),
          refresh: cpuOf(result.refresh),
          floorUp: cpuOf(floor?.up),
          floorNoOpUp: cpuOf(floor?.noOpUp),
          floorRefresh: cpuOf(floor?.refresh),
        },
      },
      undefined,
      2,
    ),
  );
  if (directory === undefined) {
    return;
  }
  const hostDirectory = join(directory, "host");
  const cpuProfiles = readdirSync(hostDirectory)
    .filter((name) => name.endsWith(".cpuprofile"))
    .map((name) => join(hostDirectory, name))
    .filter((file) => statSync(file).size > 100_000);
  for (const file of cpuProfiles) {
    console.log(`\n# provider host ${file}`);
    console.log(topOfCpuProfile(file).join("\n"));
  }
  const engineProfiles = readdirSync(directory)
    .filter((name) => name.startsWith("engine.") && name.endsWith(".cpu"))
    .map((name) => join(directory, name))
    .filter((file) => statSync(file).size > 20_000);
  for (const file of engineProfiles) {
    console.log(`\n# engine ${file}`);
    console.log(
      execFileSync("go", ["tool", "pprof", "-top", "-nodecount=25", file], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
        .split("\n")
        .slice(0, 32)
        .join("\n"),
    );
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
