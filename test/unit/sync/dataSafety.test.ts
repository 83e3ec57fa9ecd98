/**
 * Issue 28 at the sync seam (fakes for the store and ARM, the real decision code): a delete that
 * meets another writer's data, a conflict decided again against the new document, fields this
 * hook does not know, and two declarations of one desired set. Each asserts on the document as
 * the store holds it afterwards. The same paths against the sandbox with the real SDK clients:
 * test/integration/dataSafety.test.ts.
 */
import { describe, expect, it } from "vitest";
import { desiredIdentitySet } from "../../../resources/core/identityStatus";
import type { JsonObject } from "../../../resources/core/json";
import { clearManagedIdentityStatus, refreshManagedIdentityStatus } from "../../../resources/sync/refreshManagedIdentityStatus";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import { isDesiredSetDisagreement } from "../../../resources/core/desiredSetDisagreement";
import type { SyncResult } from "../../../resources/sync/syncManagedIdentityStatus";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import { restError } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { Harness } from "../../fakes/syncHarness";
import { createHarness, parsedCluster } from "../../fakes/syncHarness";
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
const identityB = identityResourceId("identity-b");
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();
const hourEarlier = "2026-08-14T11:00:00Z";
const hourLater = "2026-08-14T13:00:00Z";
const muchLater = "2026-08-15T05:00:00Z";
/** nextRecheckTime with random() = 0: now + 12 h. */
const recheckAtRandomZero = "2026-08-15T00:00:00Z";
const resolved = (clientId: string, principalId: string): IdentityScript => ({ values: { clientId, principalId } });

function harnessWithSubtree(subtree: JsonObject, identities: Readonly<Record<string, IdentityScript>>): Harness {
  return createHarness({ documents: [buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: subtree })], identities });
}

function persistedSubtree(harness: Harness): JsonObject {
  return subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as JsonObject;
}

function setSubtree(harness: Harness, subtree: JsonObject): void {
  harness.store.mutate(location.partitionKey, location.documentId, (document) => {
    ((document.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities = subtree;
  });
}

async function sync(harness: Harness, desiredIds: readonly string[] | undefined): Promise<SyncResult> {
  const desired =
    desiredIds === undefined ? undefined : desiredIdentitySet(Object.fromEntries(desiredIds.map((id, index) => [`operator-${index}`, id]))).identities;
  return syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false });
}

describe("delete (issue 28 item 1): clears only what this resource recorded and nobody changed since", () => {
  const ours = storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourLater);

  it("resets a subtree that is exactly what this resource last recorded to {}", async () => {
    const harness = harnessWithSubtree(ours, {});
    const result = await clearManagedIdentityStatus(harness.dependencies, parsedCluster(), ours);
    expect(result).toEqual({ outcome: "cleared", wrote: true });
    expect(persistedSubtree(harness)).toEqual({});
  });

  it("keeps a subtree another writer wrote after this resource's last write (a rotated clientId and a later recheck)", async () => {
    const theirs = storedStatus([storedEntry(identityA, { clientId: "rotated-client", principalId: "rotated-principal" })], muchLater);
    const harness = harnessWithSubtree(theirs, {});
    const result = await clearManagedIdentityStatus(harness.dependencies, parsedCluster(), ours);
    expect(result).toEqual({ outcome: "kept", wrote: false });
    expect(harness.store.patches()).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual(theirs);
  });

  it("keeps the subtree when the outputs cannot say what this resource recorded", async () => {
    const harness = harnessWithSubtree(ours, {});
    expect(await clearManagedIdentityStatus(harness.dependencies, parsedCluster(), undefined)).toEqual({ outcome: "kept", wrote: false });
    expect(persistedSubtree(harness)).toEqual(ours);
  });

  it("compares again under the etag: a write landing between its read and its patch is kept", async () => {
    const theirs = storedStatus([storedEntry(identityA, { clientId: "rotated-client", principalId: "rotated-principal" })], muchLater);
    const harness = harnessWithSubtree(ours, {});
    harness.store.beforeNextPatch(location.documentId, () => setSubtree(harness, theirs));
    const result = await clearManagedIdentityStatus(harness.dependencies, parsedCluster(), ours);
    expect(result).toEqual({ outcome: "kept", wrote: false });
    expect(harness.store.patches().map((patch) => patch.outcome)).toEqual(["error"]);
    expect(persistedSubtree(harness)).toEqual(theirs);
  });
});

