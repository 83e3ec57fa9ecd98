/**
 * The two point reads that open every pass (HCPOpenShiftCluster, then ServiceProviderCluster) go
 * out together, one Cosmos round trip instead of two (issue 12, provider create 1a/1b), while the
 * cluster document still decides first: its failure is the one reported, a deleting cluster does
 * not wait for the ServiceProviderCluster document, and a read left behind by a failed pass never
 * becomes an unhandled rejection.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isCosmosDocumentError } from "../../../resources/core/errors";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import type { JsonValue } from "../../../resources/core/json";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import type { SyncResult } from "../../../resources/sync/syncManagedIdentityStatus";
import { cosmosError } from "../../fakes/inMemoryDocumentStore";
import type { Harness } from "../../fakes/syncHarness";
import { createHarness, declareInClusterDocument, parsedCluster } from "../../fakes/syncHarness";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  identityResourceId,
  locationOf,
  storedEntry,
  storedStatus,
  subtreeOf,
} from "../../fixtures/documents";

const location = locationOf();
const identityA = identityResourceId("identity-a");
const hourLater = "2026-08-14T13:00:00Z";
const clusterDocumentName = `the HCPOpenShiftCluster document of cluster ${location.clusterName}`;

function spcWith(subtree: JsonValue): ReturnType<typeof buildServiceProviderClusterDocument> {
  return buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: subtree });
}

type DesiredFrom = "inputs" | "clusterDocument";

/** A pass with the desired set `[identityA]` from the inputs, or with the set read from the cluster document. */
function sync(harness: Harness, desiredFrom: DesiredFrom = "inputs"): Promise<SyncResult> {
  const desired = desiredFrom === "clusterDocument" ? undefined : desiredIdentitySet({ "operator-a": identityA }).identities;
  if (desiredFrom === "inputs") declareInClusterDocument(harness, [identityA]);
  return syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false });
}

async function syncFailing(harness: Harness, desiredFrom: DesiredFrom = "inputs"): Promise<Error> {
  return sync(harness, desiredFrom).then(
    () => {
      throw new Error("expected the pass to throw");
    },
    (error: unknown) => error as Error,
  );
}

// Every unhandled rejection while a test runs, reported after one more turn of the event loop
// (Node raises it once the microtask queue has drained).
let unhandled: unknown[] = [];
const recordUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", recordUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", recordUnhandled);
});
async function unhandledRejections(): Promise<unknown[]> {
  await new Promise((resolve) => setImmediate(resolve));
  return unhandled;
}

