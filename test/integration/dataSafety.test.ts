/**
 * Issue 28 with the real @azure/arm-msi, @azure/identity and @azure/cosmos clients against the
 * sandbox: transient failures keep stored IDs, an ARM brownout writes nothing, a conflict is
 * decided again against the other writer's document, unknown fields survive, and a delete keeps
 * what another writer wrote. Every assertion reads the document back from Cosmos.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import type { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  buildSubscriptionDocument,
  documentIdFor,
  serviceProviderClusterResourceIdFor,
} from "../../sandbox/documentBuilders";
import { providerForSandbox } from "../fixtures/sandboxConfig";

const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
const subtreePath = "/properties/status/dataPlaneOperatorsManagedIdentities";
const dueRecheck = "2021-01-01T00:00:00Z";
const farRecheck = "2099-01-01T00:00:00Z";
let provider: ReturnType<typeof createManagedIdentityStatusProvider>;

interface Cluster {
  readonly clusterResourceId: string;
  readonly partitionKey: string;
  readonly documentId: string;
  readonly operators: Record<string, string>;
}

type Entry = { resourceID?: string; clientId?: string; principalId?: string; retrievalError?: string; [field: string]: unknown };
type Subtree = { identities?: Record<string, Entry>; earliestRecheckTime?: string; [field: string]: unknown };

async function seedCluster(identities = 2): Promise<Cluster> {
  const subscriptionId = randomUUID();
  const clusterResourceId = `/subscriptions/${subscriptionId}/resourceGroups/rg-safety/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/safety-${subscriptionId.slice(0, 6)}`;
  const operators: Record<string, string> = {};
  for (let index = 0; index < identities; index += 1) {
    operators[`operator-${index}`] =
      `/subscriptions/${subscriptionId}/resourceGroups/rg-safety/providers/Microsoft.ManagedIdentity/userAssignedIdentities/operator-${index}`;
    await admin.createIdentity(operators[`operator-${index}`]);
  }
  const clusterDocument = buildClusterDocument({ clusterResourceId, dataPlaneOperators: operators });
  const serviceProviderClusterDocument = buildServiceProviderClusterDocument({ clusterResourceId });
  // The subscription's own document, which the resource provider keeps beside its clusters'.
  const subscriptionDocument = buildSubscriptionDocument(subscriptionId);
  await admin.putDocument(subscriptionId, subscriptionDocument.id as string, subscriptionDocument);
  await admin.putDocument(subscriptionId, clusterDocument.id as string, clusterDocument);
  await admin.putDocument(subscriptionId, serviceProviderClusterDocument.id as string, serviceProviderClusterDocument);
  return { clusterResourceId, partitionKey: subscriptionId, documentId: documentIdFor(serviceProviderClusterResourceIdFor(clusterResourceId)), operators };
}

async function readBack(cluster: Cluster): Promise<{ subtree: Subtree; etag: string }> {
  const document = (await admin.readDocument(cluster.partitionKey, cluster.documentId)) as unknown as {
    _etag: string;
    properties: { status: Record<string, unknown> };
  };
  return { subtree: document.properties.status.dataPlaneOperatorsManagedIdentities as Subtree, etag: document._etag };
}

const inputs = (cluster: Cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.operators });
const key = (resourceId: string): string => resourceId.toLowerCase();
const pointer = (resourceId: string): string => `${subtreePath}/identities/${key(resourceId).replace(/~/g, "~0").replace(/\//g, "~1")}`;

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error)) throw new Error("expected the call to fail");
  return outcome;
}

/** Creates the status, then makes its recheck due so the next update consults Azure. */
async function createdAndDue(cluster: Cluster): Promise<ProviderOutputs> {
  const created = await provider.create(inputs(cluster));
  await admin.patchDocument(cluster.partitionKey, cluster.documentId, `${subtreePath}/earliestRecheckTime`, dueRecheck);
  return created.outs as ProviderOutputs;
}

async function failEveryLookup(resourceIds: readonly string[], statusCode: number, errorCode: string): Promise<void> {
  for (const resourceId of resourceIds) {
    await admin.addFault({ target: "arm", kind: "status", statusCode, errorCode, message: "the service is unavailable", match: { resourceId }, count: 100 });
  }
}

let dispose: (() => void) | undefined;

beforeAll(() => {
  ({ provider, dispose } = providerForSandbox(connection, { lookupTimeoutSeconds: "3" }));
});

afterEach(async () => {
  await admin.clearFaults();
});

afterAll(() => dispose?.());

