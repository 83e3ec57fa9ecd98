/**
 * Issue 28 at the sync seam (fakes for the store and ARM, the real decision code): a conflict
 * decided again against both documents as they are now, fields this
 * hook does not know, two declarations of one desired set (the cluster document wins), and the
 * hook and a writer following upstream's rules taking turns on one document. Each asserts on the document as
 * the store holds it afterwards. The same paths against the sandbox with the real SDK clients:
 * test/integration/dataSafety.test.ts.
 */
import { describe, expect, it } from "vitest";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import type { JsonObject } from "../../../resources/core/json";
import { refreshManagedIdentityStatus } from "../../../resources/sync/refreshManagedIdentityStatus";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import { DesiredSetDisagreementError } from "../../../resources/core/errors";
import { upstreamSyncOnce } from "../../fakes/upstreamController";
import type { SyncResult } from "../../../resources/sync/syncManagedIdentityStatus";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import { restError } from "../../fakes/scriptedUserAssignedIdentityReader";
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
const identityB = identityResourceId("identity-b");
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();
const hourEarlier = "2026-08-14T11:00:00Z";
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

/** A pass with the inputs naming `desiredIds`; the cluster document is made to name them too unless `documentAsIs`. */
async function sync(harness: Harness, desiredIds: readonly string[] | undefined, documentAsIs = false): Promise<SyncResult> {
  const desired =
    desiredIds === undefined ? undefined : desiredIdentitySet(Object.fromEntries(desiredIds.map((id, index) => [`operator-${index}`, id]))).identities;
  // The cluster document is the authority on the set: inputs naming one run where it names the same.
  if (desiredIds !== undefined && !documentAsIs) declareInClusterDocument(harness, desiredIds);
  return syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false });
}

/**
 * The cluster document declares {A}, then moves between {B} and {A} just before each write (after
 * `beforeEach`, given the flip it is at), so that every write attempt meets a changed desired set.
 */
function moveClusterDocumentBeforeEachWrite(harness: Harness, beforeEach: (flip: boolean) => void = () => undefined): void {
  declareInClusterDocument(harness, [identityA]);
  let flip = false;
  harness.store.beforeNextPatch(
    location.documentId,
    () => {
      beforeEach(flip);
      flip = !flip;
      declareInClusterDocument(harness, flip ? [identityB] : [identityA]);
    },
    100,
  );
}

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

