/**
 * The hook through the real Pulumi engine (CLI built from Go modules, our plugin shim, the
 * dynamic-provider host in its own process) against the sandbox, checking Cosmos directly with
 * @azure/cosmos after each step. The steps build on each other, in order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import type { ClusterConfig, TestStack } from "./engineHelpers";
import { expectRecordsDeclaredIdentities, openTestStack, outputCollector, readTree } from "./engineHelpers";
import type { ServiceProviderClusterJson } from "../fixtures/storedDocument";
import { asServiceProviderClusterJson, foreignFieldsOf, ownedStatusOf, requireServiceProviderCluster } from "../fixtures/storedDocument";
import type { DataPlaneOperatorsManagedIdentities } from "../../resources/core/serviceProviderClusterDocument";
import { parseStoredOutputs } from "../../resources/provider/providerOutputs";
import type { ClusterSummary } from "../../program/declareFleet";
import { resourceNameFor } from "../../program/declareFleet";
import { failureCollector } from "../../cli/failureSummary";
import { groupFailures } from "../../resources/core/clusterMessage";

type Document = ServiceProviderClusterJson;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let clusters: ClusterConfig[];
let testStack: TestStack;
const seeded = new Map<string, Document>();

async function readDocument(cluster: FleetClusterDescription): Promise<Document> {
  return requireServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
}

function ownedStatus(document: Document): DataPlaneOperatorsManagedIdentities | undefined {
  return ownedStatusOf(document);
}

function seededDocument(cluster: FleetClusterDescription): Document {
  const document = seeded.get(cluster.serviceProviderClusterDocumentId);
  if (document === undefined) throw new Error(`document ${cluster.serviceProviderClusterDocumentId} was not seeded`);
  return document;
}

/** Everything but the subtree this hook owns, its bookkeeping and Cosmos system fields. */
function foreignFields(document: Document): Document {
  return foreignFieldsOf(document);
}

function expectEntryMatchesArm(status: DataPlaneOperatorsManagedIdentities | undefined, identityId: string): void {
  const entry = status?.identities?.[identityId.toLowerCase()];
  const identity = sandbox.identities.get(identityId);
  expect(identity, identityId).toBeDefined();
  expect(entry).toEqual({ resourceID: identityId, clientId: identity?.clientId, principalId: identity?.principalId });
}

function setRecheckInThePast(cluster: FleetClusterDescription): void {
  sandbox.documents.patch(
    cluster.partitionKey,
    cluster.serviceProviderClusterDocumentId,
    "/properties/status/dataPlaneOperatorsManagedIdentities/earliestRecheckTime",
    "2020-01-01T00:00:00Z",
  );
}

/** The `drift` output of a cluster's resource, read from the exported state. */
async function resourceDrift(cluster: FleetClusterDescription): Promise<string[]> {
  const deployment = await testStack.stack.exportStack();
  const resources = (deployment.deployment as { resources: Array<{ outputs?: Record<string, unknown> }> }).resources;
  const resource = resources.find((candidate) => candidate.outputs?.clusterResourceId === cluster.clusterResourceId);
  if (resource === undefined) {
    return [];
  }
  const outputs = parseStoredOutputs(resource.outputs);
  if (!outputs.ok) {
    throw new Error(`outputs in state are not this version's: ${JSON.stringify(outputs.failures)}`);
  }
  return [...outputs.value.drift];
}

/** A cluster's entry of the `clusters` stack output, keyed by cluster name with the ARM ID inside. */
async function clusterOutput(cluster: FleetClusterDescription): Promise<ClusterSummary> {
  const outputs = (await testStack.stack.outputs()).clusters.value as Record<string, ClusterSummary>;
  const entry = Object.entries(outputs).find(([, value]) => value.id === cluster.clusterResourceId);
  expect(entry?.[0]).toBe(cluster.clusterResourceId.split("/").pop());
  if (entry === undefined) {
    throw new Error(`no clusters output for ${cluster.clusterResourceId}`);
  }
  return entry[1];
}

