import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import type { ManagedServiceIdentityClient } from "@azure/arm-msi";
import { RestError } from "@azure/core-rest-pipeline";
import type { Container, CosmosClient, ItemDefinition } from "@azure/cosmos";
import { ManagedIdentityCredential } from "@azure/identity";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { type SandboxEndpoints, startSandbox } from "../../sandbox/sandbox";
import { AdminApiError, SandboxAdminClient } from "../../sandbox/adminClient";
import { buildServiceProviderClusterDocument, clusterResourceIdFor, documentIdFor } from "../../sandbox/documentBuilders";
import { identityResourceId } from "../../sandbox/identityStore";
import { createSandboxCosmosClient, createSandboxManagedServiceIdentityClient, useSandboxManagedIdentityEnvironment } from "../../sandbox/sandboxClients";

const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
const subscriptionId = randomUUID();

function newIdentityId(): string {
  return identityResourceId(subscriptionId, "sandbox-test-rg", `identity-${randomUUID().slice(0, 8)}`);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

async function connectionFails(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(true);
    });
  });
}

afterEach(async () => {
  await admin.clearFaults();
});

describe("sandbox servers", () => {
  it("listen on 127.0.0.1 only", async () => {
    const endpoints: Readonly<Record<keyof SandboxEndpoints, string>> = connection.endpoints;
    const ports = Object.values(endpoints).map((endpoint) => {
      const url = new URL(endpoint);
      expect(url.hostname).toBe("127.0.0.1");
      return Number(url.port);
    });
    const otherAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address !== undefined && !address.internal && address.family === "IPv4")
      .map((address) => address?.address ?? "");
    for (const port of ports) {
      expect(await connectionFails("127.0.0.1", port)).toBe(false);
      expect(await connectionFails("::1", port)).toBe(true);
      for (const address of otherAddresses) {
        expect(await connectionFails(address, port)).toBe(true);
      }
    }
  });

  it("the admin API rejects a missing or wrong token", async () => {
    const missing = await fetch(`${connection.endpoints.admin}/health`);
    expect(missing.status).toBe(401);
    const wrong = await fetch(`${connection.endpoints.admin}/identities`, { headers: { authorization: "Bearer not-the-token" } });
    expect(wrong.status).toBe(401);
    const wrongClient = new SandboxAdminClient(connection.endpoints.admin, "wrong");
    const error = await rejection(wrongClient.listIdentities());
    expect(error).toBeInstanceOf(AdminApiError);
    expect((error as AdminApiError).statusCode).toBe(401);
    expect(await admin.health()).toEqual({ status: "ok" });
  });

  it("the token endpoint checks x-identity-header", async () => {
    const url = `${connection.endpoints.identity}?api-version=2019-08-01&resource=https://management.azure.com`;
    expect((await fetch(url, { headers: { "x-identity-header": "wrong" } })).status).toBe(401);
    const response = await fetch(url, { headers: { "x-identity-header": connection.identityHeader } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, string>;
    expect(body.token_type).toBe("Bearer");
    expect(body.resource).toBe("https://management.azure.com");
    expect(Number(body.expires_on)).toBeGreaterThan(Date.now() / 1000 + 3000);
  });
});

describe("fake ARM with the real arm-msi client and ManagedIdentityCredential", () => {
  let client: ManagedServiceIdentityClient;

  beforeAll(() => {
    useSandboxManagedIdentityEnvironment(connection);
    client = createSandboxManagedServiceIdentityClient(connection, new ManagedIdentityCredential(), subscriptionId);
  });

  it("gets an identity, matching the name case-insensitively and returning the stored casing", async () => {
    const id = newIdentityId();
    const clientId = randomUUID();
    const principalId = randomUUID();
    await admin.createIdentity(id, { clientId, principalId });
    const name = id.split("/").pop() ?? "";
    const identity = await client.userAssignedIdentities.get("SANDBOX-TEST-RG", name.toUpperCase());
    expect(identity).toMatchObject({ id, name, clientId, principalId, location: "eastus", type: "Microsoft.ManagedIdentity/userAssignedIdentities" });
    expect(identity.tenantId).toMatch(/^[0-9a-f-]{36}$/);
    const statistics = await admin.getStatistics();
    expect(statistics.arm.requestsByIdentity[id.toLowerCase()]).toBe(1);
    expect(statistics.token.tokensIssued).toBeGreaterThanOrEqual(1);
  });

  it("answers a missing identity with a ResourceNotFound RestError", async () => {
    const error = await rejection(client.userAssignedIdentities.get("sandbox-test-rg", "does-not-exist"));
    expect(error).toBeInstanceOf(RestError);
    expect((error as RestError).statusCode).toBe(404);
    expect((error as RestError).code).toBe("ResourceNotFound");
    expect((error as RestError).message).toContain("userAssignedIdentities/does-not-exist");
  });

  it("returns new values after a rotation", async () => {
    const id = newIdentityId();
    const before = await admin.createIdentity(id);
    const rotated = await admin.rotateIdentity(id);
    const identity = await client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? "");
    expect(identity.clientId).toBe(rotated.clientId);
    expect(identity.principalId).toBe(rotated.principalId);
    expect(identity.clientId).not.toBe(before.clientId);
    expect(identity.principalId).not.toBe(before.principalId);
  });

  it("rejects a token it did not issue with 401 InvalidAuthenticationToken", async () => {
    const forged = { getToken: () => Promise.resolve({ token: "forged-token", expiresOnTimestamp: Date.now() + 3_600_000 }) };
    const forgedClient = createSandboxManagedServiceIdentityClient(connection, forged, subscriptionId);
    const error = await rejection(forgedClient.userAssignedIdentities.get("sandbox-test-rg", "anything"));
    expect((error as RestError).statusCode).toBe(401);
    expect((error as RestError).code).toBe("InvalidAuthenticationToken");
  });

  it("lets the SDK retry a 429 with Retry-After, and counts it", async () => {
    const id = newIdentityId();
    const created = await admin.createIdentity(id);
    const before = await admin.getStatistics();
    await admin.addFault({ target: "arm", kind: "throttle", count: 2, retryAfterSeconds: 1, match: { resourceId: id } });
    const started = Date.now();
    const identity = await client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? "");
    expect(identity.clientId).toBe(created.clientId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    const after = await admin.getStatistics();
    expect(after.arm.requestsByIdentity[id.toLowerCase()]).toBe(3);
    expect((after.arm.responsesByStatus["429"] ?? 0) - (before.arm.responsesByStatus["429"] ?? 0)).toBe(2);
    expect(after.arm.retryAfterSecondsRequested - before.arm.retryAfterSecondsRequested).toBe(2);
    expect((await admin.listFaults())[0]).toMatchObject({ triggered: 2, remaining: 0 });
  });

  it("retries after a connection reset", async () => {
    const id = newIdentityId();
    const created = await admin.createIdentity(id);
    await admin.addFault({ target: "arm", kind: "connectionReset", match: { resourceId: id } });
    const identity = await client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? "");
    expect(identity.principalId).toBe(created.principalId);
  });

  it("measures concurrency with added latency", async () => {
    const ids = [newIdentityId(), newIdentityId(), newIdentityId(), newIdentityId()];
    await Promise.all(ids.map((id) => admin.createIdentity(id)));
    await admin.setLatency({ armMs: 100 });
    await admin.resetStatistics();
    try {
      const identities = await Promise.all(ids.map((id) => client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? "")));
      expect(identities.map((identity) => identity.id)).toEqual(ids);
    } finally {
      await admin.setLatency({ armMs: 0 });
    }
    const statistics = await admin.getStatistics();
    expect(statistics.arm.getRequests).toBe(4);
    expect(statistics.arm.maxInFlight).toBe(4);
    expect(statistics.arm.inFlight).toBe(0);
  });

  it("can answer without properties", async () => {
    const id = newIdentityId();
    await admin.createIdentity(id);
    await admin.addFault({ target: "arm", kind: "noProperties", match: { resourceId: id } });
    const identity = await client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? "");
    expect(identity.id).toBe(id);
    expect(identity.clientId).toBeUndefined();
    expect(identity.principalId).toBeUndefined();
  });
});

