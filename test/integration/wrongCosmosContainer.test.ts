/**
 * Issue 28 item 2: settings that point at a Cosmos database or container that does not exist.
 * Real Cosmos answers every request below a missing database or container with 404 and substatus
 * 1003 ("Owner resource does not exist"), and the sandbox does the same. The hook must fail the
 * operation at once, naming the settings, and write nothing; only a 404 for a missing document in
 * an existing container means the document is absent. Real @azure/cosmos, @azure/arm-msi and
 * @azure/identity clients against the sandbox; every assertion reads Cosmos back.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CosmosClient } from "@azure/cosmos";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { isCosmosConfigurationError } from "../../resources/core/errors";
import { createDocumentStore } from "../../resources/cosmos/documentStore";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  buildSubscriptionDocument,
  documentIdFor,
  serviceProviderClusterResourceIdFor,
} from "../../sandbox/documentBuilders";
import { createSandboxCosmosClient } from "../../sandbox/sandboxClients";

const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
const wrongDatabase = `${connection.database}-typo`;
const wrongContainer = `${connection.container}-typo`;
let client: CosmosClient;
let directory: string;
let caFile: string;

interface SeededCluster {
  readonly clusterResourceId: string;
  readonly partitionKey: string;
  readonly documentId: string;
  readonly clusterDocumentId: string;
  readonly operators: Record<string, string>;
}

/** A cluster in its own subscription: two identities in ARM, its two documents in Cosmos. */
async function seedCluster(): Promise<SeededCluster> {
  const subscriptionId = randomUUID();
  const clusterResourceId = `/subscriptions/${subscriptionId}/resourceGroups/rg-settings/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${subscriptionId.slice(0, 6)}`;
  const operators: Record<string, string> = {};
  for (const name of ["disk-csi-driver", "file-csi-driver"]) {
    const identityId = `/subscriptions/${subscriptionId}/resourceGroups/rg-settings/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;
    operators[name] = identityId;
    await admin.createIdentity(identityId);
  }
  const clusterDocument = buildClusterDocument({ clusterResourceId, dataPlaneOperators: operators });
  const serviceProviderClusterDocument = buildServiceProviderClusterDocument({ clusterResourceId });
  // The subscription's own document, which the resource provider keeps beside its clusters'.
  const subscriptionDocument = buildSubscriptionDocument(subscriptionId);
  await admin.putDocument(subscriptionId, subscriptionDocument.id as string, subscriptionDocument);
  await admin.putDocument(subscriptionId, clusterDocument.id as string, clusterDocument);
  await admin.putDocument(subscriptionId, serviceProviderClusterDocument.id as string, serviceProviderClusterDocument);
  return {
    clusterResourceId,
    partitionKey: subscriptionId,
    documentId: documentIdFor(serviceProviderClusterResourceIdFor(clusterResourceId)),
    clusterDocumentId: clusterDocument.id as string,
    operators,
  };
}

/** A provider over the sandbox; `settings` replaces some of its config (e.g. a database typo). */
function providerWith(settings: Record<string, string> = {}): ReturnType<typeof createManagedIdentityStatusProvider> {
  const config: Record<string, string> = {
    cosmosEndpoint: connection.endpoints.cosmos,
    cosmosDatabase: connection.database,
    cosmosContainer: connection.container,
    cosmosKey: connection.cosmosKey,
    armEndpoint: connection.endpoints.arm,
    tlsCaFile: caFile,
    // Long: a failure that waited for the document would show in the elapsed time.
    documentWaitSeconds: "30",
    ...settings,
  };
  return createManagedIdentityStatusProvider({ config: { get: (key) => config[key] } });
}

/** Records the cluster's status with the right settings, as a `pulumi up` does; the outputs state would hold. */
async function recorded(cluster: SeededCluster): Promise<ProviderOutputs> {
  const { outs } = await providerWith().create({ clusterResourceId: cluster.clusterResourceId });
  if (outs === undefined) throw new Error("create returned no outputs");
  return outs;
}

/** Both documents of the cluster as stored, read back through the admin API (etags included). */
async function storedDocuments(cluster: SeededCluster): Promise<unknown[]> {
  return [await admin.readDocument(cluster.partitionKey, cluster.documentId), await admin.readDocument(cluster.partitionKey, cluster.clusterDocumentId)];
}

/** Write requests the sandbox counted for the cluster's documents, refused ones included. */
async function writeRequests(cluster: SeededCluster): Promise<number> {
  const byDocument = (await admin.getStatistics()).cosmos.documentWritesByDocument;
  return (byDocument[cluster.documentId] ?? 0) + (byDocument[cluster.clusterDocumentId] ?? 0);
}

/** Runs `operation`, which must fail at once with a configuration error naming `setting` and its value. */
async function expectSettingsFailure(operation: () => Promise<unknown>, setting: string, value: string): Promise<Error> {
  const started = Date.now();
  const error = await operation().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(Date.now() - started, "the operation waited for the document instead of failing at once").toBeLessThan(10_000);
  return expectSettingsError(error, setting, value);
}

/** `error` is a configuration error naming `setting`, its value and the endpoint setting, and no key. */
function expectSettingsError(error: unknown, setting: string, value: string): Error {
  expect(error).toBeInstanceOf(Error);
  const failure = error as Error;
  expect(isCosmosConfigurationError(failure), failure.message).toBe(true);
  expect(failure.message).toContain(`'aro-hcp-identity-status:${setting}'`);
  expect(failure.message).toContain(value);
  expect(failure.message).toContain("'aro-hcp-identity-status:cosmosEndpoint'");
  expect(failure.message).toContain("(NotFound, HTTP 404");
  expect(failure.message, "the Cosmos key is in the message").not.toContain(connection.cosmosKey);
  return failure;
}

beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), "wrong-cosmos-container-"));
  caFile = join(directory, "ca.pem");
  writeFileSync(caFile, connection.caBundlePem);
  // The managed-identity credential reads these at construction, inside the first provider call.
  process.env.IDENTITY_ENDPOINT = connection.endpoints.identity;
  process.env.IDENTITY_HEADER = connection.identityHeader;
  client = createSandboxCosmosClient(connection);
});

afterAll(() => {
  client.dispose();
  rmSync(directory, { recursive: true, force: true });
});

describe("the sandbox's Cosmos server, through the real @azure/cosmos client", () => {
  it("answers a read and a patch below a missing database or container with 404 and substatus 1003, and a missing document with plain 404", async () => {
    const cluster = await seedCluster();
    const before = await storedDocuments(cluster);
    for (const [database, container] of [
      [wrongDatabase, connection.container],
      [connection.database, wrongContainer],
    ]) {
      const item = client.database(database).container(container).item(cluster.documentId, cluster.partitionKey);
      const read = await item.read();
      expect(read.statusCode).toBe(404);
      expect(read.substatus).toBe(1003);
      const patch = await item.patch([{ op: "set", path: "/properties/touched", value: true }]).then(
        () => undefined,
        (error: unknown) => error as { code?: unknown; substatus?: unknown; body?: { code?: unknown; message?: unknown } },
      );
      expect(patch?.code).toBe(404);
      expect(patch?.substatus).toBe(1003);
      expect(patch?.body?.code).toBe("NotFound");
      expect(String(patch?.body?.message)).toContain("Owner resource does not exist");
    }
    const missing = await client.database(connection.database).container(connection.container).item(randomUUID(), cluster.partitionKey).read();
    expect(missing.statusCode).toBe(404);
    expect(missing.substatus ?? 0).toBe(0);
    expect(await storedDocuments(cluster)).toEqual(before);
  });
});

describe("the document store (resources/cosmos/documentStore.ts) with the real @azure/cosmos client", () => {
  const storeFor = (database: string, container: string) =>
    createDocumentStore(client.database(database).container(container), { endpoint: connection.endpoints.cosmos });

  it.each([
    ["cosmosDatabase", wrongDatabase, connection.container],
    ["cosmosContainer", connection.database, wrongContainer],
  ])("fails a point read, a batched read, a bulk read and a patch naming %s, and writes nothing", async (setting, database, container) => {
    const [first, second] = [await seedCluster(), await seedCluster()];
    const before = [await storedDocuments(first), await storedDocuments(second)];
    const store = storeFor(database, container);
    const value = setting === "cosmosDatabase" ? database : container;
    // A lone read is a point read.
    await expectSettingsFailure(() => store.readDocument(first.partitionKey, first.documentId), setting, value);
    // Two reads of one partition go as a transactional batch, of two partitions as a bulk request
    // (whose SDK first reads the container's partition key ranges, answered 1003 too); each failed
    // request is read again with point reads, which name the settings.
    for (const [kind, reads] of [
      [
        "batch",
        [
          [first.partitionKey, first.documentId],
          [first.partitionKey, first.clusterDocumentId],
        ],
      ],
      [
        "bulk",
        [
          [first.partitionKey, first.documentId],
          [second.partitionKey, second.documentId],
        ],
      ],
    ] as const) {
      await admin.resetStatistics();
      const outcomes = await Promise.allSettled(reads.map(([partitionKey, id]) => store.readDocument(partitionKey, id)));
      for (const outcome of outcomes) {
        expect(outcome.status).toBe("rejected");
        expectSettingsError(outcome.status === "rejected" ? outcome.reason : undefined, setting, value);
      }
      const statistics = (await admin.getStatistics()).cosmos;
      if (kind === "batch") expect(statistics.documentReadBatches, "the batch request").toBe(1);
      expect(statistics.responsesByStatus["404"], `the ${kind} request or its partition key ranges, then two point reads`).toBe(3);
    }
    await expectSettingsFailure(
      () => store.patchDocument(first.partitionKey, first.documentId, [{ op: "set", path: "/properties/touched", value: true }], '"any-etag"'),
      setting,
      value,
    );
    expect([await storedDocuments(first), await storedDocuments(second)]).toEqual(before);
  });

  it("answers undefined for a missing document in the right container, alone, in a batch and in a bulk request", async () => {
    const cluster = await seedCluster();
    const store = storeFor(connection.database, connection.container);
    expect(await store.readDocument(cluster.partitionKey, randomUUID())).toBeUndefined();
    const [missing, present] = await Promise.all([
      store.readDocument(cluster.partitionKey, randomUUID()),
      store.readDocument(cluster.partitionKey, cluster.documentId),
    ]);
    expect(missing).toBeUndefined();
    expect(present?.document.id).toBe(cluster.documentId);
    const [elsewhere, found] = await Promise.all([
      store.readDocument(randomUUID(), randomUUID()),
      store.readDocument(cluster.partitionKey, cluster.documentId),
    ]);
    expect(elsewhere).toBeUndefined();
    expect(found?.document.id).toBe(cluster.documentId);
  });
});

describe("the provider with a database or container typo", () => {
  it.each([
    ["cosmosDatabase", { cosmosDatabase: wrongDatabase }, wrongDatabase],
    ["cosmosContainer", { cosmosContainer: wrongContainer }, wrongContainer],
  ])(
    "fails refresh, diff, create and update naming %s, a delete writes nothing; state keeps the resource and Cosmos is unchanged",
    async (setting, override, value) => {
      const cluster = await seedCluster();
      // Recorded with the right settings first, as after a `pulumi up`.
      const outputs = await recorded(cluster);
      const before = await storedDocuments(cluster);
      const writesBefore = await writeRequests(cluster);
      const wrong = providerWith(override);
      const inputs = { clusterResourceId: cluster.clusterResourceId };

      // Refresh: an error, never `{ id: "" }` (which makes the engine drop the resource from state).
      const refresh = await expectSettingsFailure(() => wrong.read!(cluster.documentId, outputs), setting, value);
      expect(refresh.message).toMatch(new RegExp(`\\. \\[reading the ServiceProviderCluster document of cluster \\S+ \\(${cluster.documentId}\\)\\]$`));
      // Diff in document mode reads the cluster document.
      await expectSettingsFailure(() => wrong.diff!(cluster.documentId, outputs, inputs), setting, value);
      await expectSettingsFailure(() => wrong.create(inputs), setting, value);
      await expectSettingsFailure(() => wrong.update!(cluster.documentId, outputs, inputs), setting, value);
      // Delete: relinquishes, reading and writing nothing, whatever the settings.
      await expect(wrong.delete!(cluster.documentId, outputs)).resolves.toBeUndefined();

      expect(await storedDocuments(cluster)).toEqual(before);
      expect(await writeRequests(cluster), "write requests with the wrong settings").toBe(writesBefore);
      // The right settings still see the document: the record was never gone.
      const refreshed = await providerWith().read!(cluster.documentId, outputs);
      expect(refreshed.id).toBe(cluster.documentId);
    },
  );

  it("answers an empty id once the cluster's documents are deleted from the right container, and keeps a resource whose cluster document is still there", async () => {
    const cluster = await seedCluster();
    const outputs = await recorded(cluster);
    expect(await admin.deleteDocument(cluster.partitionKey, cluster.documentId)).toBe(true);
    const kept = await providerWith().read!(cluster.documentId, outputs);
    expect(kept.id).toBe(cluster.documentId);
    expect(kept.props?.drift).toEqual([
      expect.stringContaining(`does not exist, but the cluster's HCPOpenShiftCluster document ${cluster.clusterDocumentId} does`),
    ]);
    expect(await admin.deleteDocument(cluster.partitionKey, cluster.clusterDocumentId)).toBe(true);
    const refreshed = await providerWith().read!(cluster.documentId, outputs);
    expect(refreshed.id).toBe("");
  });
});

