/**
 * The shard plan command: `aro-hcp-shard-plan <region clusters file> [--shards <count>]
 * [--max-shard-clusters <n>] --out <directory>` writes each shard's clusters file (`shard-<index>.json`,
 * the format of the stack's `clustersFile`) and the plan file (`shard-plan.json`) into the directory.
 * Without `--shards`, the count is the fewest whose largest shard holds at most `--max-shard-clusters`
 * (default {@link defaultMaxShardClusters}, the measured shard size); with it, a plan whose largest
 * shard holds more is written as asked, and the command says which count would fit. It reads and writes files only: moving
 * clusters between shards is the shards' next runs (docs/operations.md, "Sharding a large fleet").
 */
import { withCause } from "../core/errors";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ClusterEntry } from "./shardPlan";
import { defaultMaxShardClusters, fewestShardsWithin, parseRegionClusters, planShards } from "./shardPlan";
import type { ShardPlanFile } from "./shardPlanFile";
import { shardClustersFileName, shardPlanFileName, shardPlanFileOf } from "./shardPlanFile";

/** Options of {@link writeShardPlan}. */
export interface WriteShardPlanOptions {
  /** The region's clusters file (a JSON list, the format of the stack's `clustersFile`). */
  readonly clustersFile: string;
  /** Absent: the fewest shards whose largest holds at most {@link maxShardClusters}. */
  readonly shardCount?: number;
  /** The most clusters a shard should hold; default {@link defaultMaxShardClusters}. */
  readonly maxShardClusters?: number;
  /** Created when absent; the plan's files replace any of the same name. */
  readonly outputDirectory: string;
}

/** What {@link writeShardPlan} wrote and removed. */
export interface WrittenShardPlan {
  readonly planFile: string;
  readonly plan: ShardPlanFile;
  /** Shard files of an earlier plan with more shards (`shard-<index>.json`, index ≥ the shard count), removed. */
  readonly removed: readonly string[];
  /** The most clusters a shard should hold, as given or by default. */
  readonly maxShardClusters: number;
  /** The fewest shards whose largest holds at most {@link maxShardClusters}; the plan's count when none was given. */
  readonly fewestShardsWithin: number;
}

function readRegionClusters(file: string): ClusterEntry[] {
  if (!existsSync(file)) throw new Error(`clusters file ${file} does not exist`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw withCause(new Error(`clusters file ${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`), error);
  }
  const clusters = parseRegionClusters(parsed, file);
  // Every shard of an empty plan would be empty, and an empty shard's stack lets go of all it holds.
  if (clusters.length === 0)
    throw new Error(`clusters file ${file} lists no clusters: a plan of an empty region would have every shard let go of its clusters`);
  return clusters;
}

/**
 * Plans the region's clusters into shards and writes the plan:
 * 1. reads and checks the region's clusters file (a list, each cluster once, at least one);
 * 2. writes each shard's clusters file, the clusters as given, in the region file's order;
 * 3. removes `shard-<index>.json` files of an earlier plan with more shards;
 * 4. writes the plan file last, so a plan file names only shard files that were written.
 * @throws Error naming the file that is missing, not JSON, empty, or that the plan would overwrite;
 *   TypeError naming the cluster and field that is wrong; RangeError for a shard count below 1.
 */
export function writeShardPlan(options: WriteShardPlanOptions): WrittenShardPlan {
  const clusters = readRegionClusters(options.clustersFile);
  const maxShardClusters = options.maxShardClusters ?? defaultMaxShardClusters;
  const fewest = fewestShardsWithin(
    clusters.map((cluster) => cluster.clusterResourceId),
    maxShardClusters,
  );
  const plan = planShards(clusters, options.shardCount ?? fewest);
  const planFile = shardPlanFileOf(plan);
  const written = [...planFile.shards.map((shard) => shard.clustersFile), shardPlanFileName].map((name) => join(options.outputDirectory, name));
  if (written.some((file) => resolve(file) === resolve(options.clustersFile))) {
    throw new Error(`clusters file ${options.clustersFile} is where the plan writes a file of its own: give another --out directory`);
  }
  mkdirSync(options.outputDirectory, { recursive: true });
  plan.shards.forEach((shard, index) => {
    writeFileSync(join(options.outputDirectory, shardClustersFileName(index)), `${JSON.stringify(shard, null, 2)}\n`);
  });
  const removed = readdirSync(options.outputDirectory)
    .filter((name) => Number(/^shard-(\d+)\.json$/.exec(name)?.[1] ?? -1) >= plan.shardCount)
    .sort((left, right) => left.localeCompare(right, "en", { numeric: true }));
  for (const name of removed) rmSync(join(options.outputDirectory, name));
  const planFilePath = join(options.outputDirectory, shardPlanFileName);
  writeFileSync(planFilePath, `${JSON.stringify(planFile, null, 2)}\n`);
  return { planFile: planFilePath, plan: planFile, removed, maxShardClusters, fewestShardsWithin: fewest };
}