describe("Cosmos with the real CosmosClient", () => {
  let client: CosmosClient;
  let container: Container;
  const clusterResourceId = clusterResourceIdFor(subscriptionId, "sandbox-test-rg", `cluster-${randomUUID().slice(0, 8)}`);
  const document = buildServiceProviderClusterDocument({ clusterResourceId });
  const id = String(document.id);
  const partitionKey = subscriptionId.toLowerCase();

  beforeAll(async () => {
    client = createSandboxCosmosClient(connection);
    container = client.database(connection.database).container(connection.container);
    await container.items.create(document);
  });

  afterAll(() => {
    client.dispose();
  });

  it("stores the upstream layout and reads it back unchanged", async () => {
    expect(id).toBe(documentIdFor(`${clusterResourceId}/serviceProviderClusters/default`));
    const { resource } = await container.item(id, partitionKey).read<Record<string, unknown>>();
    expect(resource).toMatchObject(document);
    expect(await admin.readDocument(partitionKey, id)).toMatchObject(document);
  });

  it("rejects a wrong key with a clear 401", async () => {
    const wrongClient = createSandboxCosmosClient(connection, randomBytes(64).toString("base64"));
    const error = await rejection(wrongClient.database(connection.database).container(connection.container).item(id, partitionKey).read());
    wrongClient.dispose();
    expect((error as { code?: number }).code).toBe(401);
    expect((error as Error).message).toContain("The input authorization token can't serve the request");
  });

  it("accepts an Entra ID token from the sandbox token endpoint", async () => {
    useSandboxManagedIdentityEnvironment(connection);
    const { CosmosClient: Client } = await import("@azure/cosmos");
    const { Agent } = await import("node:https");
    const entraClient = new Client({
      endpoint: connection.endpoints.cosmos,
      aadCredentials: new ManagedIdentityCredential(),
      agent: new Agent({ ca: connection.cosmosCertificatePem, keepAlive: true }),
    });
    const { resource } = await entraClient.database(connection.database).container(connection.container).item(id, partitionKey).read<ItemDefinition>();
    entraClient.dispose();
    expect(resource?.id).toBe(id);
  });

  it("answers 412 to an If-Match replace after a race fault, and keeps the foreign edit", async () => {
    const { resource, etag } = await container.item(id, partitionKey).read<Record<string, unknown>>();
    await admin.addFault({ target: "cosmos", kind: "race", match: { documentId: id }, foreignEdit: { path: "/properties/futureField/raced", value: true } });
    const error = await rejection(
      container.item(id, partitionKey).replace({ ...resource, id }, { accessCondition: { type: "IfMatch", condition: etag ?? "" } }),
    );
    expect((error as { code?: number }).code).toBe(412);
    const stored = await admin.readDocument(partitionKey, id);
    expect(stored._etag).not.toBe(etag);
    expect((stored.properties as { futureField: Record<string, unknown> }).futureField.raced).toBe(true);
  });

  it("answers 404 to a write after a deleteBeforeWrite fault", async () => {
    const extra = buildServiceProviderClusterDocument({ clusterResourceId: clusterResourceIdFor(subscriptionId, "rg", `deleted-${randomUUID().slice(0, 8)}`) });
    const { resource, etag } = await container.items.create(extra);
    await admin.addFault({ target: "cosmos", kind: "deleteBeforeWrite", match: { documentId: String(extra.id) } });
    const error = await rejection(
      container
        .item(String(extra.id), partitionKey)
        .replace({ ...resource, id: String(extra.id) }, { accessCondition: { type: "IfMatch", condition: etag ?? "" } }),
    );
    expect((error as { code?: number }).code).toBe(404);
    expect((await container.item(String(extra.id), partitionKey).read()).statusCode).toBe(404);
  });

  it("applies a write, then drops the connection before its answer, after a resetAfterWrite fault; the SDK does not retry it", async () => {
    const extra = buildServiceProviderClusterDocument({ clusterResourceId: clusterResourceIdFor(subscriptionId, "rg", `reset-${randomUUID().slice(0, 8)}`) });
    const { resource, etag } = await container.items.create(extra);
    await admin.addFault({ target: "cosmos", kind: "resetAfterWrite", match: { documentId: String(extra.id) } });
    const writesBefore = (await admin.getStatistics()).cosmos.documentWritesByDocument[String(extra.id)] ?? 0;
    const error = await rejection(
      container
        .item(String(extra.id), partitionKey)
        .replace({ ...resource, id: String(extra.id), landed: true }, { accessCondition: { type: "IfMatch", condition: etag ?? "" } }),
    );
    expect((error as { code?: unknown }).code).toBe("ECONNRESET");
    expect((error as { statusCode?: unknown }).statusCode).toBeUndefined();
    const stored = await admin.readDocument(partitionKey, String(extra.id));
    expect(stored.landed).toBe(true);
    expect(stored._etag).not.toBe(etag);
    expect((await admin.getStatistics()).cosmos.documentWritesByDocument[String(extra.id)]).toBe(writesBefore + 1);
  });

  it("lets the SDK retry a 429 with x-ms-retry-after-ms", async () => {
    await admin.resetStatistics();
    await admin.addFault({ target: "cosmos", kind: "throttle", count: 1, retryAfterInMs: 20, match: { documentId: id, operation: "read" } });
    const { resource } = await container.item(id, partitionKey).read<ItemDefinition>();
    expect(resource?.id).toBe(id);
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.responsesByStatus["429"]).toBe(1);
    expect(statistics.cosmos.documentReadsByDocument[id]).toBe(2);
  });

  it("counts writes and records the ones without If-Match", async () => {
    const { resource, etag } = await container.item(id, partitionKey).read<Record<string, unknown>>();
    await admin.resetStatistics();
    const replaced = await container.item(id, partitionKey).replace({ ...resource, id }, { accessCondition: { type: "IfMatch", condition: etag ?? "" } });
    await container.items.upsert({ ...replaced.resource, id });
    const statistics = await admin.getStatistics();
    expect(statistics.cosmos.documentWritesByMethod).toEqual({ PUT: 1, POST: 1 });
    expect(statistics.cosmos.documentWritesByDocument).toEqual({ [id]: 2 });
    expect(statistics.cosmos.writesWithoutIfMatch).toEqual([{ method: "POST", path: `/dbs/${connection.database}/colls/${connection.container}/docs` }]);
    expect(statistics.cosmos.documentReads).toBe(0);
  });
});

