/**
 * An update that declares no cluster over a stack that still holds clusters (issue 28, item 1):
 * the engine would delete every one of them and clear its status, so the program refuses unless
 * `allowEmptyFleet` is true. Under `pulumi.runtime.setMocks`: the mock answers the engine's
 * `readStackResourceOutputs` invoke with the resources this test puts in the stack. What the real
 * engine does with it: test/e2e/literalCli.test.ts.
 */
import type { RegisteredResource } from "../fixtures/programMocks";
import { collectProgramWarnings, configureProgram, runProgram, setProgramMocks, settle } from "../fixtures/programMocks";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import program from "../../index";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { clusterResourceIdFor } from "../fixtures/documents";

const projectName = "aro-hcp-identity-status";
const stackName = "unit";
const readStackResourceOutputs = "pulumi:pulumi:readStackResourceOutputs";

/** The resources the mock engine says the stack holds, by URN. */
let stackResources: Record<string, { type: string; outputs: Record<string, unknown> }> = {};
/** What the mock engine answers instead of the resources, when set. */
let stackReadFailure: Error | undefined;
const invokes: Array<{ token: string; inputs: Record<string, unknown> }> = [];
const registered: RegisteredResource[] = [];

beforeAll(async () => {
  await setProgramMocks({
    registered,
    stack: stackName,
    invoke: (token, inputs) => {
      invokes.push({ token, inputs });
      if (token !== readStackResourceOutputs) {
        return undefined;
      }
      if (stackReadFailure !== undefined) {
        throw stackReadFailure;
      }
      return { name: (inputs as { stackName: string }).stackName, outputs: stackResources };
    },
  });
});

const warnings = collectProgramWarnings();
beforeEach(() => {
  stackResources = {};
  stackReadFailure = undefined;
  invokes.length = 0;
  registered.length = 0;
});

const urnOf = (type: string, name: string): string => `urn:pulumi:${stackName}::${projectName}::${type}::${name}`;

/** A stack as the engine records it after an `up` of these clusters: the stack, its providers, one resource per cluster. */
function stackHolding(...clusterNames: string[]): typeof stackResources {
  const resources: typeof stackResources = {
    [urnOf("pulumi:pulumi:Stack", `${projectName}-${stackName}`)]: { type: "pulumi:pulumi:Stack", outputs: { clusters: {} } },
    [urnOf("pulumi:providers:pulumi-nodejs", "default")]: { type: "pulumi:providers:pulumi-nodejs", outputs: {} },
    [urnOf("pulumi:providers:pulumi", "default")]: { type: "pulumi:providers:pulumi", outputs: {} },
  };
  for (const name of clusterNames) {
    resources[urnOf(resourceTypeToken, name)] = { type: resourceTypeToken, outputs: { status: "{}" } };
  }
  return resources;
}

const clusterA = clusterResourceIdFor({ subscriptionId: "00000000-0000-0000-0000-000000000000", resourceGroupName: "rg-a", clusterName: "cluster-a" });

describe("an update that declares no cluster", () => {
  it("is refused over a stack that holds clusters, naming allowEmptyFleet, before anything is declared", async () => {
    stackResources = stackHolding("cluster-a", "cluster-b");
    configureProgram({ clusters: "[]" });
    await expect(runProgram()).rejects.toThrow(
      new RegExp(
        `${projectName}:clusters declares no cluster, but stack organization/${projectName}/${stackName} holds 2 of them \\(cluster-a, cluster-b\\).*` +
          `set ${projectName}:allowEmptyFleet to true`,
      ),
    );
    await settle();
    expect(registered).toEqual([]);
    // The program asked the engine about its own stack, by its full name.
    expect(invokes).toEqual([{ token: readStackResourceOutputs, inputs: { stackName: `organization/${projectName}/${stackName}` } }]);
  });

  it("is refused when clustersFile names a file with an empty list, naming the file", async () => {
    const directory = mkdtempSync(join(tmpdir(), "empty-fleet-"));
    const file = join(directory, "clusters.json");
    writeFileSync(file, "[]\n");
    stackResources = stackHolding("cluster-a");
    configureProgram({ clustersFile: file, clusters: JSON.stringify([{ clusterResourceId: clusterA }]) });
    try {
      await expect(runProgram()).rejects.toThrow(
        `${projectName}:clustersFile (${file}) declares no cluster, but stack organization/${projectName}/${stackName} holds 1 of them (cluster-a)`,
      );
      await settle();
      expect(registered).toEqual([]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("names the first clusters and counts the rest on a large stack", async () => {
    stackResources = stackHolding(...Array.from({ length: 12 }, (_, index) => `cluster-${index}`));
    configureProgram({ clusters: "[]" });
    await expect(runProgram()).rejects.toThrow("holds 12 of them (cluster-0, cluster-1, cluster-2, cluster-3, cluster-4 and 7 more)");
  });

  it("keeps the warning on a stack that holds no cluster (a new stack, or one whose clusters were deleted)", async () => {
    stackResources = stackHolding();
    configureProgram({ clusters: "[]" });
    expect(await runProgram()).toEqual({});
    expect(warnings).toEqual([
      `warning: [runtime] no clusters declared: set ${projectName}:clustersFile (a JSON list) or ${projectName}:clusters; this update records nothing`,
    ]);
    stackResources = {};
    pulumi.runtime.setAllConfig({});
    expect(await runProgram()).toEqual({});
    expect(registered).toEqual([]);
  });

  it("goes ahead with allowEmptyFleet true, saying it deletes the stack's clusters, without reading the stack", async () => {
    stackResources = stackHolding("cluster-a");
    configureProgram({ clusters: "[]", allowEmptyFleet: "true" });
    expect(await runProgram()).toEqual({});
    expect(invokes).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`no clusters declared and ${projectName}:allowEmptyFleet is true: this update deletes every cluster the stack holds`);
  });

  it("says how to go ahead when the stack's state cannot be read", async () => {
    // As the engine's answer reaches the SDK: a gRPC error whose `details` is the message.
    stackReadFailure = Object.assign(new Error("invoke failed"), { details: "failed to decrypt the checkpoint" });
    configureProgram({ clusters: "[]" });
    await expect(runProgram()).rejects.toThrow(
      new RegExp(
        `could not read the state of stack organization/${projectName}/${stackName}.*failed to decrypt the checkpoint.*${projectName}:allowEmptyFleet`,
      ),
    );
  });
});

describe("allowEmptyFleet", () => {
  it("is not read for a declared fleet, whose update reads the stack's state once, for program/clusterRemovals.ts", async () => {
    stackResources = stackHolding("cluster-a");
    configureProgram({ clusters: JSON.stringify([{ clusterResourceId: clusterA }]), allowEmptyFleet: "true" });
    expect(Object.keys(await runProgram())).toEqual(["cluster-a"]);
    expect(invokes.map((invoke) => invoke.token)).toEqual([readStackResourceOutputs]);
    expect(warnings).toEqual([]);
  });

  it("refuses a value other than true or false, naming the key, whatever the fleet", async () => {
    for (const clusters of ["[]", JSON.stringify([{ clusterResourceId: clusterA }])]) {
      configureProgram({ clusters, allowEmptyFleet: "yes" });
      await expect(program()).rejects.toThrow(`${projectName}:allowEmptyFleet`);
    }
    await settle();
    expect(registered).toEqual([]);
  });
});
