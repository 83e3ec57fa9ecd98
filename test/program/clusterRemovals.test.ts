/**
 * An update that would delete more than a small share of the clusters its stack holds (a
 * `clustersFile` cut short) is refused unless `allowClusterRemovals` is true for it, and a cluster
 * the stack holds under another name is moved by an alias, never deleted and created again. Under
 * `pulumi.runtime.setMocks`, whose engine answers `readStackResourceOutputs` with the resources
 * this test puts in the stack. What the real engine does with it: test/e2e/literalCli.test.ts.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import program from "../../index";
import { allowedRemovals, clustersRemovedBy } from "../../program/clusterRemovals";
import { aliasesFor, resourceNameFor } from "../../program/declareFleet";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import type { RegisteredResource } from "../fixtures/programMocks";
import { collectProgramWarnings, configureProgram, runProgram, setProgramMocks, settle } from "../fixtures/programMocks";
import { clusterResourceIdFor } from "../fixtures/documents";

const projectName = "aro-hcp-identity-status";
const stackName = "unit";
const readStackResourceOutputs = "pulumi:pulumi:readStackResourceOutputs";
const subscription = "00000000-0000-0000-0000-000000000000";

let stackResources: Record<string, { type: string; outputs: Record<string, unknown> }> = {};
const invokes: string[] = [];
const registered: RegisteredResource[] = [];
const warnings = collectProgramWarnings();

beforeAll(async () => {
  await setProgramMocks({
    registered,
    stack: stackName,
    invoke: (token, inputs) => {
      invokes.push(token);
      return token === readStackResourceOutputs ? { name: (inputs as { stackName: string }).stackName, outputs: stackResources } : undefined;
    },
  });
});

beforeEach(() => {
  stackResources = {};
  invokes.length = 0;
  registered.length = 0;
});

const cluster = (index: number, resourceGroup = `rg-${index}`): string =>
  clusterResourceIdFor({ subscriptionId: subscription, resourceGroupName: resourceGroup, clusterName: `cluster-${index}` });

/** A stack holding these clusters, each under its resource name (or `name`), its outputs recording its ID. */
function stackHolding(clusters: ReadonlyArray<{ id: string; name?: string }>): typeof stackResources {
  return Object.fromEntries(
    clusters.map(({ id, name }) => [
      `urn:pulumi:${stackName}::${projectName}::${resourceTypeToken}::${name ?? resourceNameFor(id)}`,
      { type: resourceTypeToken, outputs: { clusterResourceId: id, status: "{}" } },
    ]),
  );
}

const declaring = (ids: readonly string[]): string => JSON.stringify(ids.map((clusterResourceId) => ({ clusterResourceId })));

describe("an update that would delete many of the stack's clusters", () => {
  const held = Array.from({ length: 100 }, (_, index) => cluster(index));

  it("is refused when the list is cut short (1 of 100), naming the count, a few clusters and allowClusterRemovals, before anything is declared", async () => {
    stackResources = stackHolding(held.map((id) => ({ id })));
    configureProgram({ clusters: declaring(held.slice(0, 1)) });
    await expect(runProgram()).rejects.toThrow(
      new RegExp(
        `${projectName}:clusters declares 1 cluster, but stack organization/${projectName}/${stackName} holds 100: this update would delete 99 of them ` +
          `\\(${subscription}/rg-1/cluster-1, ${subscription}/rg-2/cluster-2, .* and 94 more\\).*more than the 10 an update may delete.*set ${projectName}:allowClusterRemovals to true`,
      ),
    );
    await settle();
    expect(registered).toEqual([]);
    expect(invokes).toEqual([readStackResourceOutputs]);
  });

  it("goes ahead at the share (10 of 100) and is refused past it (11), the stack read once each time", async () => {
    stackResources = stackHolding(held.map((id) => ({ id })));
    configureProgram({ clusters: declaring(held.slice(10)) });
    expect(Object.keys(await runProgram())).toHaveLength(90);
    expect(invokes).toEqual([readStackResourceOutputs]);
    configureProgram({ clusters: declaring(held.slice(11)) });
    await expect(runProgram()).rejects.toThrow("this update would delete 11 of them");
  });

  it("goes ahead with allowClusterRemovals true, saying what it deletes", async () => {
    stackResources = stackHolding(held.map((id) => ({ id })));
    configureProgram({ clusters: declaring(held.slice(0, 1)), allowClusterRemovals: "true" });
    expect(Object.keys(await runProgram())).toEqual(["cluster-0"]);
    expect(warnings).toEqual([
      expect.stringContaining(`${projectName}:allowClusterRemovals is true: this update deletes 99 of the 100 clusters the stack holds`),
    ]);
  });

  it("refuses a value other than true or false, naming the key", async () => {
    configureProgram({ clusters: declaring(held.slice(0, 1)), allowClusterRemovals: "yes" });
    await expect(program()).rejects.toThrow(`${projectName}:allowClusterRemovals`);
  });

  it("counts a cluster held under an older name as kept, not deleted: it moves by an alias", async () => {
    stackResources = stackHolding(held.map((id, index) => ({ id, name: `cluster-${index}` })));
    configureProgram({ clusters: declaring(held) });
    expect(Object.keys(await runProgram())).toHaveLength(100);
    expect(registered.map((resource) => resource.name)).toEqual(held.map(resourceNameFor));
  });
});