describe("admin API", () => {
  it("seeds the demo fleet in the upstream layout", async () => {
    const fleet = await admin.seedDemoFleet();
    expect(fleet).toHaveLength(3);
    const shared = fleet.find((cluster) => cluster.clusterResourceId.endsWith("/demo-cluster-two"));
    const operatorIds = Object.values(shared?.dataPlaneOperators ?? {});
    expect(new Set(operatorIds.map((operatorId) => operatorId.toLowerCase())).size).toBe(operatorIds.length - 1);
    for (const cluster of fleet) {
      const serviceProviderCluster = await admin.readDocument(cluster.partitionKey, cluster.serviceProviderClusterDocumentId);
      expect(serviceProviderCluster.partitionKey).toBe(cluster.partitionKey);
      expect(serviceProviderCluster.id).toBe(documentIdFor(String(serviceProviderCluster.resourceID)));
      expect(serviceProviderCluster.resourceType).toBe("Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters");
      const serviceManagedIdentity = await admin.getIdentity(cluster.serviceManagedIdentity);
      expect(serviceManagedIdentity.id).toBe(cluster.serviceManagedIdentity);
    }
  });

  it("patches a document at a JSON pointer and changes its etag", async () => {
    const [cluster] = await admin.seedDemoFleet();
    const before = await admin.readDocument(cluster?.partitionKey ?? "", cluster?.serviceProviderClusterDocumentId ?? "");
    const after = await admin.patchDocument(before.partitionKey as string, before.id, "/properties/status/extra", { a: 1 });
    expect(after._etag).not.toBe(before._etag);
    expect((after.properties as { status: Record<string, unknown> }).status.extra).toEqual({ a: 1 });
  });

  it("rejects an invalid fault rule", async () => {
    const error = await rejection(admin.addFault({ target: "arm", kind: "race" }));
    expect((error as AdminApiError).statusCode).toBe(400);
  });

  // Last: MSAL caches the now-expired token for the rest of this worker process.
  it("rejects expired tokens with 401", async () => {
    useSandboxManagedIdentityEnvironment(connection);
    const client = createSandboxManagedServiceIdentityClient(connection, new ManagedIdentityCredential(), subscriptionId);
    const id = newIdentityId();
    await admin.createIdentity(id);
    await client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? "");
    expect(await admin.expireTokens()).toBeGreaterThan(0);
    const error = await rejection(client.userAssignedIdentities.get("sandbox-test-rg", id.split("/").pop() ?? ""));
    expect((error as RestError).statusCode).toBe(401);
  });
});

describe("the CA bundle file", () => {
  it("is removed at stop with the directories made for it, but not a directory that holds anything else", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "aro-hcp-sandbox-ca-"));
    try {
      const created = join(scratch, "made", "for-it");
      const sandbox = await startSandbox({ certificateDirectory: created });
      expect(sandbox.caBundlePath).toBe(join(created, "ca.pem"));
      expect(readFileSync(join(created, "ca.pem"), "utf8")).toBe(sandbox.caBundlePem);
      await sandbox.stop();
      expect(readdirSync(scratch)).toEqual([]);

      const shared = join(scratch, "shared");
      const second = await startSandbox({ certificateDirectory: shared });
      writeFileSync(join(shared, "endpoints.json"), "{}");
      // A third sandbox given the same directory: its bundle replaces the second's and outlives that one's stop.
      const third = await startSandbox({ certificateDirectory: shared });
      await second.stop();
      expect(readFileSync(join(shared, "ca.pem"), "utf8")).toBe(third.caBundlePem);
      await third.stop();
      expect(readdirSync(shared)).toEqual(["endpoints.json"]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
