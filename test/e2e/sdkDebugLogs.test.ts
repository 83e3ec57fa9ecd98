/**
 * What the real engine receives of the SDK's debug lines per registration of this resource
 * (resources/sdkRegistrationDebugLogs.ts), read from the update's own events with `--debug`.
 * - Through the project's engine (Automation API `onEvent`), with inline programs that declare the
 *   fleet: without the opt-in, all three lines per cluster reach the engine (a constructor leaves
 *   the SDK alone); once the program calls `quietSdkRegistrationDebugLogs()`, none of ours do while
 *   the SDK's other debug lines (the stack's own registration) still do; ARO_HCP_SDK_DEBUG_LOGS=all
 *   brings them back. Cosmos is read back after the first `up`: the filter changes what is logged,
 *   not what is recorded.
 * - Through the literal `pulumi up --debug --event-log`, with a program of its own that opts in and
 *   is run by the Node.js language host (the package loaded by name, the SDK module it wraps the one
 *   the language host's runtime logs with), and the user's shell variable.
 */
import type { automation } from "@pulumi/pulumi";
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
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
const nativeRequire = createRequire(join(projectDirectory, "package.json"));
const literalStackName = `sdk-debug-literal-${process.pid}`;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let clusters: { clusterResourceId: string; dataPlaneOperators: Record<string, string> }[];
let scratchDirectory: string;
let literalProgramDirectory: string | undefined;

beforeAll(async () => {
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-sdk-debug-")));
  sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca") });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 1 });
  clusters = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }));
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, literalStackName, literalProgramDirectory);
  if (literalProgramDirectory !== undefined) {
    rmSync(literalProgramDirectory, { recursive: true, force: true });
  }
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

/** None of ours, while the SDK's other debug lines (the stack's own registration) still reach the engine. */
function expectNoneOfOurs(lines: readonly string[]): void {
  expect(lines.some((line) => line.includes("Registering resource: t=pulumi:pulumi:Stack"))).toBe(true);
  expect(ourRegistrationLines(lines)).toEqual([]);
}

/**
 * An inline program declaring the fleet with the compiled library, the one whose SDK module the
 * project's engine runs inline programs with. With `optIn`, it first calls the opt-in and keeps its
 * undo in `undo.current`, for the test to call once the update (and its last log line) is over.
 */
function fleetProgram(optIn: boolean, undo: { current?: () => void } = {}): automation.PulumiFn {
  return () => {
    const library = nativeRequire(join(projectDirectory, "dist", "resources", "index.js")) as typeof import("../../resources");
    if (optIn) {
      undo.current = library.quietSdkRegistrationDebugLogs();
    }
    for (const cluster of clusters) {
      new library.ServiceProviderClusterIdentityStatus(cluster.clusterResourceId.split("/").pop() ?? "", cluster);
    }
    return Promise.resolve({});
  };
}

describe("the SDK's registration debug lines reaching the engine", () => {
  it("through the project's engine: all of them without the opt-in; none of ours with it; all again with ARO_HCP_SDK_DEBUG_LOGS=all", async () => {
    const saved = process.env[variable];
    let testStack: TestStack | undefined;
    const undo: { current?: () => void } = {};
    try {
      delete process.env[variable];
      testStack = await openTestStack(sandbox, "sdk-debug", clusters);
      const up = async (program: automation.PulumiFn): Promise<string[]> => {
        if (testStack === undefined) throw new Error("no stack");
        testStack.stack.workspace.program = program;
        const events: automation.EngineEvent[] = [];
        const result = await testStack.stack.up({ color: "never", debug: true, onEvent: (event) => events.push(event) });
        expect(result.summary.result).toBe("succeeded");
        return debugLines(events);
      };

      expectThreeLinesPerCluster(await up(fleetProgram(false)));
      await expectRecorded();

      const quiet = await up(fleetProgram(true, undo));
      expectNoneOfOurs(quiet);

      // The inline program runs in this process: the variable is read at every line.
      process.env[variable] = "all";
      expectThreeLinesPerCluster(await up(fleetProgram(true, undo)));
    } finally {
      undo.current?.();
      if (saved === undefined) delete process.env[variable];
      else process.env[variable] = saved;
      if (testStack !== undefined) {
        rmSync(resolve(testStack.stateDirectory, ".."), { recursive: true, force: true });
      }
    }
  });

  it("through the literal CLI: a program that opts in, run by the language host, and the user's shell variable", async () => {
    // Inside the checkout, so the program finds @pulumi/pulumi and the package itself by name (self-reference).
    literalProgramDirectory = mkdtempSync(join(projectDirectory, ".pulumi", "test-sdk-debug-literal-"));
    writeFileSync(
      join(literalProgramDirectory, "Pulumi.yaml"),
      "name: sdk-debug-logs\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: index.js\n",
    );
    writeFileSync(
      join(literalProgramDirectory, "index.js"),
      [
        'const { readFileSync } = require("node:fs");',
        'const pulumi = require("@pulumi/pulumi");',
        'const { ServiceProviderClusterIdentityStatus, quietSdkRegistrationDebugLogs } = require("aro-hcp-identity-status");',
        "quietSdkRegistrationDebugLogs();",
        'const clusters = JSON.parse(readFileSync(new pulumi.Config("aro-hcp-identity-status").require("clustersFile"), "utf8"));',
        'for (const cluster of clusters) new ServiceProviderClusterIdentityStatus(cluster.clusterResourceId.split("/").pop(), cluster);',
        "",
      ].join("\n"),
    );
    const programDirectory = literalProgramDirectory;
    const literalEnvironment = await initLiteralStack(sandbox, scratchDirectory, literalStackName, clusters, programDirectory);
    delete literalEnvironment[variable];
    const upWithEvents = async (environment: NodeJS.ProcessEnv, name: string): Promise<string[]> => {
      const eventLog = join(scratchDirectory, `${name}.jsonl`);
      await runLiteralPulumi(programDirectory, environment, literalStackName, "up", "--yes", "--skip-preview", "--debug", "--event-log", eventLog);
      return debugLines(
        readFileSync(eventLog, "utf8")
          .split("\n")
          .filter((line) => line.trim() !== "")
          .map((line) => JSON.parse(line) as automation.EngineEvent),
      );
    };
    expectNoneOfOurs(await upWithEvents(literalEnvironment, "quiet"));
    expectThreeLinesPerCluster(await upWithEvents({ ...literalEnvironment, [variable]: "all" }, "all"));
  });
});
