/**
 * A no-op `up` of clusters whose operators come from their cluster documents, through the real
 * engine. Each diff reads the cluster document (the authority), and the engine runs Diff inside its
 * step generation, one resource after another, unless PULUMI_PARALLEL_DIFF is set: a 2,000-cluster
 * shard's no-op `up` then waited out 2,000 Cosmos round trips in turn (57 s against 15 s,
 * docs/performance.md "Growth"). The project's doors set it (cli/engine.ts), so the reads of
 * diffs running at once go to Cosmos together; with it unset, as the engine's default, every read
 * goes alone, which is what this file reproduces first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import type { TestStack } from "./engineHelpers";
import { openTestStack } from "./engineHelpers";

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];

/** Cosmos reads and writes of the sandbox since its last reset. */
function cosmosCounters() {
  const { cosmos } = sandbox.statistics.snapshot();
  const writes = Object.values(cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0);
  return { reads: cosmos.documentReads, batches: cosmos.documentReadBatches, writes };
}

/** The stack's first `up`, then a no-op `up` whose Cosmos counters are returned with its changes. */
async function noOpUpAfterFirst(stack: TestStack) {
  await stack.stack.up({ color: "never" });
  sandbox.statistics.reset();
  const result = await stack.stack.up({ color: "never" });
  return { changes: result.summary.resourceChanges, counters: cosmosCounters() };
}

beforeAll(async () => {
  // Each Cosmos answer waits 300 ms, far longer than the engine takes to hand out the diffs of
  // twelve resources: diffs running at once are then reading at once whatever the machine's load,
  // and diffs one after another never are.
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/parallel-diff-${process.pid}`, cosmosLatencyInMs: 300 });
  fleet = seedFleet(sandbox, { clusters: 12, identitiesPerCluster: 1, subscriptions: 4 });
}, 120_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe("a no-op up whose diffs read the cluster documents", () => {
  // No dataPlaneOperators: each cluster's document names them, as upstream's do.
  const clusters = () => fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId }));

  it("with the engine's default, diffs one after another: every cluster document read goes to Cosmos alone", async () => {
    const serial = await openTestStack(sandbox, "serial-diff", clusters(), {}, (environment) => ({ ...environment, PULUMI_PARALLEL_DIFF: "false" }));
    const { changes, counters } = await noOpUpAfterFirst(serial);
    expect(changes).toEqual({ same: fleet.length + 1 });
    expect(counters.writes).toBe(0);
    expect(counters.reads, "one cluster document read per diff").toBeGreaterThanOrEqual(fleet.length);
    expect(counters.batches, `reads that went together (${JSON.stringify(counters)})`).toBe(0);
  }, 180_000);

  it("through the project's doors, diffs in the engine's slots: the reads of diffs running at once go together, and nothing is written", async () => {
    const parallel = await openTestStack(sandbox, "parallel-diff", clusters());
    const { changes, counters } = await noOpUpAfterFirst(parallel);
    expect(changes).toEqual({ same: fleet.length + 1 });
    expect(counters.writes).toBe(0);
    expect(counters.reads, "one cluster document read per diff").toBeGreaterThanOrEqual(fleet.length);
    expect(counters.batches, `reads that went together (${JSON.stringify(counters)})`).toBeGreaterThan(0);
  }, 180_000);
});
