/**
 * The provider implementation with the real @azure/arm-msi, @azure/identity and @azure/cosmos
 * clients against the sandbox (started by the integration global setup; reached through its
 * admin API). Every assertion reads the document back.
 */
import { countsOf } from "../fixtures/storedDocument";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import { providerForSandbox } from "../fixtures/sandboxConfig";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  buildSubscriptionDocument,
  documentIdFor,
  serviceProviderClusterResourceIdFor,
} from "../../sandbox/documentBuilders";
import type { DataPlaneOperatorsManagedIdentities } from "../../resources/core/serviceProviderClusterDocument";
import type { ServiceProviderClusterJson } from "../fixtures/storedDocument";
import { asServiceProviderClusterJson, ownedStatusOf } from "../fixtures/storedDocument";

type Document = ServiceProviderClusterJson;
type Provider = ReturnType<typeof createManagedIdentityStatusProvider>;

const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
let provider: Provider;

interface TestCluster {
  clusterResourceId: string;
  partitionKey: string;
  documentId: string;
  operators: Record<string, string>;
  serviceManagedIdentity: string;
  seeded: Document;
}

/** A fresh cluster in its own subscription: identities in ARM, cluster and SPC documents in Cosmos. */
async function seedCluster(options: { identities?: number; clusterDocumentOperators?: boolean; deletionTimestamp?: string } = {}): Promise<TestCluster> {
  const subscriptionId = randomUUID();
  const clusterResourceId = `/subscriptions/${subscriptionId}/resourceGroups/Rg-Integration/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${subscriptionId.slice(0, 6)}`;
  const operators: Record<string, string> = {};
  for (let index = 0; index < (options.identities ?? 3); index += 1) {
    const identityId = `/subscriptions/${subscriptionId}/resourceGroups/Rg-Integration/providers/Microsoft.ManagedIdentity/userAssignedIdentities/operator-${index}`;
    operators[`operator-${index}`] = identityId;
    await admin.createIdentity(identityId);
  }
  const serviceManagedIdentity = `/subscriptions/${subscriptionId}/resourceGroups/Rg-Integration/providers/Microsoft.ManagedIdentity/userAssignedIdentities/service`;
  await admin.createIdentity(serviceManagedIdentity);
  const clusterDocument = buildClusterDocument({
    clusterResourceId,
    ...(options.clusterDocumentOperators === false ? {} : { dataPlaneOperators: operators }),
    serviceManagedIdentity,
    ...(options.deletionTimestamp === undefined ? {} : { deletionTimestamp: options.deletionTimestamp }),
  });
  const serviceProviderClusterDocument = buildServiceProviderClusterDocument({ clusterResourceId });
  // The subscription's own document, which the resource provider keeps beside its clusters'.
  const subscriptionDocument = buildSubscriptionDocument(subscriptionId);
  await admin.putDocument(subscriptionId, subscriptionDocument.id as string, subscriptionDocument);
  await admin.putDocument(subscriptionId, clusterDocument.id as string, clusterDocument);
  const seeded = await admin.putDocument(subscriptionId, serviceProviderClusterDocument.id as string, serviceProviderClusterDocument);
  return {
    clusterResourceId,
    partitionKey: subscriptionId,
    documentId: documentIdFor(serviceProviderClusterResourceIdFor(clusterResourceId)),
    operators,
    serviceManagedIdentity,
    seeded: asServiceProviderClusterJson(seeded),
  };
}

async function readDocument(cluster: TestCluster): Promise<Document> {
  return asServiceProviderClusterJson(await admin.readDocument(cluster.partitionKey, cluster.documentId));
}

/** The owned subtree, which these tests expect to be there. */
function status(document: Document): DataPlaneOperatorsManagedIdentities {
  const owned = ownedStatusOf(document);
  if (owned === undefined) throw new Error(`document ${String(document.id)} has no status subtree`);
  return owned;
}

function foreignFields(document: Document): Document {
  const copy = structuredClone(document);
  for (const key of Object.keys(copy).filter((key) => key.startsWith("_"))) delete copy[key];
  delete copy.properties.status?.dataPlaneOperatorsManagedIdentities;
  delete copy.properties.status?.msiManagedIdentities;
  delete copy.properties.cosmosMetadata?.instanceVersion;
  delete copy.properties.cosmosMetadata?.etag;
  return copy;
}

