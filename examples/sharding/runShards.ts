/**
 * Shards a large fleet across stacks and runs them concurrently with the Automation API.
 *
 * A cluster's shard is a hash of its ARM ID modulo the shard count, so adding or removing clusters
 * never moves the others between stacks. Changing the shard count does move clusters: each moved
 * cluster is created in its new stack (which writes nothing while its status is current) and
 * deleted from its old one (a delete writes nothing), in whichever order the stacks run. It moves most of
 * a shard's clusters, more than an update may delete without saying so: pass
 * `--allow-cluster-removals` to that one run (docs/operations.md, "Sharding").
 *
 * Usage (from the project root, after `npm run build`):
 *   npx ts-node examples/sharding/runShards.ts clusters.json --shards 8 --concurrency 2 [--operation up|refresh|preview|destroy] [--allow-cluster-removals]
 * clusters.json is the `clusters` list of the program. Stack config other than `clusters` comes
 * from ARO_HCP_* / COSMOS_KEY / AZURE_* in the environment (resources/core/settings.ts).
 */
import { readFileSync } from "node:fs";
import type * as automation from "@pulumi/pulumi/automation";
import { createConcurrencyLimiter } from "../../resources/sync/concurrencyLimiter";
import { shardIndexOf } from "../../resources/shards/shardPlan";
import type { ClusterDeclaration } from "../../program/fleet";
import { parseClusterList } from "../../program/fleet";

/** One stack's share of the fleet. */
export interface Shard {
  readonly stackName: string;
  readonly clusters: readonly ClusterDeclaration[];
}

/** What running one shard gave. */
export interface ShardOutcome {
  readonly stackName: string;
  readonly clusterCount: number;
  readonly succeeded: boolean;
  /** Resource changes by kind (`create`, `update`, `same`…), or the error message. */
  readonly summary: Readonly<Record<string, number>> | string;
}

/** The operations a shard run can do. */
export type ShardOperation = "up" | "refresh" | "preview" | "destroy";

/** Splits clusters into `shardCount` stacks named `<stackPrefix>-<index>`; empty shards are kept. */
export function splitIntoShards(clusters: readonly ClusterDeclaration[], shardCount: number, stackPrefix: string): Shard[] {
  if (!Number.isInteger(shardCount) || shardCount < 1) {
    throw new RangeError(`shard count must be a whole number of at least 1, got ${shardCount}`);
  }
  const buckets: ClusterDeclaration[][] = Array.from({ length: shardCount }, () => []);
  // The shard plan's rule (resources/shards/shardPlan.ts), so a stack split here and a plan's shard hold the same clusters.
  for (const cluster of clusters) buckets[shardIndexOf(cluster.clusterResourceId, shardCount)]?.push(cluster);
  return buckets.map((bucket, index) => ({ stackName: `${stackPrefix}-${index}`, clusters: bucket }));
}

/**
 * The program's config of one shard: its `clusters` list, and `allowEmptyFleet` (program/emptyFleet.ts)
 * only when the shard's share of a non-empty fleet is empty: its clusters left the fleet (or moved to
 * another shard), and its `up` must be able to delete them. An empty fleet file leaves it false, so
 * every shard that still holds clusters refuses that run instead of deleting them all.
 * `allowClusterRemovals` (program/clusterRemovals.ts) is set only when the caller asks, for the run
 * after a change of the shard count.
 */
export function shardConfig(shard: Shard, fleetSize: number, allowClusterRemovals = false): Record<string, string> {
  return {
    clusters: JSON.stringify(shard.clusters),
    allowEmptyFleet: String(shard.clusters.length === 0 && fleetSize > 0),
    ...(allowClusterRemovals ? { allowClusterRemovals: "true" } : {}),
  };
}

/** Options of {@link runShards}. */
export interface RunShardsOptions {
  readonly shards: readonly Shard[];
  /** At most this many stacks run at once (each runs its own engine and provider host). */
  readonly concurrency: number;
  readonly operation: ShardOperation;
  /** Opens (creates or selects) the stack of a shard with its `clusters` config set. */
  readonly openShard: (shard: Shard) => Promise<automation.Stack>;
  readonly onOutput?: (stackName: string, text: string) => void;
  /** The `--parallel` of a `refresh` (cli/engine.ts `refreshParallelism`); undefined keeps the engine's. */
  readonly refreshParallel?: number;
}

/** Runs every shard, at most `concurrency` at a time; one shard failing does not stop the others. */
export async function runShards(options: RunShardsOptions): Promise<ShardOutcome[]> {
  const limiter = createConcurrencyLimiter(options.concurrency);
  return Promise.all(
    options.shards.map((shard) =>
      limiter.run(async (): Promise<ShardOutcome> => {
        const onOutput = (text: string): void => options.onOutput?.(shard.stackName, text);
        try {
          const stack = await options.openShard(shard);
          let summary: Record<string, number>;
          if (options.operation === "preview") {
            summary = { ...(await stack.preview({ onOutput })).changeSummary };
          } else {
            const parallel = options.operation === "refresh" && options.refreshParallel !== undefined ? { parallel: options.refreshParallel } : {};
            const result = await stack[options.operation]({ onOutput, ...parallel });
            summary = { ...result.summary.resourceChanges };
          }
          return { stackName: shard.stackName, clusterCount: shard.clusters.length, succeeded: true, summary };
        } catch (error) {
          return {
            stackName: shard.stackName,
            clusterCount: shard.clusters.length,
            succeeded: false,
            summary: error instanceof Error ? error.message : String(error),
          };
        }
      }),
    ),
  );
}

async function main(argv: readonly string[]): Promise<number> {
  const option = (name: string, fallback: string): string => {
    const index = argv.indexOf(`--${name}`);
    return index >= 0 && argv[index + 1] !== undefined ? String(argv[index + 1]) : fallback;
  };
  const file = argv.find((argument) => !argument.startsWith("--") && !argv[argv.indexOf(argument) - 1]?.startsWith("--"));
  if (file === undefined) {
    throw new Error(
      "usage: runShards.ts <clusters.json> [--shards N] [--concurrency N] [--operation up|refresh|preview|destroy] [--prefix NAME] [--allow-cluster-removals]",
    );
  }
  const clusters = parseClusterList(JSON.parse(readFileSync(file, "utf8")) as unknown, file);
  const shards = splitIntoShards(clusters, Number(option("shards", "4")), option("prefix", "fleet"));
  // Loaded here so that importing this module for its functions needs no built engine.
  const engine = await import("../../cli/engine");
  const command = await engine.engineCommand();
  const outcomes = await runShards({
    shards,
    concurrency: Number(option("concurrency", "2")),
    operation: option("operation", "up") as ShardOperation,
    refreshParallel: engine.refreshParallelism(),
    openShard: (shard) =>
      engine.openStack({ engine: command, stackName: shard.stackName, config: shardConfig(shard, clusters.length, argv.includes("--allow-cluster-removals")) }),
    onOutput: (stackName, text) =>
      process.stdout.write(
        text
          .split("\n")
          .map((line) => (line.length > 0 ? `[${stackName}] ${line}` : line))
          .join("\n"),
      ),
  });
  for (const outcome of outcomes) {
    console.log(`${outcome.stackName}: ${outcome.clusterCount} clusters, ${outcome.succeeded ? "ok" : "FAILED"}: ${JSON.stringify(outcome.summary)}`);
  }
  return outcomes.every((outcome) => outcome.succeeded) ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(2);
    },
  );
}
