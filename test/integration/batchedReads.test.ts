import { randomUUID } from "node:crypto";
import type { Container } from "@azure/cosmos";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { buildServiceProviderClusterDocument, clusterResourceIdFor } from "../../sandbox/documentBuilders";
import { createSandboxCosmosClient } from "../../sandbox/sandboxClients";
import type { DocumentStore } from "../../resources/cosmos/documentStore";
import { createDocumentStore, maxReadRequestsInFlight, slowReadRequestMs } from "../../resources/cosmos/documentStore";

// Reads that wait at the same time go to Cosmos as one request of Read operations: a transactional
// batch within one partition, a bulk request across partitions (resources/cosmos/documentStore.ts).
// These tests hold it to what point reads would have returned, through the real SDK against the
// sandbox.
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
  // The SDK reads the container's partition key ranges before its first bulk request; read them
  // now, so that the request counts below are the reads' own.
  await container.items.bulk([
    { operationType: "Read", id: randomUUID(), partitionKey: randomUUID() },
    { operationType: "Read", id: randomUUID(), partitionKey: randomUUID() },
  ]);
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

  it("stay a point read when alone", async () => {
    await admin.resetStatistics();
    const read = await store.readDocument(partitionKey, ids[1]);
    expect(read?.document.id).toBe(ids[1]);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(0);
    expect(statistics.cosmos.documentReads).toBe(1);
  });
});

describe("reads of different partitions made at the same time", () => {
  it("go as one bulk request and return each document with the etag a point read returns", async () => {
    const subscriptions = [randomUUID(), randomUUID(), randomUUID()];
    const elsewhere = await Promise.all(
      subscriptions.map(async (subscription) => ({ partition: subscription.toLowerCase(), id: (await createDocuments(1, subscription))[0] })),
    );
    const wanted = [...elsewhere, { partition: partitionKey, id: ids[0] }, { partition: partitionKey, id: ids[1] }];
    await admin.resetStatistics();
    const read = await Promise.all(wanted.map(({ partition, id }) => store.readDocument(partition, id)));
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.requests).toBe(1);
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.documentReadsByDocument).toEqual(Object.fromEntries(wanted.map(({ id }) => [id, 1])));
    for (const [index, { partition, id }] of wanted.entries()) {
      const point = await container.item(id, partition).read<Record<string, unknown>>();
      expect(read[index]?.document).toEqual(point.resource);
      expect(read[index]?.etag).toBe(point.etag);
    }
  });

  it("answer undefined for a missing document, and a document id in two partitions is two documents", async () => {
    const otherSubscription = randomUUID();
    const [other] = await createDocuments(1, otherSubscription);
    await admin.resetStatistics();
    const read = await Promise.all([
      store.readDocument(otherSubscription.toLowerCase(), other),
      store.readDocument(randomUUID(), randomUUID()),
      // The same id under another partition key is not the same document: Cosmos has none there.
      store.readDocument(partitionKey, other),
      store.readDocument(partitionKey, ids[2]),
    ]);
    expect(read.map((stored) => stored?.document.id)).toEqual([other, undefined, undefined, ids[2]]);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.requests).toBe(1);
  });

  it("fall back to point reads when the bulk request fails, so each caller gets a point read's answer", async () => {
    const otherSubscription = randomUUID();
    const [other] = await createDocuments(1, otherSubscription);
    await admin.addFault({ target: "cosmos", kind: "status", statusCode: 503, count: 1, match: { documentId: other, operation: "read" } });
    await admin.resetStatistics();
    const read = await Promise.all([store.readDocument(otherSubscription.toLowerCase(), other), store.readDocument(partitionKey, ids[4])]);
    expect(read.map((stored) => stored?.document.id)).toEqual([other, ids[4]]);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.responsesByStatus["503"]).toBe(1);
    expect(statistics.cosmos.documentReadsByDocument).toEqual({ [other]: 2, [ids[4]]: 2 });
  });
});

describe("reads while the store has its read requests in flight", () => {
  it("wait for one to be answered and then go together as one request", async () => {
    expect(maxReadRequestsInFlight).toBeGreaterThan(0);
    const otherSubscription = randomUUID();
    const [other] = await createDocuments(1, otherSubscription);
    const held = ids.slice(0, maxReadRequestsInFlight);
    for (const id of held) {
      await admin.addFault({ target: "cosmos", kind: "delay", delayInMs: 400, count: 1, match: { documentId: id, operation: "read" } });
    }
    await admin.resetStatistics();
    // Each held read goes out alone (a point read, held 400 ms by the sandbox) before the next is asked.
    const first: Array<Promise<unknown>> = [];
    for (const id of held) {
      first.push(store.readDocument(partitionKey, id));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const later = [
      store.readDocument(otherSubscription.toLowerCase(), other),
      ...ids.slice(maxReadRequestsInFlight).map((id) => store.readDocument(partitionKey, id)),
    ];
    await new Promise((resolve) => setTimeout(resolve, 100));
    const whileOut = await admin.getStatistics();
    await Promise.all(first);
    const read = await Promise.all(later);
    const statistics = await admin.getStatistics();

    // While the held reads were out, nothing else had gone.
    expect(whileOut.cosmos.documentReadsByDocument).toEqual(Object.fromEntries(held.map((id) => [id, 1])));
    expect(read.map((stored) => stored?.document.id)).toEqual([other, ...ids.slice(maxReadRequestsInFlight)]);
    // Then everything that waited went as one request.
    expect(statistics.cosmos.requests).toBe(maxReadRequestsInFlight + 1);
    expect(statistics.cosmos.documentReadBatches).toBe(1);
    expect(statistics.cosmos.documentReadsByDocument).toEqual(Object.fromEntries([...ids, other].map((id) => [id, 1])));
  });
});

describe("reads while the store's read requests are slow (the SDK retrying a throttled partition)", () => {
  it("do not wait for them: a request out longer than slowReadRequestMs stops counting", async () => {
    const otherSubscription = randomUUID();
    const [other] = await createDocuments(1, otherSubscription);
    const held = ids.slice(0, maxReadRequestsInFlight);
    const holdInMs = slowReadRequestMs * 3;
    for (const id of held) {
      await admin.addFault({ target: "cosmos", kind: "delay", delayInMs: holdInMs, count: 1, match: { documentId: id, operation: "read" } });
    }
    await admin.resetStatistics();
    const first: Array<Promise<unknown>> = [];
    for (const id of held) {
      first.push(store.readDocument(partitionKey, id));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const later = store.readDocument(otherSubscription.toLowerCase(), other);
    const beforeSlow = await admin.getStatistics();
    // The held requests pass slowReadRequestMs; the later read goes and is answered while they are still out.
    const read = await later;
    const whileHeld = await admin.getStatistics();
    await Promise.all(first);

    expect(read?.document.id).toBe(other);
    expect(beforeSlow.cosmos.documentReadsByDocument).toEqual(Object.fromEntries(held.map((id) => [id, 1])));
    expect(whileHeld.cosmos.documentReadsByDocument).toEqual({ ...Object.fromEntries(held.map((id) => [id, 1])), [other]: 1 });
    // Still out: the sandbox holds them for three times slowReadRequestMs.
    expect(whileHeld.cosmos.inFlight).toBe(maxReadRequestsInFlight);
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
