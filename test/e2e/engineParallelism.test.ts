/**
 * Issue 12: the engine's `--parallel` default that the project's doors give it (cli/engine.ts,
 * `defaultEngineParallelism`, and `refreshParallelism` for a refresh, which `npm run pulumi --
 * refresh` passes), observed where it matters: how many clusters a real `refresh` reads
 * at once. Every cluster is in a subscription of its own, and Cosmos answers after 400 ms, far
 * above the engine's own time per resource, so every slot the engine has holds a cluster's refresh
 * step waiting on its read: the most steps open at once, counted from the engine's own event stream
 * (`onEvent` of the Automation API, `--event-log` of the CLI), is the engine's parallelism. The
 * reads that wait together go to Cosmos together (resources/cosmos/documentStore.ts), so the
 * sandbox sees fewer requests than reads. Through the project's engine (Automation API stacks
 * of cli/engine.ts) and through the literal `pulumi` in the project directory, which the wrapper's
 * default does not reach.
 */
import type { automation } from "@pulumi/pulumi";
import { mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import type { TestStack } from "./engineHelpers";
import { engineModule, initLiteralStack, removeLiteralStack, openTestStack, runLiteralPulumi } from "./engineHelpers";
import { ownedStatusOf, requireServiceProviderCluster } from "../fixtures/storedDocument";

const clusterCount = 40;
const cosmosLatencyInMs = 400;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let defaultStack: TestStack;
let callerStack: TestStack;
/** The literal CLI's stack: the project's Pulumi.yaml and index.ts, no wrapper of ours. */
const literalStackName = `parallel-literal-${process.pid}`;
const projectDirectory = resolve(__dirname, "..", "..");
let scratchDirectory: string;
let literalEnvironment: NodeJS.ProcessEnv;

function literalPulumi(environment: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  return runLiteralPulumi(projectDirectory, environment, literalStackName, ...args);
}

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/e2e-parallelism-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: clusterCount, identitiesPerCluster: 1, subscriptions: clusterCount });
  const clusters = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }));
  defaultStack = await openTestStack(sandbox, "parallel-default", clusters);
  // The caller's own PULUMI_PARALLEL, as a drift-check job would set it in its environment.
  callerStack = await openTestStack(sandbox, "parallel-caller", clusters, {}, (environment) => ({ ...environment, PULUMI_PARALLEL: "5" }));
  expect((await defaultStack.stack.up({ color: "never" })).summary.result).toBe("succeeded");
  expect((await callerStack.stack.up({ color: "never" })).summary.result).toBe("succeeded");

  // A user's shell (as test/e2e/literalCli.test.ts): the built CLI on PATH, their own backend.
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-parallel-literal-")));
  literalEnvironment = await initLiteralStack(sandbox, scratchDirectory, literalStackName, clusters);
  await literalPulumi(literalEnvironment, "up", "--yes", "--skip-preview");
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, literalStackName);
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
 * The most refresh steps of the hook's resources the engine had open at once: each step opens with
 * its resourcePreEvent and closes with its resOutputsEvent (or resOpFailedEvent).
 */
function maxOpenSteps(events: readonly automation.EngineEvent[]): number {
  const open = new Set<string>();
  let most = 0;
  for (const event of events) {
    const opened = event.resourcePreEvent?.metadata;
    const closed = event.resOutputsEvent?.metadata ?? event.resOpFailedEvent?.metadata;
    if (opened !== undefined && opened.op === "refresh" && opened.type.startsWith("pulumi-nodejs:dynamic/")) {
      open.add(opened.urn);
      most = Math.max(most, open.size);
    } else if (closed !== undefined) {
      open.delete(closed.urn);
    }
  }
  return most;
}

/**
 * Runs a `refresh` at the test's Cosmos latency; returns the most steps it had open and its
 * Cosmos reads, after checking that it wrote nothing: every cluster's document reads back as
 * before, with its identity resolved.
 */