/** The command line: `<clusters file> --shards <count> --out <directory>`, or a usage error naming what is wrong. */
export function parseShardPlanArguments(argumentsList: readonly string[]): WriteShardPlanOptions | { readonly usageError: string } {
  const positional: string[] = [];
  const options = new Map<string, string>();
  for (let index = 0; index < argumentsList.length; index += 1) {
    const argument = argumentsList[index];
    if (!argument.startsWith("--")) {
      positional.push(argument);
      continue;
    }
    if (argument !== "--shards" && argument !== "--out" && argument !== "--max-shard-clusters") return { usageError: `unknown option ${argument}` };
    const value = argumentsList[index + 1];
    if (value === undefined || value.startsWith("--")) return { usageError: `${argument} needs a value` };
    options.set(argument, value);
    index += 1;
  }
  if (positional.length !== 1) return { usageError: `give one region clusters file, got ${positional.length}` };
  const shards = options.get("--shards");
  if (shards !== undefined && !/^[1-9]\d*$/.test(shards)) return { usageError: `--shards must be a whole number of at least 1, got ${shards}` };
  const maxShardClusters = options.get("--max-shard-clusters");
  if (maxShardClusters !== undefined && !/^[1-9]\d*$/.test(maxShardClusters)) {
    return { usageError: `--max-shard-clusters must be a whole number of at least 1, got ${maxShardClusters}` };
  }
  const outputDirectory = options.get("--out");
  if (outputDirectory === undefined) return { usageError: "--out <directory> is required (where the shard files and shard-plan.json go)" };
  return {
    clustersFile: positional[0],
    ...(shards === undefined ? {} : { shardCount: Number(shards) }),
    ...(maxShardClusters === undefined ? {} : { maxShardClusters: Number(maxShardClusters) }),
    outputDirectory,
  };
}

/** The command: writes the plan and prints what it wrote; exit code 1 on a bad input file, 2 on a usage error. */
export function shardPlanCommand(argumentsList: readonly string[], usageName = "aro-hcp-shard-plan"): void {
  const options = parseShardPlanArguments(argumentsList);
  if ("usageError" in options) {
    console.error(`${options.usageError}\nusage: ${usageName} <region clusters file> [--shards <count>] [--max-shard-clusters <n>] --out <directory>`);
    process.exitCode = 2;
    return;
  }
  try {
    const written = writeShardPlan(options);
    const { plan, planFile, removed, maxShardClusters, fewestShardsWithin } = written;
    const sizes = plan.shards.map((shard) => shard.clusters).join(", ");
    console.log(`Shard plan ${plan.planId}: ${plan.clusters} clusters in ${plan.shardCount} shards (${sizes}); wrote ${planFile} and its shard files`);
    if (options.shardCount === undefined) {
      console.log(
        `${plan.shardCount} shards: the fewest whose largest holds at most ${maxShardClusters} clusters. Pass --shards ${plan.shardCount} when you plan again: a new count moves most clusters (docs/operations.md, section 4)`,
      );
    } else {
      const over = plan.shards.filter((shard) => shard.clusters > maxShardClusters);
      if (over.length > 0) {
        console.error(
          `Warning: ${over.map((shard) => `shard ${shard.index} holds ${shard.clusters}`).join(", ")} clusters, more than the ${maxShardClusters} a shard should hold ` +
            `(its drift check and provider host grow with it: docs/performance.md, "Growth"); --shards ${fewestShardsWithin} is the fewest that fits`,
        );
      }
    }
    if (removed.length > 0) {
      console.log(`Removed ${removed.join(", ")}: shards of an earlier plan with more shards (retire their stacks: docs/operations.md, section 4)`);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
