/**
 * The credential cache of `clusterServiceManagedIdentity` mode (resources/azure/clusterCredentials.ts)
 * with a fake data plane and fake arm-msi clients: one data plane call per cluster until renew_after,
 * shared by concurrent passes, never handed to another cluster (not even one with the same SMI and
 * identity URL), failures named per cluster and not remembered. The same against the sandbox with the real SDK clients: test/integration/clusterCredentials.test.ts.
 */
import type { ManagedServiceIdentityClient } from "@azure/arm-msi";
import type { TokenCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import { ClusterCredentialError, createClusterCredentialSource, defaultMaxCredentials } from "../../../resources/azure/clusterCredentials";
import type { ServiceManagedIdentityCredential } from "../../../resources/azure/dataPlaneAnswer";
import { DataPlaneError } from "../../../resources/azure/dataPlaneAnswer";
import { parseResourceIdOfType } from "../../../resources/core/azureResourceId";
import type { ParsedResourceId } from "../../../resources/core/azureResourceId";

const clusterType = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters";
const identityType = "Microsoft.ManagedIdentity/userAssignedIdentities";
const t0 = Date.parse("2026-08-14T12:00:00Z");

function parsed(id: string, type: string): ParsedResourceId {
  const result = parseResourceIdOfType(id, type);
  if (!result.ok) throw new Error(result.reason);
  return result.resourceId;
}
const clusterIn = (subscription: string, name: string): ParsedResourceId =>
  parsed(`/subscriptions/${subscription}/resourceGroups/rg/providers/${clusterType}/${name}`, clusterType);
const identityIn = (subscription: string, name: string): ParsedResourceId =>
  parsed(`/subscriptions/${subscription}/resourceGroups/rg/providers/${identityType}/${name}`, identityType);
const subscriptionA = "11111111-1111-1111-1111-111111111111";
const subscriptionB = "22222222-2222-2222-2222-222222222222";
const smiOf = (subscription: string): string => `/subscriptions/${subscription}/resourceGroups/rg/providers/${identityType}/smi`;

interface FakeWorld {
  readonly calls: string[];
  readonly armClients: Array<{ subscriptionId: string; clientId: string }>;
  now: number;
  renewAfterInMs: number | undefined;
  fail: Error | undefined;
  readonly fetchCredential: (identityUrl: string, smi: string) => Promise<ServiceManagedIdentityCredential>;
}

/** A data plane that hands out a distinct client ID per SMI and counts its calls. */
function fakeWorld(): FakeWorld {
  const world: FakeWorld = {
    calls: [],
    armClients: [],
    now: t0,
    renewAfterInMs: 60_000,
    fail: undefined,
    async fetchCredential(identityUrl, smi) {
      world.calls.push(`${identityUrl} ${smi}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (world.fail !== undefined) throw world.fail;
      const answer: ServiceManagedIdentityCredential = {
        resourceId: smi,
        clientId: `client-of-${smi.split("/")[2]}`,
        tenantId: "tenant",
        authorityHost: "https://login.example",
        material: {
          pem: "",
          thumbprint: "T",
          validFrom: new Date(t0),
          validTo: new Date(t0 + 86_400_000),
        } as unknown as ServiceManagedIdentityCredential["material"],
        renewAfter: world.renewAfterInMs === undefined ? undefined : new Date(world.now + world.renewAfterInMs),
        notAfter: new Date(world.now + 86_400_000),
      };
      return answer;
    },
  };
  return world;
}

function sourceOf(world: FakeWorld, acquireArmToken: (credential: TokenCredential) => Promise<unknown> = () => Promise.resolve(undefined)) {
  return createClusterCredentialSource({
    fetchCredential: world.fetchCredential,
    // The credential is the answer's client ID, so a test can see whose credential read what.
    credentialFor: (answer) => ({ clientId: answer.clientId, getToken: () => Promise.resolve(null) }) as TokenCredential & { clientId: string },
    armClientFor: (credential, subscriptionId) => {
      const clientId = (credential as TokenCredential & { clientId: string }).clientId;
      world.armClients.push({ subscriptionId, clientId });
      return {
        userAssignedIdentities: {
          // As the SDK does: the raw answer goes to onResponse, the flattened identity is returned.
          get: (_group: string, name: string, options?: { onResponse?: (response: { bodyAsText: string }) => void }) => {
            const properties = { clientId: `${name} read by ${clientId}`, principalId: "p" };
            options?.onResponse?.({ bodyAsText: JSON.stringify({ name, properties }) });
            return Promise.resolve(properties);
          },
        },
      } as unknown as ManagedServiceIdentityClient;
    },
    acquireArmToken,
    now: () => world.now,
  });
}

const signal = { abortSignal: AbortSignal.timeout(10_000) };
const read = async (
  reader: { getUserAssignedIdentity: (id: ParsedResourceId, options: { abortSignal: AbortSignal }) => Promise<unknown> },
  id: ParsedResourceId,
) => reader.getUserAssignedIdentity(id, { abortSignal: AbortSignal.timeout(10_000) });

describe("cluster credentials", () => {
  it("asks the data plane once per SMI until renew_after, then again", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a?tid=x" };
    await source.readerFor(request, signal);
    world.now += 59_000;
    await source.readerFor(request, signal);
    expect(world.calls).toHaveLength(1);
    world.now += 1_000;
    await source.readerFor(request, signal);
    expect(world.calls).toHaveLength(2);
  });

  it("renews five minutes before not_after when the answer gives no renew_after", async () => {
    const world = fakeWorld();
    world.renewAfterInMs = undefined;
    const source = sourceOf(world);
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    await source.readerFor(request, signal);
    world.now += 86_400_000 - 5 * 60_000 - 1;
    await source.readerFor(request, signal);
    expect(world.calls).toHaveLength(1);
    world.now += 1;
    await source.readerFor(request, signal);
    expect(world.calls).toHaveLength(2);
  });

  it("does not hold a first-party failure that is its bundle file's: the next cluster reads the file again", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const unreadable = Object.defineProperty(new Error("the file does not exist"), "certificateFileProblem", { value: true });
    world.fail = new DataPlaneError("the first-party credential could not get a token", { firstParty: true, cause: unreadable });
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    await expect(source.readerFor(request, signal)).rejects.toMatchObject({ firstParty: true });
    world.fail = undefined;
    await source.readerFor(request, signal);
    expect(world.calls).toHaveLength(2);
  });

  it("asks the SMI's ARM token while building the reader, and a failure there does not fail the reader", async () => {
    const world = fakeWorld();
    const asked: string[] = [];
    const source = sourceOf(world, (credential) => {
      asked.push((credential as TokenCredential & { clientId: string }).clientId);
      return Promise.reject(new Error("Entra ID is down"));
    });
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    const { reader } = await source.readerFor(request, signal);
    expect(asked).toEqual([`client-of-${subscriptionA}`]);
    expect(await read(reader, identityIn(subscriptionA, "x"))).toMatchObject({ clientId: `x read by client-of-${subscriptionA}` });
  });

  it("keeps the credentials of the last defaultMaxCredentials clusters only, and an evicted cluster's reader still reads", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const subscriptionOf = (index: number): string => `${index.toString(16).padStart(8, "0")}-1111-1111-1111-111111111111`;
    const requestOf = (index: number) => ({
      cluster: clusterIn(subscriptionOf(index), `c${index}`),
      serviceManagedIdentity: smiOf(subscriptionOf(index)),
      identityUrl: `https://dp.example/c${index}`,
    });
    const first = await source.readerFor(requestOf(0), signal);
    for (let index = 1; index < defaultMaxCredentials; index += 1) await source.readerFor(requestOf(index), signal);
    await source.readerFor(requestOf(0), signal);
    expect(world.calls).toHaveLength(defaultMaxCredentials);
    // One cluster more evicts the oldest: the next pass of cluster 0 asks the data plane again.
    await source.readerFor(requestOf(defaultMaxCredentials), signal);
    await source.readerFor(requestOf(0), signal);
    expect(world.calls).toHaveLength(defaultMaxCredentials + 2);
    expect(await read(first.reader, identityIn(subscriptionOf(0), "x"))).toMatchObject({ clientId: `x read by client-of-${subscriptionOf(0)}` });
  });

  it("lets concurrent passes of one cluster share one data plane call", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    const readers = await Promise.all([1, 2, 3, 4].map(() => source.readerFor(request, signal)));
    expect(world.calls).toHaveLength(1);
    expect(new Set(readers.map((reader) => reader.reader)).size).toBe(1);
  });

  it("never hands one cluster's credential to another: each reads with its own SMI, in its own subscription", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const a = await source.readerFor(
      { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" },
      signal,
    );
    const b = await source.readerFor(
      { cluster: clusterIn(subscriptionB, "b"), serviceManagedIdentity: smiOf(subscriptionB), identityUrl: "https://dp.example/b" },
      signal,
    );
    expect(await read(a.reader, identityIn(subscriptionA, "x"))).toMatchObject({ clientId: `x read by client-of-${subscriptionA}` });
    expect(await read(b.reader, identityIn(subscriptionB, "y"))).toMatchObject({ clientId: `y read by client-of-${subscriptionB}` });
    expect(world.armClients).toEqual([
      { subscriptionId: subscriptionA, clientId: `client-of-${subscriptionA}` },
      { subscriptionId: subscriptionB, clientId: `client-of-${subscriptionB}` },
    ]);
    // An identity of another subscription is refused on its own, without a request.
    await expect(read(a.reader, identityIn(subscriptionB, "y"))).rejects.toMatchObject({ code: "IdentityOutsideClusterSubscription" });
    expect(a.description).toContain(smiOf(subscriptionA));
  });

  it("names the missing field of a cluster without an SMI or identity URL, before any data plane call", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const cluster = clusterIn(subscriptionA, "a");
    await expect(source.readerFor({ cluster, serviceManagedIdentity: undefined, identityUrl: "https://dp.example/a" }, signal)).rejects.toMatchObject({
      name: "ClusterCredentialError",
      field: "serviceManagedIdentity",
    });
    await expect(source.readerFor({ cluster, serviceManagedIdentity: smiOf(subscriptionA), identityUrl: undefined }, signal)).rejects.toMatchObject({
      name: "ClusterCredentialError",
      field: "managedIdentitiesDataPlaneIdentityURL",
    });
    expect(world.calls).toHaveLength(0);
  });

  it("makes a data plane refusal this cluster's error and remembers no failure, the first party's included", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    world.fail = new DataPlaneError("answered HTTP 403", { statusCode: 403 });
    const refused = await source.readerFor(request, signal).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClusterCredentialError);
    expect(refused).toMatchObject({ statusCode: 403 });
    expect((refused as Error).message).toContain(request.cluster.canonical);
    world.fail = new DataPlaneError("the first-party credential could not get a token", { firstParty: true });
    await expect(source.readerFor(request, signal)).rejects.toMatchObject({ name: "DataPlaneError", firstParty: true });
    world.fail = undefined;
    // Whether the first party is asked again is its credential's business (held per tenant there):
    // the next cluster's data plane call goes out.
    const other = { cluster: clusterIn(subscriptionB, "b"), serviceManagedIdentity: smiOf(subscriptionB), identityUrl: "https://dp.example/b" };
    await source.readerFor(other, signal);
    await source.readerFor(request, signal);
    expect(world.calls).toHaveLength(4);
  });

  it("passes a refusal of the identity URL or its challenge on as this cluster's error, naming the field, its message as the client wrote it", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const request = { cluster: clusterIn(subscriptionA, "a"), serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    world.fail = new DataPlaneError("the data plane challenged for a token in tenant x, but the identity URL names tenant y", {
      statusCode: 401,
      field: "managedIdentitiesDataPlaneIdentityURL",
    });
    const refused = await source.readerFor(request, signal).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClusterCredentialError);
    expect(refused).toMatchObject({ field: "managedIdentitiesDataPlaneIdentityURL" });
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^the data plane challenged for a token in tenant x, but the identity URL names tenant y\\. Cluster .*: nothing was written.* \\[${request.cluster.canonical}\\]$`,
      ),
    );
  });

  it("keys its entries by cluster: two clusters declaring the same SMI and identity URL each get their own call and subscription", async () => {
    const world = fakeWorld();
    const source = sourceOf(world);
    const shared = { serviceManagedIdentity: smiOf(subscriptionA), identityUrl: "https://dp.example/a" };
    const a = await source.readerFor({ cluster: clusterIn(subscriptionA, "a"), ...shared }, signal);
    const b = await source.readerFor({ cluster: clusterIn(subscriptionB, "b"), ...shared }, signal);
    expect(world.calls).toHaveLength(2);
    expect(a.reader).not.toBe(b.reader);
    expect(world.armClients.map((client) => client.subscriptionId)).toEqual([subscriptionA, subscriptionB]);
    await expect(read(b.reader, identityIn(subscriptionA, "x"))).rejects.toMatchObject({ code: "IdentityOutsideClusterSubscription" });
  });
});