async function expectMatchesArm(document: Document, identityId: string): Promise<void> {
  const identity = await admin.getIdentity(identityId);
  expect(status(document).identities?.[identityId.toLowerCase()]).toEqual({
    resourceID: identityId,
    clientId: identity.clientId,
    principalId: identity.principalId,
  });
}

async function armRequests(): Promise<number> {
  return (await admin.getStatistics()).arm.getRequests;
}

/** The cluster document's `dataPlaneOperators`, the authority on the desired set, as the frontend would change it. */
async function declareInClusterDocument(cluster: TestCluster, operators: Record<string, string>): Promise<void> {
  await admin.patchDocument(
    cluster.partitionKey,
    documentIdFor(cluster.clusterResourceId),
    "/properties/customerProperties/platform/operatorsAuthentication/userAssignedIdentities/dataPlaneOperators",
    operators,
  );
}

function inputs(cluster: TestCluster, operators: Record<string, string> = cluster.operators) {
  return { clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: operators };
}

let dispose: (() => void) | undefined;

beforeAll(() => {
  ({ provider, dispose } = providerForSandbox(connection));
});

// The CA file is the test's own: nothing is left in the temporary directory.
afterAll(() => dispose?.());

describe("the provider with real SDK clients against the sandbox", () => {
  it("creates the status from Azure, keeps every foreign field, and bumps instanceVersion once", async () => {
    const cluster = await seedCluster();
    const result = await provider.create(inputs(cluster));
    expect(result.id).toBe(cluster.documentId);
    const document = await readDocument(cluster);
    for (const identityId of Object.values(cluster.operators)) await expectMatchesArm(document, identityId);
    // The MSI half, read through ARM in this (processCredential) mode, is written in the same write.
    const smi = await admin.getIdentity(cluster.serviceManagedIdentity);
    expect((document.properties.status?.msiManagedIdentities as { serviceManagedIdentity?: unknown } | undefined)?.serviceManagedIdentity).toEqual({
      resourceId: cluster.serviceManagedIdentity,
      clientId: smi.clientId,
      principalId: smi.principalId,
    });
    expect(foreignFields(document)).toEqual(foreignFields(cluster.seeded));
    expect(document.properties.cosmosMetadata?.instanceVersion).toBe(2);
    expect(JSON.parse(JSON.stringify(result.outs))).toEqual(result.outs);
    expect(countsOf(result.outs)).toEqual({ identityCount: 3, resolvedCount: 3, failedCount: 0, notFoundCount: 0 });
  });

  it("creates upstream's cosmosMetadata in a legacy document that has none, so upstream's change-feed reader sees the write", async () => {
    const cluster = await seedCluster();
    const legacy = structuredClone(cluster.seeded);
    for (const key of Object.keys(legacy).filter((key) => key.startsWith("_"))) delete legacy[key];
    delete legacy.properties.cosmosMetadata;
    const seeded = await admin.putDocument(cluster.partitionKey, cluster.documentId, legacy);
    await provider.create(inputs(cluster));
    const document = await readDocument(cluster);
    for (const identityId of Object.values(cluster.operators)) await expectMatchesArm(document, identityId);
    expect(document.properties.cosmosMetadata).toEqual({
      resourceID: legacy.resourceID,
      etag: seeded._etag,
      instanceVersion: 2,
      partitionKey: legacy.partitionKey,
    });
  });

  it("makes no Azure call and no write when run again inside the recheck window", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const before = await readDocument(cluster);
    const requestsBefore = await armRequests();
    expect(await provider.diff!(cluster.documentId, created.outs as ProviderOutputs, inputs(cluster))).toEqual({ changes: false });
    await provider.update!(cluster.documentId, created.outs as ProviderOutputs, inputs(cluster));
    expect(await armRequests()).toBe(requestsBefore);
    expect((await readDocument(cluster))._etag).toBe(before._etag);
  });

  it("writes an added operator's identity and prunes a removed one", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const addedId = cluster.operators["operator-0"].replace("operator-0", "operator-added");
    await admin.createIdentity(addedId);
    const { "operator-0": removedId, ...kept } = cluster.operators;
    const next = { ...kept, added: addedId };
    // The cluster's set changes, and the inputs name the new one (inputs naming another set are refused).
    await declareInClusterDocument(cluster, next);
    expect((await provider.diff!(cluster.documentId, created.outs as ProviderOutputs, inputs(cluster, next))).changes).toBe(true);
    await provider.update!(cluster.documentId, created.outs as ProviderOutputs, inputs(cluster, next));
    const document = await readDocument(cluster);
    await expectMatchesArm(document, addedId);
    expect(status(document).identities?.[removedId.toLowerCase()]).toBeUndefined();
    expect(Object.keys(status(document).identities ?? {})).toHaveLength(3);
  });

  it("reports a rotated identity on read once the recheck is due, and update records the new IDs", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const rotatedId = cluster.operators["operator-1"];
    await admin.rotateIdentity(rotatedId);
    await admin.patchDocument(
      cluster.partitionKey,
      cluster.documentId,
      "/properties/status/dataPlaneOperatorsManagedIdentities/earliestRecheckTime",
      "2021-01-01T00:00:00Z",
    );
    const refreshed = await provider.read!(cluster.documentId, created.outs);
    expect(refreshed.props?.drift).toEqual([`identity ${rotatedId.toLowerCase()}: clientId and principalId changed in Azure`]);
    expect((await provider.diff!(cluster.documentId, refreshed.props as ProviderOutputs, inputs(cluster))).changes).toBe(true);
    const updated = await provider.update!(cluster.documentId, refreshed.props as ProviderOutputs, inputs(cluster));
    await expectMatchesArm(await readDocument(cluster), rotatedId);
    expect(updated.outs?.drift).toBeUndefined();
  });

  it("records a deleted identity with cleared IDs and a ResourceNotFound retrievalError, without failing", async () => {
    const cluster = await seedCluster();
    await admin.deleteIdentity(cluster.operators["operator-2"]);
    const result = await provider.create(inputs(cluster));
    const entry = status(await readDocument(cluster)).identities?.[cluster.operators["operator-2"].toLowerCase()];
    expect(entry).toEqual({
      resourceID: cluster.operators["operator-2"],
      retrievalError: expect.stringMatching(/^ResourceNotFound \(HTTP 404\): The Resource/) as unknown,
    });
    expect(countsOf(result.outs)).toMatchObject({ resolvedCount: 2, notFoundCount: 1, failedCount: 0 });
    expect(status(await readDocument(cluster)).earliestRecheckTime).toBeDefined();
  });

  it("shows a tampered subtree on read and restores it on update", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const key = cluster.operators["operator-0"].toLowerCase();
    const pointer = `/properties/status/dataPlaneOperatorsManagedIdentities/identities/${key.replace(/~/g, "~0").replace(/\//g, "~1")}/principalId`;
    await admin.patchDocument(cluster.partitionKey, cluster.documentId, pointer, "00000000-0000-0000-0000-000000000000");
    const refreshed = await provider.read!(cluster.documentId, created.outs);
    expect(refreshed.props?.drift).toEqual([`identity ${key}: principalId was changed in Cosmos`]);
    await provider.update!(cluster.documentId, refreshed.props as ProviderOutputs, inputs(cluster));
    await expectMatchesArm(await readDocument(cluster), cluster.operators["operator-0"]);
  });

  it("retries after a 412 race, keeping the other writer's change and writing the status", async () => {
    const cluster = await seedCluster();
    await admin.addFault({
      target: "cosmos",
      kind: "race",
      match: { documentId: cluster.documentId, operation: "write" },
      count: 2,
      foreignEdit: { path: "/properties/futureField/editedBy", value: "racing writer" },
    });
    await provider.create(inputs(cluster));
    const document = await readDocument(cluster);
    expect(document.properties.futureField).toMatchObject({ editedBy: "racing writer" });
    for (const identityId of Object.values(cluster.operators)) await expectMatchesArm(document, identityId);
    expect((await admin.getStatistics()).cosmos.writesWithoutIfMatch.filter((write) => write.path.includes(cluster.documentId))).toEqual([]);
  });

  it("rides out a throttled ARM answer with Retry-After and resolves every identity", async () => {
    const cluster = await seedCluster();
    await admin.addFault({ target: "arm", kind: "throttle", match: { resourceId: cluster.operators["operator-1"] }, count: 1, retryAfterSeconds: 1 });
    await provider.create(inputs(cluster));
    for (const identityId of Object.values(cluster.operators)) await expectMatchesArm(await readDocument(cluster), identityId);
  });

  it("persists the others and fails naming the identity, code and status when one lookup keeps failing", async () => {
    const cluster = await seedCluster();
    const failingId = cluster.operators["operator-1"];
    await admin.addFault({
      target: "arm",
      kind: "status",
      statusCode: 403,
      errorCode: "AuthorizationFailed",
      message: "The client does not have authorization",
      match: { resourceId: failingId },
      count: 10,
    });
    const failure = (await provider.create({ ...inputs(cluster), __provider: "serialized-provider" }).then(
      () => undefined,
      (error: unknown) => error,
    )) as Error & { id?: string; properties?: Record<string, unknown>; reasons?: string[] };
    expect(failure.message).toContain(`${failingId}: AuthorizationFailed (HTTP 403)`);
    expect(failure.id).toBe(cluster.documentId);
    expect(failure.properties?.__provider).toBe("serialized-provider");
    expect(countsOf(failure.properties).failedCount).toBe(1);
    const document = await readDocument(cluster);
    expect(status(document).identities?.[failingId.toLowerCase()]).toEqual({
      resourceID: failingId,
      retrievalError: expect.stringContaining("AuthorizationFailed (HTTP 403)") as unknown,
    });
    expect(status(document).earliestRecheckTime).toBeUndefined();
    await expectMatchesArm(document, cluster.operators["operator-0"]);
  });

  it("reads each identity in its own subscription, for clusters and subscriptions handled at once", async () => {
    const clusters = await Promise.all([0, 1, 2].map(() => seedCluster({ identities: 1 })));
    // The same resource group and name as each cluster's operator-0, in another subscription: only
    // the subscription in the request tells them apart (every subscription's client shares one pipeline).
    const elsewhere = clusters.map(
      () => `/subscriptions/${randomUUID()}/resourceGroups/Rg-Integration/providers/Microsoft.ManagedIdentity/userAssignedIdentities/operator-0`,
    );
    for (const identityId of elsewhere) await admin.createIdentity(identityId);
    for (const [index, cluster] of clusters.entries()) await declareInClusterDocument(cluster, { ...cluster.operators, shared: elsewhere[index] });
    await admin.resetStatistics();
    await Promise.all(clusters.map((cluster, index) => provider.create(inputs(cluster, { ...cluster.operators, shared: elsewhere[index] }))));
    const requests = (await admin.getStatistics()).arm.requestsByIdentity;
    for (const [index, cluster] of clusters.entries()) {
      const document = await readDocument(cluster);
      for (const identityId of [...Object.values(cluster.operators), elsewhere[index]]) {
        await expectMatchesArm(document, identityId);
        expect(requests[identityId.toLowerCase()]).toBe(1);
      }
    }
  });

  it("reads the desired set from the cluster document when no operators are given", async () => {
    const cluster = await seedCluster();
    const result = await provider.create({ clusterResourceId: cluster.clusterResourceId });
    expect(countsOf(result.outs).identityCount).toBe(3);
    for (const identityId of Object.values(cluster.operators)) await expectMatchesArm(await readDocument(cluster), identityId);
  });

  it("skips a cluster that is being deleted: no Azure call, no write", async () => {
    const cluster = await seedCluster({ deletionTimestamp: "2026-11-01T00:00:00Z" });
    const requestsBefore = await armRequests();
    const result = await provider.create({ clusterResourceId: cluster.clusterResourceId });
    expect(result.outs).toMatchObject({ skippedReason: "clusterDeleting" });
    expect(await armRequests()).toBe(requestsBefore);
    expect((await readDocument(cluster))._etag).toBe(cluster.seeded._etag);
  });

  it("skips a deleting cluster even when the operators come from the inputs: the cluster document gates every pass", async () => {
    const cluster = await seedCluster({ deletionTimestamp: "2026-11-01T00:00:00Z" });
    const requestsBefore = await armRequests();
    const result = await provider.create(inputs(cluster));
    expect(result.outs).toMatchObject({ skippedReason: "clusterDeleting" });
    expect(await armRequests()).toBe(requestsBefore);
    expect((await readDocument(cluster))._etag).toBe(cluster.seeded._etag);
  });

  it("fails naming the cluster document when it does not exist, even with operators from the inputs, and writes nothing", async () => {
    const cluster = await seedCluster();
    const clusterDocumentId = documentIdFor(cluster.clusterResourceId);
    await admin.deleteDocument(cluster.partitionKey, clusterDocumentId);
    const requestsBefore = await armRequests();
    await expect(provider.create(inputs(cluster))).rejects.toThrow(
      new RegExp(`HCPOpenShiftCluster document of cluster \\S+ \\(${clusterDocumentId}\\) does not exist`),
    );
    expect(await armRequests()).toBe(requestsBefore);
    expect((await readDocument(cluster))._etag).toBe(cluster.seeded._etag);
  });

  it("reads the cluster and ServiceProviderCluster documents at once", async () => {
    const cluster = await seedCluster();
    // The ServiceProviderCluster read is held for a while. Both documents are in one partition, so
    // the two reads go as one batch (documentStore.ts): one request, both documents in it.
    const rule = await admin.addFault({
      target: "cosmos",
      kind: "delay",
      match: { documentId: cluster.documentId, operation: "read" },
      delayInMs: 500,
      count: 1,
    });
    await admin.resetStatistics();
    await provider.create(inputs(cluster));
    expect((await admin.listFaults()).find((fault) => fault.id === rule.id)?.triggered).toBe(1);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadsByDocument).toEqual({ [documentIdFor(cluster.clusterResourceId)]: 1, [cluster.documentId]: 1 });
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    for (const identityId of Object.values(cluster.operators)) await expectMatchesArm(await readDocument(cluster), identityId);
  });

  it("names the missing cluster document, not the ServiceProviderCluster read that failed alongside it, and writes nothing", async () => {
    const cluster = await seedCluster();
    await admin.deleteDocument(cluster.partitionKey, documentIdFor(cluster.clusterResourceId));
    const rule = await admin.addFault({
      target: "cosmos",
      kind: "status",
      statusCode: 500,
      errorCode: "InternalServerError",
      match: { documentId: cluster.documentId, operation: "read" },
      count: 20,
    });
    try {
      const requestsBefore = await armRequests();
      await expect(provider.create(inputs(cluster))).rejects.toThrow(
        new RegExp(`HCPOpenShiftCluster document of cluster \\S+ \\(${documentIdFor(cluster.clusterResourceId)}\\) does not exist`),
      );
      expect(await armRequests()).toBe(requestsBefore);
      expect((await admin.listFaults()).find((fault) => fault.id === rule.id)?.triggered).toBeGreaterThanOrEqual(1);
    } finally {
      await admin.clearFaults("cosmos");
    }
    expect((await readDocument(cluster))._etag).toBe(cluster.seeded._etag);
  });

  it("fails clearly, naming the document id, when the ServiceProviderCluster document never appears", async () => {
    const cluster = await seedCluster();
    await admin.deleteDocument(cluster.partitionKey, cluster.documentId);
    await expect(provider.create(inputs(cluster))).rejects.toThrow(
      new RegExp(`ServiceProviderCluster document of cluster \\S+ \\(${cluster.documentId}\\) does not exist`),
    );
    await expect(admin.readDocument(cluster.partitionKey, cluster.documentId)).rejects.toThrow();
  });

  it("delete writes nothing (the document, etag included, as the resource last wrote it) and tolerates a missing document", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const before = await readDocument(cluster);
    await provider.delete!(cluster.documentId, created.outs as ProviderOutputs);
    expect(await readDocument(cluster)).toEqual(before);
    await admin.deleteDocument(cluster.partitionKey, cluster.documentId);
    await expect(provider.delete!(cluster.documentId, created.outs as ProviderOutputs)).resolves.toBeUndefined();
  });
});