describe("a pass's document reads", () => {
  it("reads the cluster and ServiceProviderCluster documents at once, once each", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: { values: { clientId: "c", principalId: "p" } } } });
    const result = await sync(harness);
    expect(result.wrote).toBe(true);
    expect(harness.store.maxReadsInFlight).toBe(2);
    expect(harness.store.reads(location.clusterDocumentId)).toHaveLength(1);
    expect(harness.store.reads(location.documentId)).toHaveLength(1);
  });

  it("reads both at once too when the desired set comes from the cluster document", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA } }), spcWith({})],
      identities: { [identityA]: { values: { clientId: "c", principalId: "p" } } },
    });
    await sync(harness, "clusterDocument");
    expect(harness.store.maxReadsInFlight).toBe(2);
    expect(harness.store.reads()).toHaveLength(2);
  });

  it("reports a missing cluster document first, even when the ServiceProviderCluster document is missing too, and writes nothing", async () => {
    const harness = createHarness({ clusterDocument: "absent", syncOptions: { documentWaitInMs: 2_000, documentPollIntervalInMs: 1_000 } });
    const error = await syncFailing(harness);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect(error.message).toContain(`${clusterDocumentName} (`);
    expect(error.message).toContain("does not exist after 2 s");
    expect(error.message).not.toContain("ServiceProviderCluster document");
    expect(harness.store.reads(location.clusterDocumentId)).toHaveLength(3);
    // The early read, and one after the wait (with the subscription's document) to tell a missing
    // document from settings that point elsewhere: the ServiceProviderCluster document is not waited for.
    expect(harness.store.reads(location.documentId)).toHaveLength(2);
    expect(harness.store.reads(location.subscriptionDocumentId)).toHaveLength(1);
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(await unhandledRejections()).toEqual([]);
  });

  it("reports a soft-deleted cluster document as missing before a ServiceProviderCluster read that failed", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument({ overrides: { deletionTimestamp: "2026-08-14T11:00:00Z" } }), spcWith({})],
      syncOptions: { documentWaitInMs: 0 },
    });
    harness.store.failNext("read", cosmosError(503), { id: location.documentId });
    const error = await syncFailing(harness);
    expect(error.message).toContain(`${clusterDocumentName} (`);
    expect(error.message).toContain("does not exist");
    expect(harness.store.patches()).toHaveLength(0);
    expect(await unhandledRejections()).toEqual([]);
  });

  it("reports a failed cluster document read, not the ServiceProviderCluster read that failed alongside it, and leaves no unhandled rejection", async () => {
    const harness = createHarness({ documents: [spcWith({})] });
    harness.store.failNext("read", cosmosError(503), { id: location.clusterDocumentId });
    harness.store.failNext("read", cosmosError(429), { id: location.documentId });
    const error = await syncFailing(harness);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect((error as Error & { statusCode?: number }).statusCode).toBe(503);
    expect(error.message).toMatch(new RegExp(`^ServiceUnavailable \\(HTTP 503\\): .*; nothing was written\\. \\[reading ${clusterDocumentName} \\(`));
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(await unhandledRejections()).toEqual([]);
  });

  it("reports a cluster document that cannot name the desired set before a ServiceProviderCluster read that failed", async () => {
    const harness = createHarness({ documents: [buildClusterDocument({ dataPlaneOperators: { "operator-a": null } }), spcWith({})] });
    harness.store.failNext("read", cosmosError(503), { id: location.documentId });
    const error = await syncFailing(harness, "clusterDocument");
    expect(error.message).toContain(`the cluster's HCPOpenShiftCluster document does not name its data plane operator identities in a form upstream writes`);
    expect(harness.store.patches()).toHaveLength(0);
    expect(await unhandledRejections()).toEqual([]);
  });

  it("reports a ServiceProviderCluster read that failed once the cluster document is fine", async () => {
    const harness = createHarness({ documents: [spcWith({})] });
    harness.store.failNext("read", cosmosError(503), { id: location.documentId });
    const error = await syncFailing(harness);
    expect((error as Error & { statusCode?: number }).statusCode).toBe(503);
    expect(error.message).toContain(`[reading the ServiceProviderCluster document of cluster ${location.clusterName} (${location.documentId})]`);
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("skips a deleting cluster without waiting for a missing ServiceProviderCluster document", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument({ deletionTimestamp: "2026-08-14T11:00:00Z" })],
      syncOptions: { documentWaitInMs: 10_000, documentPollIntervalInMs: 1_000 },
    });
    const result = await sync(harness);
    expect(result).toMatchObject({ skippedReason: "clusterDeleting", status: {}, wrote: false, lookups: 0 });
    expect(harness.clock.sleeps).toEqual([]);
    expect(harness.store.reads(location.documentId)).toHaveLength(1);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("when the ServiceProviderCluster document is missing at first, waits for it after the cluster document's verdict", async () => {
    const harness = createHarness({ identities: { [identityA]: { values: { clientId: "c", principalId: "p" } } } });
    harness.clock.onSleep = (count) => {
      if (count === 2) harness.store.put(spcWith({}));
    };
    const result = await sync(harness);
    expect(result.wrote).toBe(true);
    expect(harness.clock.sleeps).toEqual([1000, 1000]);
    // The early read (missing), then one poll after each sleep.
    expect(harness.store.reads(location.documentId).map((read) => read.outcome)).toEqual(["missing", "missing", "found"]);
    expect(harness.store.reads(location.clusterDocumentId)).toHaveLength(1);
  });

  it("reads the ServiceProviderCluster document again when the cluster document had to be waited for: the early read is stale", async () => {
    // Before the wait the status is empty; during it the other writer records it, due in an hour.
    const harness = createHarness({ documents: [spcWith({})], clusterDocument: "absent" });
    harness.clock.onSleep = (count) => {
      if (count === 1) {
        harness.store.put(buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA } }));
        harness.store.mutate(location.partitionKey, location.documentId, (document) => {
          const properties = document.properties as { status: Record<string, JsonValue> };
          properties.status.dataPlaneOperatorsManagedIdentities = storedStatus([storedEntry(identityA, { clientId: "c", principalId: "p" })], hourLater);
        });
      }
    };
    const result = await sync(harness);
    // Using the early read would have looked identityA up and written.
    expect(result).toMatchObject({ workReason: undefined, wrote: false, lookups: 0 });
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.reads(location.documentId)).toHaveLength(2);
    expect(subtreeOf(harness.store.get(location.partitionKey, location.documentId))).toEqual(
      storedStatus([storedEntry(identityA, { clientId: "c", principalId: "p" })], hourLater),
    );
  });
});