describe("a write that got no answer is read back", () => {
  /** What the Cosmos SDK throws when the connection drops under a request: no status code. */
  const connectionReset = (): Error => Object.assign(new Error("socket hang up"), { name: "RestError", code: "ECONNRESET" });
  const due = storedStatus([storedEntry(identityA, { clientId: "a-old", principalId: "a-old-principal" })], hourEarlier);
  const ours = {
    identities: { [keyA]: { resourceID: identityA, clientId: "a-new", principalId: "a-new-principal" } },
    earliestRecheckTime: recheckAtRandomZero,
  };

  it("reports a write that landed before its answer was lost as written, and writes it once", async () => {
    const harness = harnessWithSubtree(due, { [identityA]: resolved("a-new", "a-new-principal") });
    const patch = harness.store.patchDocument.bind(harness.store);
    let answered = 0;
    harness.store.patchDocument = async (...call) => {
      const stored = await patch(...call);
      answered += 1;
      if (answered === 1) throw connectionReset();
      return stored;
    };
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ wrote: true, writeAttempts: 1, failures: [] });
    expect(harness.store.appliedPatches()).toHaveLength(1);
    expect(persistedSubtree(harness)).toEqual(ours);
  });

  it("decides again and writes once more when the write did not land", async () => {
    const harness = harnessWithSubtree(due, { [identityA]: resolved("a-new", "a-new-principal") });
    harness.store.failNext("patch", connectionReset(), { id: location.documentId });
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ wrote: true, writeAttempts: 2 });
    expect(harness.store.patches().map((patch) => patch.outcome)).toEqual(["error", "applied"]);
    expect(persistedSubtree(harness)).toEqual(ours);
  });

  it("writes nothing over a current status another writer recorded while our write went unanswered", async () => {
    const harness = harnessWithSubtree(due, { [identityA]: resolved("a-new", "a-new-principal") });
    const theirs = storedStatus([storedEntry(identityA, { clientId: "a-theirs", principalId: "a-theirs-principal" })], muchLater);
    harness.store.beforeNextPatch(location.documentId, () => setSubtree(harness, theirs));
    harness.store.failNext("patch", connectionReset(), { id: location.documentId });
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ wrote: false });
    expect(harness.store.appliedPatches()).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual(theirs);
  });

  it("fails saying the write may have landed when the document cannot be read back after no answer", async () => {
    const harness = harnessWithSubtree(due, { [identityA]: resolved("a-new", "a-new-principal") });
    // From the write on, every read of the document fails as a Cosmos front end failing would.
    harness.store.beforeNextPatch(location.documentId, () =>
      harness.store.failNext("read", Object.assign(new Error("simulated"), { code: 500 }), { id: location.documentId, times: 10 }),
    );
    harness.store.failNext("patch", connectionReset(), { id: location.documentId });
    const failure = (await sync(harness, [identityA]).catch((error: unknown) => error)) as Error;
    expect(failure.message).toMatch(
      /^ECONNRESET: socket hang up, writing the ServiceProviderCluster document\. Cluster .*: the write got no answer and may have landed; /,
    );
    expect(failure.message).not.toContain("nothing was written");
    expect(harness.store.patches()).toHaveLength(1);
  });

  it("starts over when the cluster document changed under a write that got no answer, and never says nothing was written", async () => {
    const harness = harnessWithSubtree(due, { [identityA]: resolved("a-new", "a-new-principal"), [identityB]: resolved("b-new", "b-new-principal") });
    // Every write goes unanswered while the cluster document moves between two sets.
    moveClusterDocumentBeforeEachWrite(harness);
    harness.store.failNext("patch", connectionReset(), { id: location.documentId, times: 100 });
    const failure = (await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false }).catch(
      (error: unknown) => error,
    )) as Error;
    expect(failure.message).toMatch(
      /^the cluster's HCPOpenShiftCluster document changed while the status was being written\. Cluster .*: the write before the change got no answer and may have landed\./,
    );
    expect(failure.message).not.toContain("nothing was written");
    expect(harness.store.patches()).toHaveLength(harness.dependencies.options.maxWriteAttempts);
  });

  it("fails saying the write may have landed, never that nothing was written, when every attempt goes unanswered", async () => {
    const harness = harnessWithSubtree(due, { [identityA]: resolved("a-new", "a-new-principal") });
    const attempts = harness.dependencies.options.maxWriteAttempts;
    harness.store.failNext("patch", connectionReset(), { id: location.documentId, times: attempts + 1 });
    const failure = (await sync(harness, [identityA]).catch((error: unknown) => error)) as Error;
    expect(failure.message).toMatch(
      new RegExp(
        `^ECONNRESET: socket hang up after ${attempts} attempts, writing the ServiceProviderCluster document\\. Cluster .*: the write got no answer and may have landed; `,
      ),
    );
    expect(failure.message).not.toContain("nothing was written");
    expect(harness.store.patches()).toHaveLength(attempts);
    expect(persistedSubtree(harness)).toEqual(due);
  });
});

