/**
 * State in Azure Blob Storage shared by many runners: the real engine with an `azblob://` backend
 * served by Azurite (loopback, private data directory, stopped afterwards), against the sandbox.
 * After each step the test reads back both what Cosmos holds and what the container holds.
 */
import { readdirSync } from "node:fs";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { createSandboxCertificate } from "../../sandbox/certificate";
import { type Azurite, azuriteAccountKey, startAzurite } from "../../sandbox/azurite";
import { startStorageTokenIssuer, type StorageTokenIssuer } from "./storageTokenIssuer";
import { type AzblobBackend, createAzblobBackend } from "../../sandbox/azurite";
import { clustersInState, openAzblobStack, waitUntil } from "./azblobBackend";
import { type ClusterConfig, engineModule, expectRecordsDeclaredIdentities, outputCollector } from "./engineHelpers";

/** The subtree this hook owns in a ServiceProviderCluster document. */
interface OwnedStatus {
  readonly identities?: Record<string, unknown>;
}
interface ServiceProviderClusterView {
  readonly properties?: { readonly status?: { readonly dataPlaneOperatorsManagedIdentities?: OwnedStatus } };
}

const project = "aro-hcp-identity-status";
let sandbox: Sandbox;
let azurite: Azurite;
let secureAzurite: Azurite | undefined;
let tokenIssuer: StorageTokenIssuer | undefined;
let backend: AzblobBackend;
let fleet: FleetClusterDescription[];

function declared(cluster: FleetClusterDescription): ClusterConfig {
  return { clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators };
}

async function ownedStatus(cluster: FleetClusterDescription): Promise<OwnedStatus | undefined> {
  const { resource } = await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<ServiceProviderClusterView>();
  return resource?.properties?.status?.dataPlaneOperatorsManagedIdentities;
}

/** Every declared identity of the cluster is recorded in Cosmos with the IDs ARM holds. */
async function expectRecorded(cluster: FleetClusterDescription): Promise<void> {
  expectRecordsDeclaredIdentities(sandbox, await ownedStatus(cluster), cluster.dataPlaneOperators);
}

const stackBlob = (stackName: string): string => `.pulumi/stacks/${project}/${stackName}.json`;
const lockDirectory = (stackName: string): string => `.pulumi/locks/organization/${project}/${stackName}/`;

/**
 * Holds updates that include these clusters inside the update, lock taken: their
 * ServiceProviderCluster documents disappear until `release`, and the provider waits for the
 * resource provider to create them (documentWaitSeconds, set long by the test).
 *
 * @returns A function that puts the documents back, letting the updates finish.
 */
function holdUpdatesOf(clusters: readonly FleetClusterDescription[]): () => void {
  const documents = clusters.map((cluster) => {
    const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId);
    if (document === undefined) {
      throw new Error(`the seeded ServiceProviderCluster document of ${cluster.clusterResourceId} is missing`);
    }
    sandbox.documents.delete(cluster.partitionKey, cluster.serviceProviderClusterDocumentId);
    return document;
  });
  return () => {
    for (const document of documents) {
      sandbox.documents.put(document);
    }
  };
}
const waitLong = { documentWaitSeconds: "600" };

/** Tracks whether a promise has settled, without leaving a rejection unhandled (it is awaited later). */
function settlement(promise: Promise<unknown>): () => boolean {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/azblob-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: 9, identitiesPerCluster: 2, subscriptions: 2 });
  azurite = await startAzurite();
  backend = await createAzblobBackend(azurite, "fleet-state");
  await engineModule().engineCommand();
}, 600_000);

afterAll(async () => {
  await tokenIssuer?.stop();
  await secureAzurite?.stop();
  await azurite?.stop();
  await sandbox?.stop();
});

