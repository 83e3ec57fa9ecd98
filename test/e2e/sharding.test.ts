/**
 * The sharding example (examples/sharding/runShards.ts) against the sandbox through the real
 * engine: a fleet split across stacks that run concurrently, every cluster recorded once.
 */
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownedStatusOf, readServiceProviderCluster } from "../fixtures/storedDocument";
import { runShards, shardConfig, splitIntoShards } from "../../examples/sharding/runShards";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { e2eScratchDirectory, engineModule } from "./engineHelpers";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";

const projectDirectory = resolve(__dirname, "..", "..");
let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
/** The engine's directories, shared by every run of the file. */
let paths: { state: string; home: string; workDirectory: string };

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: join(projectDirectory, ".sandbox", `sharding-${process.pid}`) });
  fleet = seedFleet(sandbox, { clusters: 6, identitiesPerCluster: 2, subscriptions: 3 });
});

afterAll(async () => {
  await sandbox?.stop();
});

/** Runs every shard of a split of the fleet into `count` stacks, `concurrency` at a time, with the config runShards.ts gives each. */
async function runSplit(count: number, concurrency: number): Promise<Awaited<ReturnType<typeof runShards>>> {
  const engine = engineModule();
  const command = await engine.engineCommand();
  const { config: connection, environment } = settingsForRunningSandbox(sandbox);
  const declared = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }));
  return runShards({
    shards: splitIntoShards(declared, count, "shard"),
    concurrency,
    operation: "up",
    openShard: (shard) =>
      engine.openStack({ engine: command, stackName: shard.stackName, paths, environment, config: { ...connection, ...shardConfig(shard, declared.length) } }),
  });
}

async function expectEveryClusterRecorded(): Promise<void> {
  for (const cluster of fleet) {
    const document = await readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
    const identities = (document === undefined ? undefined : ownedStatusOf(document))?.identities ?? {};
    for (const identityId of Object.values(cluster.dataPlaneOperators)) {
      expect(identities[identityId.toLowerCase()]?.clientId, `${cluster.clusterResourceId}: ${identityId}`).toBe(sandbox.identities.get(identityId)?.clientId);
    }
  }
}

describe("runShards", () => {
  it("runs the shards concurrently and records every cluster exactly once; a second run changes nothing", async () => {
    const root = e2eScratchDirectory("sharding");
    paths = { state: join(root, "state"), home: join(root, "home"), workDirectory: join(root, "work") };
    const run = () => runSplit(3, 2);

    const first = await run();
    expect(first.map((outcome) => outcome.succeeded)).toEqual([true, true, true]);
    expect(first.reduce((sum, outcome) => sum + outcome.clusterCount, 0)).toBe(6);
    await expectEveryClusterRecorded();

    sandbox.statistics.reset();
    const second = await run();
    expect(
      second.every(
        (outcome) => outcome.succeeded && typeof outcome.summary === "object" && outcome.summary.create === undefined && outcome.summary.update === undefined,
      ),
    ).toBe(true);
    expect(sandbox.statistics.snapshot().arm.getRequests).toBe(0);
  });

  it("keeps every cluster's IDs when a new shard count moves clusters: neither the stack a cluster joins nor the one it leaves writes", async () => {
    // From 3 stacks to 4, one at a time in order: a cluster moving to an earlier stack is created
    // there (the status current: nothing written) before its old stack deletes it (a delete writes nothing).
    const split = (count: number): Map<string, string> =>
      new Map(
        splitIntoShards(
          fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId })),
          count,
          "shard",
        ).flatMap((shard) => shard.clusters.map((cluster) => [cluster.clusterResourceId, shard.stackName] as [string, string])),
      );
    const before = split(3);
    const after = split(4);
    expect(
      fleet.some((cluster) => (after.get(cluster.clusterResourceId) ?? "") < (before.get(cluster.clusterResourceId) ?? "")),
      "a cluster moving to an earlier stack",
    ).toBe(true);
    const moved = await runSplit(4, 1);
    expect(moved.map((outcome) => outcome.succeeded)).toEqual([true, true, true, true]);
    await expectEveryClusterRecorded();
  });
});
