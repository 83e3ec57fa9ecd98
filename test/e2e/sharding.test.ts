/**
 * The sharding example (examples/sharding/runShards.ts) against the sandbox through the real
 * engine: a fleet split across stacks that run concurrently, every cluster recorded once.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownedStatusOf, readServiceProviderCluster } from "../fixtures/storedDocument";
import { runShards, splitIntoShards } from "../../examples/sharding/runShards";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { engineModule } from "./engineHelpers";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";

const projectDirectory = resolve(__dirname, "..", "..");
let sandbox: Sandbox;
let fleet: FleetClusterDescription[];

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: join(projectDirectory, ".sandbox", `sharding-${process.pid}`) });
  fleet = seedFleet(sandbox, { clusters: 6, identitiesPerCluster: 2, subscriptions: 3 });
});

afterAll(async () => {
  await sandbox?.stop();
});

describe("runShards", () => {
  it("runs the shards concurrently and records every cluster exactly once; a second run changes nothing", async () => {
    const engine = engineModule();
    const command = await engine.engineCommand();
    mkdirSync(join(projectDirectory, ".pulumi"), { recursive: true });
    const root = mkdtempSync(join(projectDirectory, ".pulumi", "test-sharding-"));
    const paths = { state: join(root, "state"), home: join(root, "home"), workDirectory: join(root, "work") };
    const { config: connection, environment } = settingsForRunningSandbox(sandbox);
    const shards = splitIntoShards(
      fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators })),
      3,
      "shard",
    );
    const run = () =>
      runShards({
        shards,
        concurrency: 2,
        operation: "up",
        openShard: (shard) =>
          engine.openStack({
            engine: command,
            stackName: shard.stackName,
            paths,
            environment,
            config: { ...connection, clusters: JSON.stringify(shard.clusters) },
          }),
      });

    const first = await run();
    expect(first.map((outcome) => outcome.succeeded)).toEqual([true, true, true]);
    expect(first.reduce((sum, outcome) => sum + outcome.clusterCount, 0)).toBe(6);
    for (const cluster of fleet) {
      const document = await readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
      const identities = (document === undefined ? undefined : ownedStatusOf(document))?.identities ?? {};
      for (const identityId of Object.values(cluster.dataPlaneOperators)) {
        expect(identities[identityId.toLowerCase()]?.clientId).toBe(sandbox.identities.get(identityId)?.clientId);
      }
    }

    sandbox.statistics.reset();
    const second = await run();
    expect(
      second.every(
        (outcome) => outcome.succeeded && typeof outcome.summary === "object" && outcome.summary.create === undefined && outcome.summary.update === undefined,
      ),
    ).toBe(true);
    expect(sandbox.statistics.snapshot().arm.getRequests).toBe(0);
  });
});