describe("an azblob:// backend shared by many runners (Azurite)", () => {
  it("runs up, refresh and destroy of a stack whose state lives only in the container", async () => {
    const [first, second] = [fleet[0], fleet[1]];
    const { stack, fileStateDirectory } = await openAzblobStack(sandbox, backend, { stackName: "single", clusters: [declared(first), declared(second)] });
    const output = outputCollector();

    const up = await stack.up({ color: "never", onOutput: output.onOutput });
    expect(up.summary.result).toBe("succeeded");
    expect(up.summary.resourceChanges).toEqual({ create: 3 });
    await expectRecorded(first);
    await expectRecorded(second);
    const blobs = await backend.blobs();
    expect(blobs).toContain(".pulumi/meta.yaml");
    expect(blobs).toContain(stackBlob("single"));
    expect(blobs.filter((name) => name.startsWith(".pulumi/locks/"))).toEqual([]);
    expect(await clustersInState(stack)).toEqual([first.clusterResourceId, second.clusterResourceId].sort());
    // Nothing went to a local file backend, and no key reached the state or the output.
    expect(readdirSync(fileStateDirectory)).toEqual([]);
    const exported = JSON.stringify(await stack.exportStack());
    for (const secret of [azuriteAccountKey, sandbox.cosmosKey]) {
      expect(exported).not.toContain(secret);
      expect(output.text()).not.toContain(secret);
    }

    // Drift made in Cosmos is found by refresh, recorded in the state in the container.
    const tamperedId = Object.values(first.dataPlaneOperators)[0] ?? "";
    const pointer = tamperedId.toLowerCase().replace(/~/g, "~0").replace(/\//g, "~1");
    sandbox.documents.patch(
      first.partitionKey,
      first.serviceProviderClusterDocumentId,
      `/properties/status/dataPlaneOperatorsManagedIdentities/identities/${pointer}/clientId`,
      "tampered",
    );
    const refresh = await stack.refresh({ color: "never" });
    expect(refresh.summary.resourceChanges).toEqual({ same: 2, update: 1 });
    const deployment = (await stack.exportStack()).deployment as { resources: Array<{ outputs?: { clusterResourceId?: unknown; drift?: unknown } }> };
    const drift = deployment.resources.find((resource) => resource.outputs?.clusterResourceId === first.clusterResourceId)?.outputs?.drift;
    expect(drift).toEqual([expect.stringContaining("clientId was changed in Cosmos")]);
    const repaired = await stack.up({ color: "never" });
    expect(repaired.summary.resourceChanges).toEqual({ same: 2, update: 1 });
    await expectRecorded(first);

    // A delete relinquishes: the status stays as the stack recorded it.
    const recorded = [await ownedStatus(first), await ownedStatus(second)];
    const destroy = await stack.destroy({ color: "never" });
    expect(destroy.summary.result).toBe("succeeded");
    expect(destroy.summary.resourceChanges).toEqual({ delete: 3 });
    expect([await ownedStatus(first), await ownedStatus(second)]).toEqual(recorded);
    await expectRecorded(first);
    expect(await clustersInState(stack)).toEqual([]);
    await stack.workspace.removeStack("single");
    expect(await backend.blobs(`.pulumi/stacks/${project}/`)).not.toContain(stackBlob("single"));
  });

  it("updates two shard stacks at the same time on one backend, each keeping its own state", async () => {
    const shards = [
      { stackName: "shard-a", clusters: [declared(fleet[2]), declared(fleet[3])] },
      { stackName: "shard-b", clusters: [declared(fleet[4]), declared(fleet[5])] },
    ];
    const release = holdUpdatesOf([fleet[3], fleet[5]]);
    const opened = new Map<string, Stack>();
    // Two shards' runners at once, as an engine's jobs run them (docs/operations.md, "Running a region").
    const running = Promise.all(
      shards.map(async (shard) => {
        const { stack } = await openAzblobStack(sandbox, backend, { stackName: shard.stackName, clusters: shard.clusters, extraConfig: waitLong });
        opened.set(shard.stackName, stack);
        const result = await stack.up({ color: "never" });
        return {
          stackName: shard.stackName,
          clusterCount: shard.clusters.length,
          succeeded: result.summary.result === "succeeded",
          summary: result.summary.resourceChanges,
        };
      }),
    );
    const finished = settlement(running);
    // Both shards inside their updates at once: each holds its own lock in the shared container.
    const bothLocked = async (): Promise<boolean> =>
      (await backend.blobs(lockDirectory("shard-a"))).length === 1 && (await backend.blobs(lockDirectory("shard-b"))).length === 1;
    let overlapped = false;
    await waitUntil(async () => (overlapped = await bothLocked()) || finished());
    release();
    const outcomes = await running;
    expect(outcomes).toEqual([
      { stackName: "shard-a", clusterCount: 2, succeeded: true, summary: { create: 3 } },
      { stackName: "shard-b", clusterCount: 2, succeeded: true, summary: { create: 3 } },
    ]);
    expect(overlapped).toBe(true);
    for (const cluster of fleet.slice(2, 6)) {
      await expectRecorded(cluster);
    }
    const blobs = await backend.blobs();
    expect(blobs).toEqual(expect.arrayContaining([stackBlob("shard-a"), stackBlob("shard-b")]));
    expect(blobs.filter((name) => name.startsWith(".pulumi/locks/"))).toEqual([]);
    expect(await clustersInState(opened.get("shard-a") as Stack)).toEqual([fleet[2].clusterResourceId, fleet[3].clusterResourceId].sort());
    expect(await clustersInState(opened.get("shard-b") as Stack)).toEqual([fleet[4].clusterResourceId, fleet[5].clusterResourceId].sort());
  });

  it("refuses a second concurrent up of the same stack with the lock message; the first completes and nothing is lost", async () => {
    const [plain, gated] = [fleet[6], fleet[7]];
    const clusters = [declared(plain), declared(gated)];
    const release = holdUpdatesOf([gated]);
    const { stack: firstRunner } = await openAzblobStack(sandbox, backend, { stackName: "contended", clusters, extraConfig: waitLong });
    const { stack: secondRunner } = await openAzblobStack(sandbox, backend, { stackName: "contended", clusters, extraConfig: waitLong });
    const lockPrefix = lockDirectory("contended");

    const firstOutput = outputCollector();
    const firstUp = firstRunner.up({ color: "never", onOutput: firstOutput.onOutput });
    const firstSettled = settlement(firstUp);
    await waitUntil(async () => firstSettled() || (await backend.blobs(lockPrefix)).length === 1);
    if (firstSettled()) {
      throw new Error(`the first up ended before the second could meet its lock:\n${firstOutput.text()}`);
    }
    const heldLock = await backend.blobs(lockPrefix);

    const refusal = await secondRunner.up({ color: "never" }).then(
      () => "the second up succeeded",
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(refusal).toContain(
      "the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.",
    );
    expect(refusal).toContain(`${backend.container}/${heldLock[0]}`);
    // The refused runner neither took nor removed a lock.
    expect(await backend.blobs(lockPrefix)).toEqual(heldLock);

    release();
    const first = await firstUp;
    expect(first.summary.result).toBe("succeeded");
    expect(first.summary.resourceChanges).toEqual({ create: 3 });
    await expectRecorded(plain);
    await expectRecorded(gated);
    expect(await backend.blobs(lockPrefix)).toEqual([]);
    expect(await clustersInState(secondRunner)).toEqual([plain.clusterResourceId, gated.clusterResourceId].sort());

    // Once the lock is released the second runner proceeds and finds everything in place.
    const retry = await secondRunner.up({ color: "never" });
    expect(retry.summary.resourceChanges).toEqual({ same: 3 });
  });

  it("reaches the container with Entra ID (a managed identity token, no key) over HTTPS", async () => {
    const certificate = await createSandboxCertificate("azurite");
    secureAzurite = await startAzurite({ tls: certificate, oauth: true });
    tokenIssuer = await startStorageTokenIssuer(sandbox.endpoints.identity, sandbox.identityHeader);
    const entraBackend = await createAzblobBackend(secureAzurite, "entra-state", { kind: "entraId", identityEndpoint: tokenIssuer.endpoint });
    expect(entraBackend.environment.AZURE_STORAGE_KEY).toBe("");
    const cluster = fleet[8];
    const { stack } = await openAzblobStack(sandbox, entraBackend, { stackName: "entra", clusters: [declared(cluster)] });

    const up = await stack.up({ color: "never" });
    expect(up.summary.resourceChanges).toEqual({ create: 2 });
    await expectRecorded(cluster);
    expect(await entraBackend.blobs()).toContain(stackBlob("entra"));
    expect(await clustersInState(stack)).toEqual([cluster.clusterResourceId]);
    expect(tokenIssuer.storageTokensIssued()).toBeGreaterThan(0);

    const destroy = await stack.destroy({ color: "never" });
    expect(destroy.summary.resourceChanges).toEqual({ delete: 2 });
    await expectRecorded(cluster);
  });
});