function counters() {
  const snapshot = sandbox.statistics.snapshot();
  const cosmosWrites = Object.values(snapshot.cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0);
  return { armRequests: snapshot.arm.getRequests, cosmosWrites, unconditional: snapshot.cosmos.writesWithoutIfMatch };
}

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/e2e-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: 3, identitiesPerCluster: 3, subscriptions: 2 });
  for (const cluster of fleet) {
    seeded.set(
      cluster.serviceProviderClusterDocumentId,
      structuredClone(asServiceProviderClusterJson(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId))),
    );
  }
  // Two clusters declare their operators; the third reads them from its cluster document.
  clusters = [
    { clusterResourceId: fleet[0].clusterResourceId, dataPlaneOperators: fleet[0].dataPlaneOperators, serviceManagedIdentity: fleet[0].serviceManagedIdentity },
    { clusterResourceId: fleet[1].clusterResourceId, dataPlaneOperators: fleet[1].dataPlaneOperators },
    { clusterResourceId: fleet[2].clusterResourceId },
  ];
  // A persistent fault is given up on after 5 s instead of the default 30 s: the steps test what
  // happens then, not how long the retries last (test/unit/sync/lookUpIdentity.test.ts does).
  testStack = await openTestStack(sandbox, "e2e", clusters, { lookupTimeoutSeconds: "5" });
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe("the hook under the real Pulumi engine", () => {
  it("writes every cluster's status in the upstream layout on the first up and leaves foreign fields alone", async () => {
    sandbox.statistics.reset();
    const result = await testStack.stack.up({ color: "never" });
    expect(result.summary.result).toBe("succeeded");
    expect(result.summary.resourceChanges?.create).toBe(4); // three clusters and the stack
    expect(counters().unconditional).toEqual([]);
    for (const cluster of fleet) {
      const document = await readDocument(cluster);
      const status = ownedStatus(document);
      expectRecordsDeclaredIdentities(sandbox, status, cluster.dataPlaneOperators);
      expect(status?.earliestRecheckTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(document.properties.cosmosMetadata?.instanceVersion).toBe(
        (seeded.get(cluster.serviceProviderClusterDocumentId)?.properties.cosmosMetadata?.instanceVersion ?? 1) + 1,
      );
      expect(foreignFields(document)).toEqual(foreignFields(seededDocument(cluster)));
    }
    expect((await clusterOutput(fleet[0])).dataPlaneOperators).toMatchObject({ state: "ok", identities: 3, resolved: 3, notFound: 0, failed: 0 });
  });

  it("reports no changes on an immediate second up, with zero ARM requests and zero Cosmos writes", async () => {
    sandbox.statistics.reset();
    const result = await testStack.stack.up({ color: "never" });
    expect(result.summary.resourceChanges).toEqual({ same: 4 });
    expect(counters()).toMatchObject({ armRequests: 0, cosmosWrites: 0 });
  });

  it("refuses inputs that name another set than the cluster document, naming both, writing nothing; once the document names it, writes the new entry and prunes the old", async () => {
    const removedName = Object.keys(fleet[0].dataPlaneOperators)[0];
    const removedId = fleet[0].dataPlaneOperators[removedName];
    const addedId = fleet[0].dataPlaneOperators[removedName].replace(/operator-0$/, "operator-extra");
    sandbox.identities.create(addedId);
    const operators: Record<string, string> = { ...fleet[0].dataPlaneOperators, "operator-extra": addedId };
    delete operators[removedName];
    clusters[0] = { ...clusters[0], dataPlaneOperators: operators };
    await testStack.setClusters(clusters);

    const preview = await testStack.stack.preview({ diff: true, color: "never" });
    expect(preview.changeSummary).toMatchObject({ update: 1, same: 3 });
    expect(preview.stdout).toContain("operator-extra");
    // The cluster document, the authority on the set (all upstream's controller reads), still names the old one.
    sandbox.statistics.reset();
    const failures = failureCollector();
    const refused = await testStack.stack.up({ color: "never", onEvent: failures.onEvent }).then(
      () => "",
      (error: unknown) => String(error),
    );
    // The summary `npm run pulumi` prints, from the engine's own events: one cause, this cluster, its fix.
    expect(groupFailures(failures.failures)).toEqual([
      {
        cause:
          "the dataPlaneOperators input names other identities than the cluster's HCPOpenShiftCluster document, the authority upstream's controller reads: " +
          "declare the document's set in dataPlaneOperators, or leave dataPlaneOperators out to follow the document",
        count: 1,
        resources: [resourceNameFor(fleet[0].clusterResourceId)],
      },
    ]);
    expect(refused).toContain(`The document names: ${Object.values(fleet[0].dataPlaneOperators).join(", ")}`);
    expect(refused).toContain(`only in the inputs: ${addedId}; only in the document: ${removedId}`);
    expect(counters()).toMatchObject({ armRequests: 0, cosmosWrites: 0 });
    // The cluster's set changes, as the frontend writes it: now both name the same identities.
    sandbox.documents.patch(
      fleet[0].partitionKey,
      fleet[0].clusterDocumentId,
      "/properties/customerProperties/platform/operatorsAuthentication/userAssignedIdentities/dataPlaneOperators",
      operators,
    );
    sandbox.statistics.reset();
    await testStack.stack.up({ color: "never" });
    const status = ownedStatus(await readDocument(fleet[0]));
    expectEntryMatchesArm(status, addedId);
    expect(status?.identities?.[removedId.toLowerCase()]).toBeUndefined();
    expect(Object.keys(status?.identities ?? {})).toHaveLength(3);
    // The last update failed, so this one asks Azure for both halves: the three operators' identities and the MSI half's two.
    expect(counters().armRequests).toBe(5);
  });

  it("shows an identity rotated in Azure on refresh once the recheck is due, and the next up records the new IDs", async () => {
    const rotatedId = Object.values(fleet[1].dataPlaneOperators)[1];
    const before = sandbox.identities.get(rotatedId);
    const rotated = sandbox.identities.rotate(rotatedId);
    expect(rotated?.clientId).not.toBe(before?.clientId);
    setRecheckInThePast(fleet[1]);

    const refresh = await testStack.stack.refresh({ color: "never" });
    expect(refresh.summary.resourceChanges?.update).toBe(1);
    expect(await resourceDrift(fleet[1])).toEqual([expect.stringContaining("clientId and principalId changed in Azure")]);
    // Resources are named after their clusters, so the engine's own update line names the cluster.
    expect(refresh.stdout).toContain(`ServiceProviderClusterIdentityStatus ${resourceNameFor(fleet[1].clusterResourceId)} updated`);
    expect(ownedStatus(await readDocument(fleet[1]))?.identities?.[rotatedId.toLowerCase()].clientId).toBe(before?.clientId);

    await testStack.stack.up({ color: "never" });
    expectEntryMatchesArm(ownedStatus(await readDocument(fleet[1])), rotatedId);
    expect(((await clusterOutput(fleet[1])).dataPlaneOperators.nextRecheck ?? "") > new Date().toISOString()).toBe(true);
  });

  it("shows a tampered and a deleted status subtree on refresh, and up restores both", async () => {
    const tamperedId = Object.values(fleet[2].dataPlaneOperators)[0];
    sandbox.documents.patch(
      fleet[2].partitionKey,
      fleet[2].serviceProviderClusterDocumentId,
      `/properties/status/dataPlaneOperatorsManagedIdentities/identities/${tamperedId.toLowerCase().replace(/~/g, "~0").replace(/\//g, "~1")}/clientId`,
      "tampered",
    );
    const withoutSubtree = asServiceProviderClusterJson(sandbox.documents.read(fleet[1].partitionKey, fleet[1].serviceProviderClusterDocumentId));
    delete withoutSubtree.properties.status?.dataPlaneOperatorsManagedIdentities;
    sandbox.documents.put(withoutSubtree);

    // As `npm run pulumi -- refresh` runs it: with the program, whose warnings name the cluster and
    // the identity in the normal output (no --diff).
    const output = outputCollector();
    const refresh = await testStack.stack.refresh({ color: "never", runProgram: true, onOutput: output.onOutput });
    expect(refresh.summary.resourceChanges?.update).toBe(2);
    expect(await resourceDrift(fleet[2])).toEqual([expect.stringContaining("clientId was changed in Cosmos")]);
    expect(await resourceDrift(fleet[1])).toContain("the status subtree was deleted in Cosmos");
    const tamperedCluster = fleet[2].clusterResourceId.split("/").pop();
    expect(output.text()).toContain(
      `${tamperedCluster}: changed outside Pulumi, \`pulumi up\` restores it: identity ${tamperedId.toLowerCase()}: clientId was changed in Cosmos`,
    );
    expect(output.text()).toContain(
      `${fleet[1].clusterResourceId.split("/").pop()}: changed outside Pulumi, \`pulumi up\` restores it: the status subtree was deleted in Cosmos`,
    );
    expect((await clusterOutput(fleet[2])).drift).toEqual([expect.stringContaining("clientId was changed in Cosmos")]);

    await testStack.stack.up({ color: "never" });
    expectEntryMatchesArm(ownedStatus(await readDocument(fleet[2])), tamperedId);
    for (const identityId of Object.values(fleet[1].dataPlaneOperators)) expectEntryMatchesArm(ownedStatus(await readDocument(fleet[1])), identityId);
  });

  it("records an identity deleted in Azure as cleared IDs with a retrievalError, up succeeds, and later up --expect-no-changes and refresh are no-ops", async () => {
    const deletedId = Object.values(fleet[1].dataPlaneOperators)[0];
    sandbox.identities.delete(deletedId);
    setRecheckInThePast(fleet[1]);
    await testStack.stack.refresh({ color: "never" });
    const result = await testStack.stack.up({ color: "never" });
    expect(result.summary.result).toBe("succeeded");
    const entry = ownedStatus(await readDocument(fleet[1]))?.identities?.[deletedId.toLowerCase()];
    expect(entry).toBeDefined();
    expect(entry?.clientId).toBeUndefined();
    expect(entry?.principalId).toBeUndefined();
    expect(entry?.retrievalError).toMatch(/^ResourceNotFound \(HTTP 404\): /);
    expect((ownedStatus(await readDocument(fleet[1]))?.earliestRecheckTime ?? "") > new Date().toISOString()).toBe(true);
    expect((await clusterOutput(fleet[1])).dataPlaneOperators).toMatchObject({ state: "ok", notFound: 1, failed: 0 });

    // NotFound is data: the recheck gate holds, so a no-op stays a no-op (issue 10 item 4).
    const documentAfterUp = await readDocument(fleet[1]);
    sandbox.statistics.reset();
    const again = await testStack.stack.up({ color: "never", expectNoChanges: true });
    expect(again.summary.resourceChanges).toEqual({ same: 4 });
    expect(counters()).toMatchObject({ armRequests: 0, cosmosWrites: 0 });
    const refresh = await testStack.stack.refresh({ color: "never", expectNoChanges: true });
    expect(refresh.summary.resourceChanges?.update ?? 0).toBe(0);
    expect(await resourceDrift(fleet[1])).toEqual([]);
    expect(counters()).toMatchObject({ armRequests: 0, cosmosWrites: 0 });
    expect(await readDocument(fleet[1])).toEqual(documentAfterUp);

    // Later steps expect every identity back: recreate it and let the next pass look again.
    sandbox.identities.create(deletedId);
    setRecheckInThePast(fleet[1]);
  });

  it("fails on a persistent 5xx naming the identity, code and status, keeps its stored IDs and the others, and converges after the fault clears", async () => {
    const failingId = Object.values(fleet[0].dataPlaneOperators)[1];
    const fault = sandbox.faults.add({
      target: "arm",
      kind: "status",
      statusCode: 500,
      errorCode: "InternalServerError",
      message: "simulated outage",
      match: { resourceId: failingId },
      count: 1000,
    });
    setRecheckInThePast(fleet[0]);
    await testStack.stack.refresh({ color: "never" });
    const output = outputCollector();
    await expect(testStack.stack.up({ color: "never", onOutput: output.onOutput })).rejects.toThrow();
    expect(output.text()).toContain(failingId);
    expect(output.text()).toContain("InternalServerError (HTTP 500)");
    const status = ownedStatus(await readDocument(fleet[0]));
    expect(status?.identities?.[failingId.toLowerCase()]).toMatchObject({
      retrievalError: expect.stringContaining("InternalServerError (HTTP 500)") as unknown,
    });
    // A 5xx says nothing about the identity: its stored IDs stay beside the error (issue 28 item 3).
    expect(status?.identities?.[failingId.toLowerCase()].clientId).toBe(sandbox.identities.get(failingId)?.clientId);
    expect(status?.earliestRecheckTime).toBeUndefined();
    for (const identityId of Object.values(clusters[0].dataPlaneOperators ?? {}).filter((id) => id !== failingId)) expectEntryMatchesArm(status, identityId);

    // The state the failure left behind still refreshes; then the next up converges.
    await testStack.stack.refresh({ color: "never" });
    sandbox.faults.clear("arm");
    expect(fault.id).toBeDefined();
    await testStack.stack.up({ color: "never" });
    expectEntryMatchesArm(ownedStatus(await readDocument(fleet[0])), failingId);
  });

  it("fails preview on a malformed identity ID with the check message naming the property, writing nothing", async () => {
    const broken = [...clusters];
    broken[1] = {
      ...clusters[1],
      dataPlaneOperators: {
        ...clusters[1].dataPlaneOperators,
        "bad-operator": "/subscriptions/not-a-guid/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/x",
      },
    };
    await testStack.setClusters(broken);
    sandbox.statistics.reset();
    const error = await testStack.stack.preview({ color: "never" }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(String(error)).toContain("dataPlaneOperators.bad-operator");
    expect(String(error)).toContain("not a GUID");
    await expect(testStack.stack.up({ color: "never" })).rejects.toThrow(/dataPlaneOperators\.bad-operator/);
    expect(counters()).toMatchObject({ armRequests: 0, cosmosWrites: 0 });
    await testStack.setClusters(clusters);
  });

  it("keeps the Cosmos key, tokens and the identity header out of the state and its history", () => {
    const state = readTree(testStack.stateDirectory);
    expect(state.length).toBeGreaterThan(1000);
    expect(state).not.toContain(sandbox.cosmosKey);
    expect(state).not.toContain(sandbox.identityHeader);
    for (const token of sandbox.tokens.issuedTokens()) expect(state).not.toContain(token);
    expect(state).not.toMatch(/Bearer [A-Za-z0-9]/);
  });

  it("a cluster leaving the list writes nothing: the status another writer recorded after this stack's last write stays (issue 28 item 1)", async () => {
    // Upstream's controller records a rotated identity and its own, later recheck time.
    // An identity the status records now (earlier steps changed the declared set).
    const recorded = Object.values(ownedStatus(await readDocument(fleet[0]))?.identities ?? {});
    const rotatedId = recorded[0].resourceID;
    const rotated = sandbox.identities.rotate(rotatedId);
    const pointer = `/properties/status/dataPlaneOperatorsManagedIdentities/identities/${rotatedId.toLowerCase().replace(/\//g, "~1")}`;
    sandbox.documents.patch(fleet[0].partitionKey, fleet[0].serviceProviderClusterDocumentId, `${pointer}/clientId`, rotated?.clientId);
    sandbox.documents.patch(fleet[0].partitionKey, fleet[0].serviceProviderClusterDocumentId, `${pointer}/principalId`, rotated?.principalId);
    sandbox.documents.patch(
      fleet[0].partitionKey,
      fleet[0].serviceProviderClusterDocumentId,
      "/properties/status/dataPlaneOperatorsManagedIdentities/earliestRecheckTime",
      "2099-01-01T00:00:00Z",
    );
    const written = ownedStatus(await readDocument(fleet[0]));
    await testStack.setClusters(clusters.slice(1));
    const result = await testStack.stack.up({ color: "never" });
    expect(result.summary.resourceChanges).toMatchObject({ delete: 1 });
    expect(ownedStatus(await readDocument(fleet[0]))).toEqual(written);
    // Back in the list: the next up finds the status current and records it as its own.
    await testStack.setClusters(clusters);
    await testStack.stack.up({ color: "never" });
    expectEntryMatchesArm(ownedStatus(await readDocument(fleet[0])), rotatedId);
  });

  it("destroy writes nothing: every document, its status and etag included, stays as the stack last wrote it", async () => {
    const before = await Promise.all(fleet.map((cluster) => readDocument(cluster)));
    const writes = counters().cosmosWrites;
    const result = await testStack.stack.destroy({ color: "never" });
    expect(result.summary.result).toBe("succeeded");
    expect(counters().cosmosWrites).toBe(writes);
    expect(await Promise.all(fleet.map((cluster) => readDocument(cluster)))).toEqual(before);
    for (const [index, cluster] of fleet.entries()) {
      expect(foreignFields(before[index])).toEqual(foreignFields(seededDocument(cluster)));
    }
  });
});