describe("after a conflict, the cluster document is read again too (issue 44 item 6)", () => {
  it("starts the pass over when the desired set changed between its read and its write, and writes the new set's answers", async () => {
    const before = storedStatus([storedEntry(identityA, { clientId: "a-old", principalId: "a-old-principal" })], hourEarlier);
    const harness = harnessWithSubtree(before, { [identityA]: resolved("a-new", "a-new-principal"), [identityB]: resolved("b-new", "b-new-principal") });
    declareInClusterDocument(harness, [identityA]);
    // Another writer touches the ServiceProviderCluster document (a 412 for our first write) while
    // the frontend moves the cluster to another desired set: {A} becomes {B}.
    harness.store.beforeNextPatch(location.documentId, () => {
      harness.store.mutate(location.partitionKey, location.documentId, (document) => {
        (document.properties as JsonObject).loadBalancerResourceID = "/subscriptions/other-writer";
      });
      declareInClusterDocument(harness, [identityB]);
    });
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false });
    expect(result).toMatchObject({ wrote: true, writeAttempts: 1 });
    // Never the answers for {A} under the old set: the document holds the new set's.
    expect(persistedSubtree(harness)).toEqual({
      identities: { [keyB]: { resourceID: identityB, clientId: "b-new", principalId: "b-new-principal" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
    expect(harness.store.patches().map((patch) => patch.outcome)).toEqual(["error", "applied"]);
  });

  it("fails naming the cluster document, with nothing written, when it keeps changing for every attempt", async () => {
    const before = storedStatus([storedEntry(identityA, { clientId: "a-old", principalId: "a-old-principal" })], hourEarlier);
    const harness = harnessWithSubtree(before, { [identityA]: resolved("a-new", "a-new-principal"), [identityB]: resolved("b-new", "b-new-principal") });
    moveClusterDocumentBeforeEachWrite(harness, (flip) =>
      harness.store.mutate(location.partitionKey, location.documentId, (document) => {
        (document.properties as JsonObject).loadBalancerResourceID = `/subscriptions/other-writer-${String(flip)}`;
      }),
    );
    await expect(syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false })).rejects.toThrow(
      /the cluster's HCPOpenShiftCluster document changed while the status was being written.*nothing was written/s,
    );
    expect(harness.store.appliedPatches()).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual(before);
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
      /^all 2 identity lookups failed the same transient way \(ServerError: ServiceUnavailable \(HTTP 503\): busy\), which says nothing about any one identity; .* Cluster .*: nothing was written/,
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
});

describe("two declarations of one desired set: the cluster document is the authority", () => {
  it("fails a pass whose inputs name another set, naming both sets, before any Azure call or write", async () => {
    const harness = createHarness({
      documents: [
        buildClusterDocument({ dataPlaneOperators: { a: identityA } }),
        buildServiceProviderClusterDocument({
          dataPlaneOperatorsManagedIdentities: storedStatus([storedEntry(identityA, { clientId: "a", principalId: "pa" })]),
        }),
      ],
      identities: { [identityA]: resolved("a", "pa"), [identityB]: resolved("b", "pb") },
    });
    const before = harness.store.get(location.partitionKey, location.documentId);
    const error = await sync(harness, [identityA, identityB], true).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error).toBeInstanceOf(DesiredSetDisagreementError);
    expect(error?.message).toContain(
      `The inputs name: ${identityA}, ${identityB}. The document names: ${identityA}\n  - only in the inputs: ${identityB}; only in the document: none`,
    );
    expect(error?.message).toContain("nothing was read from Azure or written");
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(harness.store.get(location.partitionKey, location.documentId)).toEqual(before);
  });

  it("reads a cluster document without a dataPlaneOperators map as the empty set, as upstream does", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument(), buildServiceProviderClusterDocument()],
      identities: { [identityA]: resolved("a", "pa") },
    });
    await expect(sync(harness, [identityA], true)).rejects.toThrow(`The inputs name: ${identityA}. The document names: none`);
    expect(harness.store.patches()).toHaveLength(0);
    // Inputs naming the empty set agree with it.
    expect((await sync(harness, [], true)).wrote).toBe(true);
  });

  it("fails inputs naming a set when the document's set cannot be read: nothing to check them against", async () => {
    const harness = createHarness({ documents: [buildClusterDocument({ dataPlaneOperators: { a: null } }), buildServiceProviderClusterDocument()] });
    await expect(sync(harness, [identityA], true)).rejects.toThrow(
      `the cluster's HCPOpenShiftCluster document does not name its data plane operator identities in a form upstream writes: properties.customerProperties`,
    );
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("runs as before when both name the same identities, in any casing", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument({ dataPlaneOperators: { a: identityA.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/") } })],
      identities: { [identityA]: resolved("a", "pa") },
    });
    harness.store.put(buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: {} }));
    const result = await sync(harness, [identityA], true);
    expect(result.wrote).toBe(true);
    expect(Object.keys(persistedSubtree(harness).identities as JsonObject)).toEqual([keyA]);
  });
});