describe("the share", () => {
  it.each([
    [0, 5],
    [3, 5],
    [50, 5],
    [59, 5],
    [60, 6],
    [2000, 200],
  ])("of %i clusters is %i", (held, allowed) => {
    expect(allowedRemovals(held)).toBe(allowed);
  });

  it("counts by cluster ID as Go lowercases it, and by name only for outputs that record none", () => {
    const id = cluster(1);
    const removed = clustersRemovedBy({
      declared: [id.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/"), cluster(2)],
      held: [
        { name: "old-name", clusterResourceId: id },
        { name: resourceNameFor(cluster(2)), clusterResourceId: undefined },
        { name: "unreadable", clusterResourceId: undefined },
      ],
      declaredNames: new Set([resourceNameFor(id), resourceNameFor(cluster(2))]),
    });
    expect(removed.map((held) => held.name)).toEqual(["unreadable"]);
  });
});

describe("names and aliases", () => {
  it("names a cluster by its ID alone: another cluster of the same name never renames it", () => {
    const one = cluster(1, "rg-one");
    const sameNameElsewhere = clusterResourceIdFor({ subscriptionId: subscription, resourceGroupName: "rg-two", clusterName: "cluster-1" });
    expect(resourceNameFor(one)).toBe(`${subscription}/rg-one/cluster-1`);
    expect(resourceNameFor(sameNameElsewhere)).toBe(`${subscription}/rg-two/cluster-1`);
    expect(resourceNameFor(one.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/"))).toBe(resourceNameFor(one));
  });

  it("aliases a cluster to the name its own old resource has, by the cluster ID that resource recorded", () => {
    const one = cluster(1, "rg-one");
    const two = clusterResourceIdFor({ subscriptionId: subscription, resourceGroupName: "rg-two", clusterName: "cluster-1" });
    const aliases = aliasesFor(
      [one, two],
      [
        // The previous version named `one` after the cluster alone.
        { name: "cluster-1", clusterResourceId: one },
        { name: resourceNameFor(two), clusterResourceId: two },
      ],
    );
    // `two` is held under its own name already; no alias, and never `one`'s old name.
    expect([...aliases]).toEqual([[one, "cluster-1"]]);
  });

  it("never takes a removed cluster's old resource for a new cluster of the same name, nor a resource that records no cluster", () => {
    const removed = cluster(1, "rg-one");
    const added = clusterResourceIdFor({ subscriptionId: subscription, resourceGroupName: "rg-two", clusterName: "cluster-1" });
    expect(
      aliasesFor(
        [added],
        [
          { name: "cluster-1", clusterResourceId: removed },
          { name: "rg-two/cluster-1", clusterResourceId: undefined },
        ],
      ).size,
    ).toBe(0);
  });
});