describe("the provider over another container that exists (one an ARO-HCP database holds beside Resources)", () => {
  const otherContainer = "Billing";

  beforeAll(async () => {
    await client.database(connection.database).containers.createIfNotExists({ id: otherContainer, partitionKey: { paths: ["/partitionKey"] } });
  });

  it("fails refresh naming the settings instead of reading the absent documents as deleted (a delete writes nothing); state keeps the resource and Cosmos is unchanged", async () => {
    const cluster = await seedCluster();
    const outputs = await recorded(cluster);
    const before = await storedDocuments(cluster);
    const writesBefore = await writeRequests(cluster);
    const wrong = providerWith({ cosmosContainer: otherContainer });

    const refresh = await expectSettingsFailure(() => wrong.read!(cluster.documentId, outputs), "cosmosContainer", otherContainer);
    expect(refresh.message).toMatch(/^none of the documents of cluster \S+ is in .* \(NotFound, HTTP 404\): neither the ServiceProviderCluster document /);
    expect(refresh.message).toContain(`container '${otherContainer}' of database '${connection.database}'`);
    await expect(wrong.delete!(cluster.documentId, outputs)).resolves.toBeUndefined();

    expect(await storedDocuments(cluster)).toEqual(before);
    expect(await writeRequests(cluster), "write requests with the wrong settings").toBe(writesBefore);
    expect((await providerWith().read!(cluster.documentId, outputs)).id).toBe(cluster.documentId);
  });
});
