/**
 * What the real engine receives of the SDK's debug lines per registration of this resource
 * (resources/sdkRegistrationDebugLogs.ts), read from the update's own events with `--debug`:
 * through the project's engine (Automation API `onEvent`) and through the literal `pulumi up
 * --debug --event-log` in the project directory with the user's shell variable. By default the
 * three lines per cluster never reach the engine while the SDK's other debug lines (the stack's own
 * registration) do; ARO_HCP_SDK_DEBUG_LOGS=all brings them back. Cosmos is read back after the
 * first `up`: the filter changes what is logged, not what is recorded.
 */
import type { automation } from "@pulumi/pulumi";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { ownedStatusOf, requireServiceProviderCluster } from "../fixtures/storedDocument";
import type { TestStack } from "./engineHelpers";
import { expectRecordsDeclaredIdentities, initLiteralStack, removeLiteralStack, openTestStack, runLiteralPulumi } from "./engineHelpers";

const typeToken = "pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus";
const variable = "ARO_HCP_SDK_DEBUG_LOGS";
const projectDirectory = resolve(__dirname, "..", "..");
const literalStackName = `sdk-debug-literal-${process.pid}`;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let clusters: { clusterResourceId: string; dataPlaneOperators: Record<string, string> }[];
let scratchDirectory: string;
let literalEnvironment: NodeJS.ProcessEnv;

beforeAll(async () => {
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-sdk-debug-")));
  sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca") });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 1 });
  clusters = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }));
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, literalStackName);
});

/** The debug-severity diagnostics of an update's events (the SDK's type leaves "debug" out; the engine sends it). */
function debugLines(events: readonly automation.EngineEvent[]): string[] {
  return events.flatMap((event) => ((event.diagnosticEvent?.severity as string | undefined) === "debug" ? [event.diagnosticEvent?.message ?? ""] : []));
}

/** The SDK's registration lines about this resource type among `lines`. */
function ourRegistrationLines(lines: readonly string[]): string[] {
  return lines.filter(
    (line) =>
      (line.includes("Registering resource: ") || line.includes("RegisterResource RPC ")) &&
      (line.includes(`t=${typeToken},`) || line.includes(`[${typeToken}]`)),
  );
}

/** Each cluster's ServiceProviderCluster document records its declared identity. */
async function expectRecorded(): Promise<void> {
  for (const cluster of fleet) {
    const stored = await requireServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
    expectRecordsDeclaredIdentities(sandbox, ownedStatusOf(stored), cluster.dataPlaneOperators);
  }
}

/** Three lines per cluster: registering, prepared, finished without error. */
function expectThreeLinesPerCluster(lines: readonly string[]): void {
  const ours = ourRegistrationLines(lines);
  expect(ours).toHaveLength(3 * clusters.length);
  expect(ours.filter((line) => line.includes("Registering resource: "))).toHaveLength(clusters.length);
  expect(ours.filter((line) => line.includes("RegisterResource RPC prepared: "))).toHaveLength(clusters.length);
  expect(ours.filter((line) => /RegisterResource RPC finished: .*; err: null,/.test(line))).toHaveLength(clusters.length);
}

describe("the SDK's registration debug lines reaching the engine", () => {
  it("through the project's engine: none of ours by default, the stack's still; all of them with ARO_HCP_SDK_DEBUG_LOGS=all", async () => {
    const saved = process.env[variable];
    let testStack: TestStack | undefined;
    try {
      delete process.env[variable];
      testStack = await openTestStack(sandbox, "sdk-debug", clusters);
      const quiet: automation.EngineEvent[] = [];
      const first = await testStack.stack.up({ color: "never", debug: true, onEvent: (event) => quiet.push(event) });
      expect(first.summary.result).toBe("succeeded");
      expect(first.summary.resourceChanges?.create).toBe(clusters.length + 1);
      await expectRecorded();
      const quietLines = debugLines(quiet);
      // Debug lines do reach the engine's events: the SDK's own for the stack resource.
      expect(quietLines.some((line) => line.includes("Registering resource: t=pulumi:pulumi:Stack"))).toBe(true);
      expect(ourRegistrationLines(quietLines)).toEqual([]);

      // The inline program runs in this process: the variable is read at every line.
      process.env[variable] = "all";
      const all: automation.EngineEvent[] = [];
      const second = await testStack.stack.up({ color: "never", debug: true, onEvent: (event) => all.push(event) });
      expect(second.summary.result).toBe("succeeded");
      expectThreeLinesPerCluster(debugLines(all));
    } finally {
      if (saved === undefined) delete process.env[variable];
      else process.env[variable] = saved;
      if (testStack !== undefined) {
        rmSync(resolve(testStack.stateDirectory, ".."), { recursive: true, force: true });
      }
    }
  });

  it("through the literal CLI: the user's shell variable reaches the program the language host runs", async () => {
    literalEnvironment = await initLiteralStack(sandbox, scratchDirectory, literalStackName, clusters);
    delete literalEnvironment[variable];
    const pulumi = (environment: NodeJS.ProcessEnv, ...args: string[]): Promise<string> =>
      runLiteralPulumi(projectDirectory, environment, literalStackName, ...args);
    const upWithEvents = async (environment: NodeJS.ProcessEnv, name: string): Promise<string[]> => {
      const eventLog = join(scratchDirectory, `${name}.jsonl`);
      await pulumi(environment, "up", "--yes", "--skip-preview", "--debug", "--event-log", eventLog);
      return debugLines(
        readFileSync(eventLog, "utf8")
          .split("\n")
          .filter((line) => line.trim() !== "")
          .map((line) => JSON.parse(line) as automation.EngineEvent),
      );
    };
    const quietLines = await upWithEvents(literalEnvironment, "quiet");
    expect(quietLines.some((line) => line.includes("Registering resource: t=pulumi:pulumi:Stack"))).toBe(true);
    expect(ourRegistrationLines(quietLines)).toEqual([]);
    expectThreeLinesPerCluster(await upWithEvents({ ...literalEnvironment, [variable]: "all" }, "all"));
  });
});