async function refreshOpenSteps(
  refresh: () => Promise<readonly automation.EngineEvent[]>,
): Promise<{ maxOpenSteps: number; documentReads: number; requests: number }> {
  const before = await storedDocuments();
  sandbox.faults.setLatency({ cosmos: cosmosLatencyInMs });
  sandbox.statistics.reset();
  let events: readonly automation.EngineEvent[];
  try {
    events = await refresh();
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
  return { maxOpenSteps: maxOpenSteps(events), documentReads: cosmos.documentReads, requests: cosmos.requests };
}

/**
 * A `refresh` of a stack of the project's engine (Automation API), with its engine events, and the
 * `--parallel` the wrapper gives it (cli/pulumi.ts): `refreshParallelism` of the stack's environment.
 */
function stackRefresh(testStack: TestStack, environment: NodeJS.ProcessEnv = process.env): () => Promise<automation.EngineEvent[]> {
  return async () => {
    const events: automation.EngineEvent[] = [];
    const parallel = engineModule().refreshParallelism(environment);
    const result = await testStack.stack.refresh({ color: "never", onEvent: (event) => events.push(event), ...(parallel === undefined ? {} : { parallel }) });
    expect(result.summary.result).toBe("succeeded");
    return events;
  };
}

/** A `refresh` by the literal CLI, with the events of its `--event-log`. */
function literalRefresh(environment: NodeJS.ProcessEnv, ...flags: string[]): () => Promise<automation.EngineEvent[]> {
  return async () => {
    const eventLog = join(scratchDirectory, `events-${Date.now()}.jsonl`);
    expect(await literalPulumi(environment, "refresh", ...flags, "--yes", "--skip-preview", "--event-log", eventLog)).toMatch(/unchanged/);
    return readFileSync(eventLog, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as automation.EngineEvent);
  };
}

/** The reads went to Cosmos together: each document read once, in fewer requests than reads. */
function expectReadsTogether(result: { documentReads: number; requests: number }): void {
  expect(result.documentReads).toBe(clusterCount);
  expect(result.requests).toBeLessThan(clusterCount);
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

  it("is 32 for a refresh, or 4 × cores when more, unless the caller exported PULUMI_PARALLEL", () => {
    const { defaultRefreshParallelism, refreshParallelism } = engineModule();
    expect([1, 2, 4, 8, 16].map((cores) => defaultRefreshParallelism(cores))).toEqual([32, 32, 32, 32, 64]);
    expect(refreshParallelism({}, 2)).toBe(32);
    expect(refreshParallelism({ PULUMI_PARALLEL: "5" }, 2)).toBeUndefined();
  });

  it("a refresh through the project's engine reads that many clusters at once", async () => {
    // A PULUMI_PARALLEL of the developer's own is the engine's parallelism (the next test).
    const parallelism = Number(process.env.PULUMI_PARALLEL ?? engineModule().defaultRefreshParallelism(availableParallelism()));
    const result = await refreshOpenSteps(stackRefresh(defaultStack));
    expectReadsTogether(result);
    expect(result.maxOpenSteps).toBe(Math.min(clusterCount, parallelism));
  }, 300_000);

  it("the caller's own PULUMI_PARALLEL wins", async () => {
    const result = await refreshOpenSteps(stackRefresh(callerStack, { ...process.env, PULUMI_PARALLEL: "5" }));
    expectReadsTogether(result);
    expect(result.maxOpenSteps).toBe(5);
  }, 300_000);

  it("the literal pulumi CLI keeps the engine's own 4 × cores, and takes PULUMI_PARALLEL and --parallel as the example workflow sets them", async () => {
    const own = await refreshOpenSteps(literalRefresh(literalEnvironment));
    expectReadsTogether(own);
    expect(own.maxOpenSteps).toBe(Math.min(clusterCount, 4 * availableParallelism()));
    const exported = await refreshOpenSteps(literalRefresh({ ...literalEnvironment, PULUMI_PARALLEL: "16" }));
    expectReadsTogether(exported);
    expect(exported.maxOpenSteps).toBe(Math.min(clusterCount, 16));
    // examples/workflows/drift-correction.yml: PULUMI_PARALLEL 16 for the job, --parallel 32 on its refresh.
    const workflow = readFileSync(join(projectDirectory, "examples", "workflows", "drift-correction.yml"), "utf8");
    expect(workflow).toMatch(/PULUMI_PARALLEL: "16"/);
    expect(workflow).toMatch(/pulumi refresh --parallel 32 /);
    const flagged = await refreshOpenSteps(literalRefresh({ ...literalEnvironment, PULUMI_PARALLEL: "16" }, "--parallel", "32"));
    expectReadsTogether(flagged);
    expect(flagged.maxOpenSteps).toBe(Math.min(clusterCount, 32));
  }, 300_000);
});
