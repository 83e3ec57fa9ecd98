/**
 * Issue 12: the engine's `--parallel` default that the project's doors give it (cli/engine.ts,
 * `defaultEngineParallelism`), observed where it matters: how many Cosmos reads a real `refresh`
 * has in flight at once. Every cluster is in a subscription of its own, so no two reads share a
 * partition and none are batched: each read is one request, and the sandbox's Cosmos server counts
 * them in flight. With a Cosmos latency far above the engine's own time per resource, the engine
 * fills every slot, so the count is the engine's parallelism.
 */
import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import type { TestStack } from "./engineHelpers";
import { engineModule, openTestStack } from "./engineHelpers";
import { ownedStatusOf, requireServiceProviderCluster } from "../fixtures/storedDocument";

const clusterCount = 40;
const cosmosLatencyInMs = 400;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let defaultStack: TestStack;
let callerStack: TestStack;

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/e2e-parallelism-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: clusterCount, identitiesPerCluster: 1, subscriptions: clusterCount });
  const clusters = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }));
  defaultStack = await openTestStack(sandbox, "parallel-default", clusters);
  // The caller's own PULUMI_PARALLEL, as a drift-check job would set it in its environment.
  callerStack = await openTestStack(sandbox, "parallel-caller", clusters, {}, (environment) => ({ ...environment, PULUMI_PARALLEL: "5" }));
  expect((await defaultStack.stack.up({ color: "never" })).summary.result).toBe("succeeded");
  expect((await callerStack.stack.up({ color: "never" })).summary.result).toBe("succeeded");
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
});

/** Every cluster's ServiceProviderCluster document, read back from Cosmos. */
async function storedDocuments(): Promise<string[]> {
  return Promise.all(
    fleet.map(async (cluster) =>
      JSON.stringify(await requireServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey)),
    ),
  );
}

/**
 * Runs a `refresh` at the test's Cosmos latency; returns the Cosmos requests it had in flight at
 * most and its document reads, after checking that it wrote nothing: every cluster's document
 * reads back as before, with its identity resolved.
 */
async function refreshInFlight(testStack: TestStack): Promise<{ maxInFlight: number; documentReads: number }> {
  const before = await storedDocuments();
  sandbox.faults.setLatency({ cosmos: cosmosLatencyInMs });
  sandbox.statistics.reset();
  try {
    const result = await testStack.stack.refresh({ color: "never" });
    expect(result.summary.result).toBe("succeeded");
  } finally {
    sandbox.faults.setLatency({ cosmos: 0 });
  }
  const cosmos = sandbox.statistics.snapshot().cosmos;
  expect(cosmos.documentWritesByMethod).toEqual({});
  const after = await storedDocuments();
  expect(after).toEqual(before);
  for (const text of after) {
    const status = ownedStatusOf(JSON.parse(text) as Parameters<typeof ownedStatusOf>[0]);
    expect(Object.values(status?.identities ?? {}).filter((identity) => identity.clientId !== undefined && identity.clientId !== "")).toHaveLength(1);
  }
  return { maxInFlight: cosmos.maxInFlight, documentReads: cosmos.documentReads };
}

describe("the engine's parallelism", () => {
  it("is 16 on a machine whose engine default (4 × cores) is less, and the engine's own default above that", () => {
    const { defaultEngineParallelism } = engineModule();
    expect(defaultEngineParallelism(1)).toBe(16);
    expect(defaultEngineParallelism(2)).toBe(16);
    expect(defaultEngineParallelism(4)).toBe(16);
    expect(defaultEngineParallelism(8)).toBe(32);
  });

  it("the environment of the project's doors carries it, unless PULUMI_PARALLEL is already set", () => {
    const { defaultEngineParallelism, engineEnvironment } = engineModule();
    const saved = process.env.PULUMI_PARALLEL;
    try {
      delete process.env.PULUMI_PARALLEL;
      expect(engineEnvironment().PULUMI_PARALLEL).toBe(String(defaultEngineParallelism(availableParallelism())));
      process.env.PULUMI_PARALLEL = "3";
      expect(engineEnvironment().PULUMI_PARALLEL).toBe("3");
    } finally {
      if (saved === undefined) delete process.env.PULUMI_PARALLEL;
      else process.env.PULUMI_PARALLEL = saved;
    }
  });

  it("a refresh through the project's engine reads that many clusters at once", async () => {
    // A PULUMI_PARALLEL of the developer's own is the engine's parallelism (the next test).
    const parallelism = Number(process.env.PULUMI_PARALLEL ?? engineModule().defaultEngineParallelism(availableParallelism()));
    const expected = Math.min(clusterCount, parallelism);
    const { maxInFlight, documentReads } = await refreshInFlight(defaultStack);
    expect(documentReads).toBe(clusterCount);
    expect(maxInFlight).toBe(expected);
  }, 300_000);

  it("the caller's own PULUMI_PARALLEL wins", async () => {
    const { maxInFlight, documentReads } = await refreshInFlight(callerStack);
    expect(documentReads).toBe(clusterCount);
    expect(maxInFlight).toBe(5);
  }, 300_000);
});