describe("transient failures keep good IDs (issue 28 item 3)", () => {
  it("with every ARM read of a cluster answering 503 and the recheck due, fails and leaves the document exactly as it was", async () => {
    const cluster = await seedCluster();
    const outputs = await createdAndDue(cluster);
    const before = await readBack(cluster);
    await failEveryLookup(Object.values(cluster.operators), 503, "ServiceUnavailable");
    const failure = await failureOf(provider.update!(cluster.documentId, outputs, inputs(cluster)));
    expect(failure.message).toMatch(/^all \d+ identity lookups failed the same transient way \(ServerError: /);
    const after = await readBack(cluster);
    expect(after.etag).toBe(before.etag);
    for (const resourceId of Object.values(cluster.operators)) {
      expect(after.subtree.identities?.[key(resourceId)]?.clientId).toBe((await admin.getIdentity(resourceId)).clientId);
    }
  });

  it("a persistent 503 on one identity keeps its IDs beside the error, leaves the recheck open, and the next pass clears the error", async () => {
    const cluster = await seedCluster();
    const outputs = await createdAndDue(cluster);
    const failing = cluster.operators["operator-1"];
    const identity = await admin.getIdentity(failing);
    await failEveryLookup([failing], 503, "ServiceUnavailable");
    const failure = await failureOf(provider.update!(cluster.documentId, outputs, inputs(cluster)));
    expect(failure.message).toContain(`${failing}: ServiceUnavailable (HTTP 503)`);
    const { subtree } = await readBack(cluster);
    expect(subtree.identities?.[key(failing)]).toEqual({
      resourceID: failing,
      clientId: identity.clientId,
      principalId: identity.principalId,
      retrievalError: expect.stringMatching(/^ServiceUnavailable \(HTTP 503\): /) as unknown,
    });
    expect(subtree.earliestRecheckTime).toBeUndefined();
    await admin.clearFaults();
    await provider.update!(cluster.documentId, outputs, inputs(cluster));
    const healed = (await readBack(cluster)).subtree;
    expect(healed.identities?.[key(failing)]).toEqual({ resourceID: failing, clientId: identity.clientId, principalId: identity.principalId });
    expect(healed.earliestRecheckTime).toBeDefined();
  });

  it("a 404 is definitive: the deleted identity's IDs are cleared", async () => {
    const cluster = await seedCluster();
    const outputs = await createdAndDue(cluster);
    await admin.deleteIdentity(cluster.operators["operator-0"]);
    await provider.update!(cluster.documentId, outputs, inputs(cluster));
    expect((await readBack(cluster)).subtree.identities?.[key(cluster.operators["operator-0"])]).toEqual({
      resourceID: cluster.operators["operator-0"],
      retrievalError: expect.stringMatching(/^ResourceNotFound \(HTTP 404\)/) as unknown,
    });
  });
});

describe("after a conflict, the decision is made again (issue 28 item 4)", () => {
  it("writes nothing over a fresh status another writer recorded between our read and our write", async () => {
    const cluster = await seedCluster();
    const outputs = await createdAndDue(cluster);
    const failing = cluster.operators["operator-0"];
    await admin.addFault({ target: "arm", kind: "status", statusCode: 400, errorCode: "BadRequest", message: "odd", match: { resourceId: failing }, count: 1 });
    const fresh: Subtree = { identities: {}, earliestRecheckTime: farRecheck };
    for (const resourceId of Object.values(cluster.operators)) {
      const identity = await admin.getIdentity(resourceId);
      fresh.identities![key(resourceId)] = { resourceID: resourceId, clientId: identity.clientId, principalId: identity.principalId };
    }
    await admin.addFault({
      target: "cosmos",
      kind: "race",
      match: { documentId: cluster.documentId, operation: "write" },
      count: 1,
      foreignEdit: { path: subtreePath, value: fresh },
    });
    // Succeeds: the identity whose lookup failed has a fresh answer from the other writer.
    await provider.update!(cluster.documentId, outputs, inputs(cluster));
    expect((await readBack(cluster)).subtree).toEqual(fresh);
  });
});

describe("a write that got no answer is read back, never taken for written or unwritten", () => {
  const writesTo = async (cluster: Cluster): Promise<number> => (await admin.getStatistics()).cosmos.documentWritesByDocument[cluster.documentId] ?? 0;

  /** A cluster whose recheck is due and one of whose identities was recreated: the next update has one write to make. */
  async function rotatedAndDue(): Promise<{ cluster: Cluster; outputs: ProviderOutputs; rotated: string; clientId: string }> {
    const cluster = await seedCluster();
    const outputs = await createdAndDue(cluster);
    const rotated = cluster.operators["operator-1"];
    const { clientId } = await admin.rotateIdentity(rotated);
    return { cluster, outputs, rotated, clientId };
  }

  /** The update of a rotated, due cluster whose first write meets `kind`: the writes it made, and the stored subtree and rotated identity. */
  async function updateThroughOneReset(kind: "resetAfterWrite" | "connectionReset") {
    const { cluster, outputs, rotated, clientId } = await rotatedAndDue();
    const writesBefore = await writesTo(cluster);
    await admin.addFault({ target: "cosmos", kind, match: { documentId: cluster.documentId, operation: "write" }, count: 1 });
    const { outs } = await provider.update!(cluster.documentId, outputs, inputs(cluster));
    expect(outs?.failure ?? null).toBeNull();
    return { writes: (await writesTo(cluster)) - writesBefore, subtree: (await readBack(cluster)).subtree, rotated, clientId };
  }

  it("a write that landed before its connection reset is reported written: one write, the new IDs stored", async () => {
    const { writes, subtree, rotated, clientId } = await updateThroughOneReset("resetAfterWrite");
    expect(writes).toBe(1);
    expect(subtree.identities?.[key(rotated)]?.clientId).toBe(clientId);
    expect(subtree.earliestRecheckTime).not.toBe(dueRecheck);
  });

  it("a write reset before it landed is decided again against the document and written once more", async () => {
    const { writes, subtree, rotated, clientId } = await updateThroughOneReset("connectionReset");
    expect(writes).toBe(2);
    expect(subtree.identities?.[key(rotated)]?.clientId).toBe(clientId);
  });

  it("when no write is answered, fails saying the write may have landed, changes nothing, and the next pass writes once", async () => {
    const { cluster, outputs, rotated, clientId } = await rotatedAndDue();
    const before = await readBack(cluster);
    await admin.addFault({ target: "cosmos", kind: "connectionReset", match: { documentId: cluster.documentId, operation: "write" }, count: 100 });
    const failure = (await provider.update!(cluster.documentId, outputs, inputs(cluster)).catch((error: unknown) => error)) as Error & {
      properties?: ProviderOutputs;
    };
    expect(failure.message).toMatch(
      /^ECONNRESET: socket hang up after \d+ attempts, writing the ServiceProviderCluster document\..*: the write got no answer and may have landed; /,
    );
    expect(failure.message).not.toContain("nothing was written");
    expect((await readBack(cluster)).etag).toBe(before.etag);
    await admin.clearFaults();
    const writesBefore = await writesTo(cluster);
    const { outs } = await provider.update!(cluster.documentId, failure.properties ?? outputs, inputs(cluster));
    expect(outs?.failure ?? null).toBeNull();
    expect(await writesTo(cluster)).toBe(writesBefore + 1);
    expect((await readBack(cluster)).subtree.identities?.[key(rotated)]?.clientId).toBe(clientId);
  });
});

describe("fields this hook does not know (issue 28 item 5)", () => {
  it("survive a write beside identities and inside the entries it keeps", async () => {
    const cluster = await seedCluster();
    const outputs = await createdAndDue(cluster);
    const rotated = cluster.operators["operator-1"];
    await admin.patchDocument(cluster.partitionKey, cluster.documentId, `${pointer(rotated)}/tenantId`, "tenant-of-operator-1");
    await admin.patchDocument(cluster.partitionKey, cluster.documentId, `${subtreePath}/futureField`, { by: "upstream" });
    const identity = await admin.rotateIdentity(rotated);
    await provider.update!(cluster.documentId, outputs, inputs(cluster));
    const { subtree } = await readBack(cluster);
    expect(subtree.futureField).toEqual({ by: "upstream" });
    expect(subtree.identities?.[key(rotated)]).toEqual({
      resourceID: rotated,
      clientId: identity.clientId,
      principalId: identity.principalId,
      tenantId: "tenant-of-operator-1",
    });
  });
});

describe("delete (issue 44 item 3): relinquishes, writing nothing", () => {
  it("leaves the document as the resource last wrote it, etag included", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const before = await admin.readDocument(cluster.partitionKey, cluster.documentId);
    await provider.delete!(cluster.documentId, created.outs as ProviderOutputs);
    expect(await admin.readDocument(cluster.partitionKey, cluster.documentId)).toEqual(before);
  });

  it("leaves what another writer recorded after this resource's last write (a rotated clientId, a later recheck)", async () => {
    const cluster = await seedCluster();
    const created = await provider.create(inputs(cluster));
    const rotated = cluster.operators["operator-0"];
    const identity = await admin.rotateIdentity(rotated);
    await admin.patchDocument(cluster.partitionKey, cluster.documentId, `${pointer(rotated)}/clientId`, identity.clientId);
    await admin.patchDocument(cluster.partitionKey, cluster.documentId, `${pointer(rotated)}/principalId`, identity.principalId);
    await admin.patchDocument(cluster.partitionKey, cluster.documentId, `${subtreePath}/earliestRecheckTime`, farRecheck);
    const before = await admin.readDocument(cluster.partitionKey, cluster.documentId);
    await provider.delete!(cluster.documentId, created.outs as ProviderOutputs);
    expect(await admin.readDocument(cluster.partitionKey, cluster.documentId)).toEqual(before);
    expect((await readBack(cluster)).subtree.identities?.[key(rotated)]?.clientId).toBe(identity.clientId);
  });
});
