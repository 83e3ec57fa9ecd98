import { randomUUID } from "node:crypto";
import type { Container } from "@azure/cosmos";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { buildServiceProviderClusterDocument, clusterResourceIdFor } from "../../sandbox/documentBuilders";
import { createSandboxCosmosClient } from "../../sandbox/sandboxClients";
import type { DocumentStore } from "../../resources/cosmos/documentStore";
import { createDocumentStore } from "../../resources/cosmos/documentStore";

// Reads that wait at the same time for documents of one partition go to Cosmos as one batch of
// Read operations (resources/cosmos/documentStore.ts); these tests hold it to what point reads
// would have returned, through the real SDK against the sandbox.
const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
const client = createSandboxCosmosClient(connection);
const container: Container = client.database(connection.database).container(connection.container);
const subscriptionId = randomUUID();
const partitionKey = subscriptionId.toLowerCase();
let store: DocumentStore;
let ids: string[];

async function createDocuments(count: number, subscription = subscriptionId): Promise<string[]> {
  const created: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const document = buildServiceProviderClusterDocument({
      clusterResourceId: clusterResourceIdFor(subscription, "batch-rg", `batch-${randomUUID().slice(0, 8)}`),
    });
    await container.items.create(document);
    created.push(String(document.id));
  }
  return created;
}

beforeAll(async () => {
  store = createDocumentStore(container);
  ids = await createDocuments(5);
});

afterEach(async () => {
  await admin.clearFaults();
});

afterAll(() => {
  client.dispose();
});

describe("reads of one partition made at the same time", () => {
  it("go as one batch and return each document with the etag a point read returns", async () => {
    await admin.resetStatistics();
    const read = await Promise.all(ids.map((id) => store.readDocument(partitionKey, id)));
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.documentReads).toBe(ids.length);
    expect(statistics.cosmos.documentReadsByDocument).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
    for (const [index, id] of ids.entries()) {
      const point = await container.item(id, partitionKey).read<Record<string, unknown>>();
      expect(read[index]?.document).toEqual(point.resource);
      expect(read[index]?.etag).toBe(point.etag);
    }
  });

  it("give an etag that a conditional patch accepts", async () => {
    const [first] = await Promise.all(ids.slice(0, 2).map((id) => store.readDocument(partitionKey, id)));
    const patched = await store.patchDocument(partitionKey, ids[0], [{ op: "set", path: "/properties/batchedReadCheck", value: "ok" }], first?.etag ?? "");
    expect(patched.document.properties).toMatchObject({ batchedReadCheck: "ok" });
    expect((await container.item(ids[0], partitionKey).read<{ properties: Record<string, unknown> }>()).resource?.properties.batchedReadCheck).toBe("ok");
  });

  it("answer undefined for a missing document and still return the others", async () => {
    const missing = randomUUID();
    await admin.resetStatistics();
    const read = await Promise.all([...ids.slice(0, 2), missing].map((id) => store.readDocument(partitionKey, id)));
    expect(read.map((stored) => stored?.document.id)).toEqual([ids[0], ids[1], undefined]);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(1);
  });

  it("give each caller its own copy of a document asked for twice", async () => {
    const [one, two] = await Promise.all([store.readDocument(partitionKey, ids[0]), store.readDocument(partitionKey, ids[0])]);
    expect(one?.document).toEqual(two?.document);
    expect(one?.document).not.toBe(two?.document);
  });

  it("fall back to point reads when the batch fails, so each caller gets a point read's answer", async () => {
    await admin.addFault({ target: "cosmos", kind: "status", statusCode: 500, count: 1, match: { documentId: ids[2], operation: "read" } });
    await admin.resetStatistics();
    const read = await Promise.all(ids.slice(0, 3).map((id) => store.readDocument(partitionKey, id)));
    expect(read.map((stored) => stored?.document.id)).toEqual(ids.slice(0, 3));
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.responsesByStatus["500"]).toBe(1);
    expect(statistics.cosmos.documentReadsByDocument).toEqual(Object.fromEntries(ids.slice(0, 3).map((id) => [id, 2])));
  });

  it("reject with the point read's status code when the document keeps failing", async () => {
    await admin.addFault({
      target: "cosmos",
      kind: "status",
      statusCode: 403,
      errorCode: "Forbidden",
      count: 2,
      match: { documentId: ids[3], operation: "read" },
    });
    const [ok, failed] = await Promise.allSettled([store.readDocument(partitionKey, ids[0]), store.readDocument(partitionKey, ids[3])]);
    expect(ok.status === "fulfilled" ? ok.value?.document.id : ok.reason).toBe(ids[0]);
    expect(failed.status).toBe("rejected");
    expect((failed as PromiseRejectedResult).reason).toMatchObject({ code: 403 });
  });

  it("stay a point read when alone, and one batch per partition", async () => {
    const otherSubscription = randomUUID();
    const [other] = await createDocuments(1, otherSubscription);
    const otherPartition = otherSubscription.toLowerCase();
    await admin.resetStatistics();
    const read = await Promise.all([store.readDocument(otherPartition, other), ...ids.slice(0, 2).map((id) => store.readDocument(partitionKey, id))]);
    expect(read.every((stored) => stored !== undefined)).toBe(true);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.documentReads).toBe(3);
  });
});

describe("reads of a partition with a request in flight", () => {
  it("wait for its answer and then go together as one batch; another partition does not wait", async () => {
    const otherSubscription = randomUUID();
    const [other] = await createDocuments(1, otherSubscription);
    await admin.addFault({ target: "cosmos", kind: "delay", delayInMs: 400, count: 1, match: { documentId: ids[0], operation: "read" } });
    await admin.resetStatistics();
    const first = store.readDocument(partitionKey, ids[0]);
    // The first read is out (a point read, held 400 ms by the sandbox) before these arrive.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const later = ids.slice(1, 4).map((id) => store.readDocument(partitionKey, id));
    const elsewhere = await store.readDocument(otherSubscription.toLowerCase(), other);
    const whileOut = await admin.getStatistics();
    const read = await Promise.all([first, ...later]);
    const statistics = await admin.getStatistics();

    expect(elsewhere?.document.id).toBe(other);
    // While the first read was out: it and the other partition's read had gone, the three waited.
    expect(whileOut.cosmos.documentReadsByDocument).toEqual({ [ids[0]]: 1, [other]: 1 });
    expect(read.map((stored) => stored?.document.id)).toEqual(ids.slice(0, 4));
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.documentReads).toBe(5);
    expect(statistics.cosmos.documentReadsByDocument).toEqual(Object.fromEntries([...ids.slice(0, 4), other].map((id) => [id, 1])));
  });
});

describe("the sandbox's Cosmos", () => {
  it("runs a query that names a partition key over that partition only", async () => {
    const [elsewhere] = await createDocuments(1, randomUUID());
    const { resources } = await container.items
      .query<{ id: string }>(
        { query: "SELECT c.id FROM c WHERE ARRAY_CONTAINS(@ids, c.id)", parameters: [{ name: "@ids", value: [ids[0], elsewhere] }] },
        { partitionKey },
      )
      .fetchAll();
    expect(resources.map((resource) => resource.id)).toEqual([ids[0]]);
    const everywhere = await container.items
      .query<{ id: string }>({ query: "SELECT c.id FROM c WHERE ARRAY_CONTAINS(@ids, c.id)", parameters: [{ name: "@ids", value: [ids[0], elsewhere] }] })
      .fetchAll();
    expect(everywhere.resources.map((resource) => resource.id).sort()).toEqual([ids[0], elsewhere].sort());
  });
});