describe("the hook and upstream's controller in turn on one document: they converge", () => {
  const answers = { [keyA]: { clientId: "a", principalId: "pa" }, [keyB]: { clientId: "b", principalId: "pb" } } as const;

  /** One round: the hook's pass with the inputs `hookInputs`, then upstream's; what each did, and the keys after. */
  async function rounds(harness: Harness, hookInputs: readonly string[], count: number): Promise<Array<{ hook: string; upstream: string; keys: string[] }>> {
    const outcomes: Array<{ hook: string; upstream: string; keys: string[] }> = [];
    for (let round = 0; round < count; round += 1) {
      const hook = await sync(harness, hookInputs, true).then(
        (result) => (result.wrote ? "wrote" : "unchanged"),
        (error: unknown) => (error instanceof DesiredSetDisagreementError ? "refused" : `failed: ${String(error)}`),
      );
      const upstream = await upstreamSyncOnce({
        store: harness.store,
        partitionKey: location.partitionKey,
        clusterDocumentId: location.clusterDocumentId,
        serviceProviderClusterDocumentId: location.documentId,
        identities: answers,
        now: harness.dependencies.now(),
        random: () => 0.5,
      });
      outcomes.push({ hook, upstream, keys: Object.keys((persistedSubtree(harness).identities as JsonObject | undefined) ?? {}).sort() });
    }
    return outcomes;
  }

  function harnessDeclaring(documentSet: readonly string[]): Harness {
    return createHarness({
      documents: [
        buildClusterDocument({ dataPlaneOperators: Object.fromEntries(documentSet.map((id, index) => [`operator-${index}`, id])) }),
        buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: {} }),
      ],
      identities: { [identityA]: resolved("a", "pa"), [identityB]: resolved("b", "pb") },
    });
  }

  it("inputs that name another set: the hook refuses every pass and writes nothing, upstream writes the document's set once, then nobody writes", async () => {
    const harness = harnessDeclaring([identityA]);
    const outcomes = await rounds(harness, [identityA, identityB], 4);
    expect(outcomes).toEqual([
      { hook: "refused", upstream: "wrote", keys: [keyA] },
      ...Array.from({ length: 3 }, () => ({ hook: "refused", upstream: "upToDate", keys: [keyA] })),
    ]);
    expect(harness.store.appliedPatches()).toHaveLength(1);
    expect(harness.reader.calls).toHaveLength(0);
  });

  it("inputs that name the document's set: one writer records it, the other finds it current; the same across rechecks", async () => {
    const harness = harnessDeclaring([identityA, identityB]);
    const first = await rounds(harness, [identityB, identityA], 3);
    expect(first).toEqual([
      { hook: "wrote", upstream: "upToDate", keys: [keyA, keyB] },
      { hook: "unchanged", upstream: "upToDate", keys: [keyA, keyB] },
      { hook: "unchanged", upstream: "upToDate", keys: [keyA, keyB] },
    ]);
    // Past every recheck time each writer refreshes the same entries; neither removes or adds one.
    harness.clock.advance(19 * 60 * 60 * 1000);
    const later = await rounds(harness, [identityA, identityB], 2);
    expect(later.map((round) => round.keys)).toEqual([
      [keyA, keyB],
      [keyA, keyB],
    ]);
    expect(later[0].hook).toBe("wrote");
    expect(later.slice(1).every((round) => round.hook === "unchanged" && round.upstream === "upToDate")).toBe(true);
    const entries = persistedSubtree(harness).identities as Record<string, JsonObject>;
    expect(entries[keyA]).toMatchObject({ clientId: "a", principalId: "pa" });
    expect(entries[keyB]).toMatchObject({ clientId: "b", principalId: "pb" });
  });

  it("a document whose set changes: upstream follows it, the hook refuses until its inputs name the new set, then both settle", async () => {
    const harness = harnessDeclaring([identityA]);
    expect(await rounds(harness, [identityA], 1)).toEqual([{ hook: "wrote", upstream: "upToDate", keys: [keyA] }]);
    harness.store.mutate(location.partitionKey, location.clusterDocumentId, (document) => {
      const identities = (document.properties as JsonObject).customerProperties as JsonObject;
      (((identities.platform as JsonObject).operatorsAuthentication as JsonObject).userAssignedIdentities as JsonObject).dataPlaneOperators = {
        a: identityA,
        b: identityB,
      };
    });
    expect(await rounds(harness, [identityA], 2)).toEqual([
      { hook: "refused", upstream: "wrote", keys: [keyA, keyB] },
      { hook: "refused", upstream: "upToDate", keys: [keyA, keyB] },
    ]);
    expect(await rounds(harness, [identityA, identityB], 2)).toEqual([
      { hook: "unchanged", upstream: "upToDate", keys: [keyA, keyB] },
      { hook: "unchanged", upstream: "upToDate", keys: [keyA, keyB] },
    ]);
  });
});