describe("after a conflict, the decision is made again (issue 28 item 4)", () => {
  it("writes nothing when the other writer's new document already needs no work, and does not report our older failure", async () => {
    const harness = harnessWithSubtree(storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourEarlier), {
      [identityA]: { error: restError("NotAuthorized", 400, "odd answer") },
    });
    const fresh = storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], muchLater);
    harness.store.beforeNextPatch(location.documentId, () => setSubtree(harness, fresh));
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ wrote: false, failures: [] });
    expect(harness.store.appliedPatches()).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual(fresh);
  });

  it("does not replace an entry the other writer changed since our read; writes ours for the entries it did not touch", async () => {
    const before = storedStatus(
      [
        storedEntry(identityA, { clientId: "a-old", principalId: "a-old-principal" }),
        storedEntry(identityB, { clientId: "b-old", principalId: "b-old-principal" }),
      ],
      hourEarlier,
    );
    const harness = harnessWithSubtree(before, { [identityA]: resolved("a-ours", "a-ours-principal"), [identityB]: resolved("b-ours", "b-ours-principal") });
    // The other writer records a newer value for A only and leaves the recheck due (its B lookup failed).
    const theirs = storedStatus(
      [
        storedEntry(identityA, { clientId: "a-theirs", principalId: "a-theirs-principal" }),
        storedEntry(identityB, { clientId: "b-old", principalId: "b-old-principal" }),
      ],
      undefined,
    );
    harness.store.beforeNextPatch(location.documentId, () => setSubtree(harness, theirs));
    const result = await sync(harness, [identityA, identityB]);
    expect(result).toMatchObject({ wrote: true, writeAttempts: 2 });
    expect(persistedSubtree(harness)).toEqual({
      identities: {
        [keyA]: { resourceID: identityA, clientId: "a-theirs", principalId: "a-theirs-principal" },
        [keyB]: { resourceID: identityB, clientId: "b-ours", principalId: "b-ours-principal" },
      },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });
});

describe("a refresh in an ARM brownout", () => {
  it("fails as a global failure instead of reporting every identity as drift, and writes nothing", async () => {
    const before = storedStatus(
      [storedEntry(identityA, { clientId: "a", principalId: "pa" }), storedEntry(identityB, { clientId: "b", principalId: "pb" })],
      hourEarlier,
    );
    const unavailable: IdentityScript = { error: restError("ServiceUnavailable", 503, "busy") };
    const harness = harnessWithSubtree(before, { [identityA]: unavailable, [identityB]: unavailable });
    await expect(refreshManagedIdentityStatus(harness.dependencies, parsedCluster(), before)).rejects.toThrow(
      /all 2 identity lookups .* failed the same transient way \(ServerError\)/,
    );
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("still reports one identity's 503 as drift when the others resolve", async () => {
    const before = storedStatus(
      [storedEntry(identityA, { clientId: "a", principalId: "pa" }), storedEntry(identityB, { clientId: "b", principalId: "pb" })],
      hourEarlier,
    );
    const harness = harnessWithSubtree(before, { [identityA]: resolved("a", "pa"), [identityB]: { error: restError("ServiceUnavailable", 503, "busy") } });
    const result = await refreshManagedIdentityStatus(harness.dependencies, parsedCluster(), before);
    expect(result.drift).toEqual([`identity ${keyB}: lookup now fails in Azure with ServiceUnavailable (HTTP 503)`]);
  });
});

describe("fields this hook does not know survive its writes (issue 28 item 5)", () => {
  it("keeps unknown fields beside identities and inside entries it keeps; a removed identity goes whole", async () => {
    const subtree = {
      ...storedStatus(
        [
          { ...storedEntry(identityA, { clientId: "a-old", principalId: "a-old-principal" }), tenantId: "tenant-a", lastAttempt: { by: "upstream" } },
          { ...storedEntry(identityB, { clientId: "b", principalId: "pb" }), tenantId: "tenant-b" },
        ],
        hourEarlier,
      ),
      observedGeneration: 7,
    };
    const harness = harnessWithSubtree(subtree, { [identityA]: resolved("a-new", "a-new-principal") });
    await sync(harness, [identityA]);
    expect(persistedSubtree(harness)).toEqual({
      identities: {
        [keyA]: { resourceID: identityA, clientId: "a-new", principalId: "a-new-principal", tenantId: "tenant-a", lastAttempt: { by: "upstream" } },
      },
      earliestRecheckTime: recheckAtRandomZero,
      observedGeneration: 7,
    });
  });

  it("keeps them through a delete that clears the subtree's entries", async () => {
    const ours = storedStatus([storedEntry(identityA, { clientId: "a", principalId: "pa" })], hourLater);
    const harness = harnessWithSubtree({ ...ours, observedGeneration: 7 }, {});
    await clearManagedIdentityStatus(harness.dependencies, parsedCluster(), ours);
    expect(persistedSubtree(harness)).toEqual({ observedGeneration: 7 });
  });
});

describe("two declarations of one desired set (issue 28, also)", () => {
  it("names the identities each side declares alone, records the inputs' set and warns, without failing", async () => {
    const harness = createHarness({
      documents: [
        buildClusterDocument({ dataPlaneOperators: { a: identityA } }),
        buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: {} }),
      ],
      identities: { [identityB]: resolved("b", "pb") },
    });
    const result = await sync(harness, [identityB]);
    expect(result.desiredSetDisagreement).toBeDefined();
    expect(isDesiredSetDisagreement(result.desiredSetDisagreement as string)).toBe(true);
    expect(result.desiredSetDisagreement).toContain(`only in the inputs: ${identityB}; only in the document: ${identityA}`);
    expect(Object.keys((persistedSubtree(harness).identities as JsonObject) ?? {})).toEqual([keyB]);
  });

  it("says nothing when both declare the same identities, in any casing", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument({ dataPlaneOperators: { a: identityA.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/") } })],
      identities: { [identityA]: resolved("a", "pa") },
    });
    harness.store.put(buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: {} }));
    expect((await sync(harness, [identityA])).desiredSetDisagreement).toBeUndefined();
  });
});
