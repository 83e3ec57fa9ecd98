import { describe, expect, it } from "vitest";
import { UserAssignedIdentityReadError, isCosmosDocumentError } from "../../../resources/core/errors";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import { maxRetrievalErrorLength } from "../../../resources/core/retrievalError";
import type { JsonObject, JsonValue } from "../../../resources/core/json";
import { locate } from "../../../resources/core/documentLocation";
import { partialResultOf, syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import type { SyncResult } from "../../../resources/sync/syncManagedIdentityStatus";
import { cosmosError } from "../../fakes/inMemoryDocumentStore";
import { resourceNotFoundError, restError } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { Harness } from "../../fakes/syncHarness";
import { createHarness, declareInClusterDocument, parsedCluster } from "../../fakes/syncHarness";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  fixedNow,
  identityResourceId,
  instanceVersionOf,
  locationOf,
  serviceProviderClusterResourceIdFor,
  storedEntry,
  storedStatus,
  subtreeOf,
  withoutOwnedFields,
} from "../../fixtures/documents";

const location = locationOf();
const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const identityC = identityResourceId("identity-c");
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();
const keyC = identityC.toLowerCase();
const hourLater = "2026-08-14T13:00:00Z";
const hourEarlier = "2026-08-14T11:00:00Z";
/** nextRecheckTime with random() = 0: now + 12 h. */
const recheckAtRandomZero = "2026-08-15T00:00:00Z";

const resolved = (clientId: string | null, principalId: string | null): IdentityScript => ({ values: { clientId, principalId } });
const simulatedFailure = new Error("simulated azure Get failure");

/** Runs a pass with the desired set given as IDs (inputs mode) or read from the cluster document (`undefined`). */
async function sync(harness: Harness, desiredIds: readonly string[] | undefined, force = false): Promise<SyncResult> {
  const desired =
    desiredIds === undefined ? undefined : desiredIdentitySet(Object.fromEntries(desiredIds.map((id, index) => [`operator-${index}`, id]))).identities;
  // The cluster document is the authority on the set: inputs naming one run where it names the same.
  if (desiredIds !== undefined) declareInClusterDocument(harness, desiredIds);
  return syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force });
}

/** Runs a pass expected to throw; returns the error. */
async function syncFailing(harness: Harness, desiredIds: readonly string[] | undefined, force = false): Promise<Error> {
  try {
    await sync(harness, desiredIds, force);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the pass to throw");
}

function persisted(harness: Harness): JsonObject | undefined {
  return harness.store.get(location.partitionKey, location.documentId);
}

function persistedSubtree(harness: Harness): JsonValue | undefined {
  return subtreeOf(persisted(harness));
}

/** `"absent"` leaves the subtree out. */
function spcWith(subtree: JsonValue, extra: Parameters<typeof buildServiceProviderClusterDocument>[0] = {}): JsonObject {
  return buildServiceProviderClusterDocument({ ...extra, dataPlaneOperatorsManagedIdentities: subtree });
}

describe("syncManagedIdentityStatus: upstream SyncOnce scenarios", () => {
  it("13: with no service managed identity, still looks up with the hook's own credential and never clears IDs it did not check", async () => {
    const harness = createHarness({
      documents: [
        buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA }, serviceManagedIdentity: null }),
        spcWith(storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourEarlier)),
      ],
      identities: { [identityA]: { values: { clientId: "a-client-now", principalId: "a-principal-now" } } },
    });
    // The MSI half needs the SMI (upstream's sibling errors without it): it writes nothing and says so, after this half was written.
    const error = await syncFailing(harness, undefined);
    expect(error.name).toBe("MsiIdentitiesError");
    expect(error.message).toMatch(/serviceManagedIdentity is not set.*nothing of status\.msiManagedIdentities was written/s);
    expect(partialResultOf(error)?.failures).toEqual([]);
    expect(harness.reader.calledKeys).toEqual([keyA]);
    const subtree = persistedSubtree(harness) as { identities: Record<string, unknown> };
    expect(subtree.identities).toEqual({ [keyA]: { resourceID: identityA, clientId: "a-client-now", principalId: "a-principal-now" } });
  });

  it("does not rewrite a failure the other writer already recorded in its own words for the same identity", async () => {
    const upstreamText =
      "failed to get Data Plane Operator Managed Identity: GET https://management.azure.com/x\nRESPONSE 403: 403 Forbidden\nERROR CODE: AuthorizationFailed\n";
    const harness = createHarness({
      documents: [spcWith({ identities: { [keyA]: { resourceID: identityA, retrievalError: upstreamText } } })],
      identities: { [identityA]: { error: restError("AuthorizationFailed", 403, "The client does not have authorization.") } },
    });
    const before = persisted(harness);
    const error = await syncFailing(harness, [identityA]);
    expect(error.message).toContain("AuthorizationFailed");
    expect(harness.store.patches()).toHaveLength(0);
    expect(persisted(harness)).toEqual(before);
  });

  it("does write when the recorded failure is of another kind", async () => {
    const upstreamText = "RESPONSE 500: 500 Internal Server Error\nERROR CODE: InternalServerError\n";
    const harness = createHarness({
      documents: [spcWith({ identities: { [keyA]: { resourceID: identityA, retrievalError: upstreamText } } })],
      identities: { [identityA]: { error: restError("AuthorizationFailed", 403, "The client does not have authorization.") } },
    });
    await syncFailing(harness, [identityA]);
    expect((persistedSubtree(harness) as { identities: Record<string, { retrievalError: string }> }).identities[keyA].retrievalError).toMatch(
      /^AuthorizationFailed \(HTTP 403\): /,
    );
  });

  it("14: clears the recheck time and prunes stale keys when a Get fails", async () => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourLater))],
      identities: { [identityB]: { error: simulatedFailure } },
    });
    const error = await syncFailing(harness, [identityB]);
    expect(error.message).toContain("simulated azure Get failure");
    expect(harness.reader.calledKeys).toEqual([keyB]);
    expect(persistedSubtree(harness)).toEqual({ identities: { [keyB]: { resourceID: identityB, retrievalError: "Error: simulated azure Get failure" } } });
  });

  it.each([
    ["clear", "15 (upstream's rule): clears previously resolved values when a Get fails", {}],
    [
      "keep",
      "15 (the default): keeps previously resolved values beside the error of a Get that says nothing about the identity",
      { clientId: "prior-client-id", principalId: "prior-principal-id" },
    ],
  ] as const)("idsOnLookupFailure %s: %s", async (idsOnLookupFailure, _title, ids) => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { clientId: "prior-client-id", principalId: "prior-principal-id" })], hourEarlier))],
      identities: { [identityA]: { error: simulatedFailure } },
      syncOptions: { idsOnLookupFailure },
    });
    const error = await syncFailing(harness, [identityA]);
    expect(error.message).toContain("simulated azure Get failure");
    const subtree = persistedSubtree(harness) as JsonObject;
    expect(subtree.earliestRecheckTime).toBeUndefined();
    expect((subtree.identities as JsonObject)[keyA]).toEqual({ resourceID: identityA, ...ids, retrievalError: "Error: simulated azure Get failure" });
  });

  it("16: records ResourceNotFound as data, not a failure, and sets a future recheck time", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: { error: resourceNotFoundError(identityA) } } });
    const result = await sync(harness, [identityA]);
    expect(result.failures).toEqual([]);
    const subtree = persistedSubtree(harness) as JsonObject;
    expect((subtree.identities as JsonObject)[keyA]).toEqual({
      resourceID: identityA,
      retrievalError:
        "ResourceNotFound (HTTP 404): The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/identity-a' under resource group 'test-rg' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
    });
    expect(subtree.earliestRecheckTime).toBe(recheckAtRandomZero);
    expect(new Date(subtree.earliestRecheckTime as string).getTime()).toBeGreaterThan(fixedNow.getTime());
  });

  it.each([
    ["ResourceGroupNotFound", restError("ResourceGroupNotFound", 404, "Resource group 'test-rg' could not be found.")],
    ["SubscriptionNotFound", restError("SubscriptionNotFound", 404, "The subscription could not be found.")],
    ["no Azure error code", restError(undefined, 404, "404 page not found")],
  ])("takes a 404 with %s for a failure, not for the identity being gone: stored IDs kept, recheck left open", async (_title, error) => {
    const harness = createHarness({
      documents: [spcWith({ identities: { [keyA]: { resourceID: identityA, clientId: "prior-client", principalId: "prior-principal" } } })],
      identities: { [identityA]: { error } },
    });
    const failure = await syncFailing(harness, [identityA]);
    expect(failure.message).toContain(`${identityA}: `);
    expect(failure.message).toContain("[stored IDs kept]");
    const subtree = persistedSubtree(harness) as JsonObject;
    expect(subtree.earliestRecheckTime).toBeUndefined();
    expect((subtree.identities as JsonObject)[keyA]).toEqual({
      resourceID: identityA,
      clientId: "prior-client",
      principalId: "prior-principal",
      retrievalError: expect.stringMatching(/^(ResourceGroupNotFound|SubscriptionNotFound|HTTP404) \(HTTP 404\): /) as unknown,
    });
  });
});

describe("syncManagedIdentityStatus: success and the write gate", () => {
  it("stores real IDs, passes empty strings through and leaves null values out", async () => {
    const harness = createHarness({
      documents: [spcWith({})],
      identities: { [identityA]: resolved("a-client", "a-principal"), [identityB]: resolved("", ""), [identityC]: resolved(null, null) },
    });
    const result = await sync(harness, [identityC, identityA, identityB]);
    expect(result).toMatchObject({ wrote: true, writeAttempts: 1, lookups: 3, workReason: "desiredSetChanged", desiredSource: "inputs", failures: [] });
    expect(persistedSubtree(harness)).toEqual({
      identities: {
        [keyA]: { resourceID: identityA, clientId: "a-client", principalId: "a-principal" },
        [keyB]: { resourceID: identityB, clientId: "", principalId: "" },
        [keyC]: { resourceID: identityC },
      },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("returns the persisted status and where it lives", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    const result = await sync(harness, [identityA]);
    expect(result.documentId).toBe(location.documentId);
    expect(result.partitionKey).toBe(location.partitionKey);
    expect(result.serviceProviderClusterResourceId).toBe(serviceProviderClusterResourceIdFor());
    expect(result.status).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("keeps every foreign field exactly and bumps instanceVersion by one", async () => {
    const before = spcWith(storedStatus([storedEntry(identityB, { clientId: "old" })], hourEarlier));
    const harness = createHarness({ documents: [before], identities: { [identityA]: resolved("c", "p") } });
    const etagBefore = harness.store.etagOf(location.partitionKey, location.documentId);
    await sync(harness, [identityA]);
    const after = persisted(harness);
    expect(withoutOwnedFields(after)).toEqual(withoutOwnedFields(before));
    expect(instanceVersionOf(after)).toBe(4);
    // As upstream's Replace does, cosmosMetadata.etag records the etag the write was based on.
    expect(((after?.properties as JsonObject).cosmosMetadata as JsonObject).etag).toBe(etagBefore);
    expect(harness.store.patches()).toHaveLength(1);
    expect(harness.store.patches()[0].ifMatchEtag).toBe(etagBefore);
  });

  it("creates the status object when the document has none", async () => {
    const harness = createHarness({
      documents: [buildServiceProviderClusterDocument({ overrides: { properties: { status: undefined } } })],
      identities: { [identityA]: resolved("c", "p") },
    });
    await sync(harness, [identityA]);
    expect(persistedSubtree(harness)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("makes no Azure call and no write on a second pass inside the recheck window", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p"), [identityB]: resolved("c2", "p2") } });
    await sync(harness, [identityA, identityB]);
    const callsAfterFirst = harness.reader.calls.length;
    const patchesAfterFirst = harness.store.patches().length;
    const documentAfterFirst = persisted(harness);
    harness.clock.advance(11 * 60 * 60 * 1000);
    const second = await sync(harness, [identityB, identityA]);
    expect(second).toMatchObject({ wrote: false, workReason: undefined, lookups: 0 });
    expect(harness.reader.calls).toHaveLength(callsAfterFirst);
    expect(harness.store.patches()).toHaveLength(patchesAfterFirst);
    expect(persisted(harness)).toEqual(documentAfterFirst);
  });

  it("looks again once the recheck time has passed and writes a new recheck time", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    await sync(harness, [identityA]);
    harness.clock.advance(12 * 60 * 60 * 1000);
    const second = await sync(harness, [identityA]);
    expect(second).toMatchObject({ wrote: true, workReason: "recheckDue", lookups: 1 });
    expect((persistedSubtree(harness) as JsonObject).earliestRecheckTime).toBe("2026-08-15T12:00:00Z");
  });

  it("looks again inside the window when an entry records a real failure, and clears it once the identity resolves", async () => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { retrievalError: "AuthorizationFailed (HTTP 403): no access yet" })], hourLater))],
      identities: { [identityA]: resolved("c", "p") },
    });
    const result = await sync(harness, [identityA]);
    expect(result.workReason).toBe("entryHasError");
    expect(persistedSubtree(harness)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("records NotFound with a recheck time, then makes no Azure call and no write inside the window", async () => {
    const harness = createHarness({
      documents: [spcWith({})],
      identities: { [identityA]: resolved("c", "p"), [identityB]: { error: resourceNotFoundError(identityB) } },
    });
    const first = await sync(harness, [identityA, identityB]);
    expect(first).toMatchObject({ wrote: true, failures: [] });
    const subtree = persistedSubtree(harness) as JsonObject;
    expect(subtree.earliestRecheckTime).toBe(recheckAtRandomZero);
    expect(((subtree.identities as JsonObject)[keyB] as JsonObject).retrievalError).toMatch(/^ResourceNotFound \(HTTP 404\): /);
    const callsAfterFirst = harness.reader.calls.length;
    const patchesAfterFirst = harness.store.patches().length;
    const documentAfterFirst = persisted(harness);
    harness.clock.advance(11 * 60 * 60 * 1000);
    const second = await sync(harness, [identityA, identityB]);
    expect(second).toMatchObject({ wrote: false, workReason: undefined, lookups: 0 });
    expect(harness.reader.calls).toHaveLength(callsAfterFirst);
    expect(harness.store.patches()).toHaveLength(patchesAfterFirst);
    expect(persisted(harness)).toEqual(documentAfterFirst);
    harness.clock.advance(60 * 60 * 1000);
    expect(await sync(harness, [identityA, identityB])).toMatchObject({ workReason: "recheckDue", lookups: 2 });
  });

  it("leaves a NotFound entry upstream wrote in its raw text alone inside the window", async () => {
    const upstreamText = `GET https://management.azure.com${identityA}\nRESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound\n`;
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { retrievalError: upstreamText })], hourLater))],
      identities: { [identityA]: resolved("c", "p") },
    });
    expect(await sync(harness, [identityA])).toMatchObject({ wrote: false, workReason: undefined, lookups: 0 });
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("skips the write of a forced pass that finds nothing new and keeps the stored recheck time", async () => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { clientId: "c", principalId: "p" })], hourLater))],
      identities: { [identityA]: resolved("c", "p") },
    });
    const result = await sync(harness, [identityA], true);
    expect(result).toMatchObject({ workReason: "forced", wrote: false, lookups: 1 });
    expect(harness.store.patches()).toHaveLength(0);
    expect((persistedSubtree(harness) as JsonObject).earliestRecheckTime).toBe(hourLater);
  });

  it("writes a forced pass that finds a rotated identity", async () => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { clientId: "c", principalId: "p" })], hourLater))],
      identities: { [identityA]: resolved("c-rotated", "p-rotated") },
    });
    await sync(harness, [identityA], true);
    expect(persistedSubtree(harness)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c-rotated", principalId: "p-rotated" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("rewrites a malformed subtree even inside the window", async () => {
    const harness = createHarness({
      documents: [spcWith({ identities: { [keyA]: { resourceID: identityA, clientId: 42 } }, earliestRecheckTime: hourLater })],
      identities: { [identityA]: resolved("c", "p") },
    });
    const result = await sync(harness, [identityA]);
    expect(result.wrote).toBe(true);
    expect(persistedSubtree(harness)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("handles an empty desired set without Azure: writes no identities and a recheck time", async () => {
    const harness = createHarness({ documents: [spcWith(storedStatus([storedEntry(identityA, { clientId: "c" })], hourEarlier))] });
    const result = await sync(harness, []);
    expect(result).toMatchObject({ wrote: true, lookups: 0, failures: [] });
    expect(harness.reader.calls).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual({ earliestRecheckTime: recheckAtRandomZero });
    const second = await sync(harness, []);
    expect(second.wrote).toBe(false);
    expect(harness.store.patches()).toHaveLength(1);
  });

  it("handles an empty desired set on a document without the subtree", async () => {
    const harness = createHarness({ documents: [spcWith("absent")] });
    await sync(harness, []);
    expect(persistedSubtree(harness)).toEqual({ earliestRecheckTime: recheckAtRandomZero });
  });
});

describe("syncManagedIdentityStatus: failures per identity", () => {
  it("persists the others and fails naming each failed identity with its code and HTTP status", async () => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([], hourEarlier))],
      identities: {
        [identityA]: resolved("a-client", "a-principal"),
        [identityB]: { error: resourceNotFoundError(identityB) },
        [identityC]: { error: restError("AuthorizationFailed", 403, "The client 'x' does not have authorization to perform action.") },
        [identityResourceId("identity-d")]: { error: restError(undefined, 503, "Service Unavailable") },
      },
    });
    const error = await syncFailing(harness, [identityA, identityB, identityC, identityResourceId("identity-d")]);
    expect(error.name).toBe("UserAssignedIdentityReadError");
    expect(error.message).toMatch(
      new RegExp(
        `^2 data plane operator managed identities could not be read: AuthorizationFailed \\(HTTP 403\\), HTTP503 \\(HTTP 503\\)\\. ` +
          `Cluster ${location.clusterName}: the other identities were written; the failed entries carry a retrievalError\\. \\[ServiceProviderCluster document ${location.documentId}\\]\n`,
      ),
    );
    expect(error.message).toContain(`  - ${identityC}: AuthorizationFailed (HTTP 403): The client 'x' does not have authorization to perform action.`);
    expect(error.message).toContain(`  - ${identityResourceId("identity-d")}: HTTP503 (HTTP 503): Service Unavailable`);
    expect(error.message).not.toContain(identityA);
    expect(error.message).not.toContain(`${identityB}:`);
    const failures = (error as UserAssignedIdentityReadError).failures.map((failure) => failure.resourceId);
    expect(failures).toEqual([identityC, identityResourceId("identity-d")]);
    const subtree = persistedSubtree(harness) as JsonObject;
    expect(subtree.earliestRecheckTime).toBeUndefined();
    expect(subtree.identities).toEqual({
      [keyA]: { resourceID: identityA, clientId: "a-client", principalId: "a-principal" },
      [keyB]: { resourceID: identityB, retrievalError: expect.stringMatching(/^ResourceNotFound \(HTTP 404\): /) as unknown },
      [keyC]: { resourceID: identityC, retrievalError: "AuthorizationFailed (HTTP 403): The client 'x' does not have authorization to perform action." },
      [identityResourceId("identity-d").toLowerCase()]: {
        resourceID: identityResourceId("identity-d"),
        retrievalError: "HTTP503 (HTTP 503): Service Unavailable",
      },
    });
    const partial = partialResultOf(error);
    expect(partial).toMatchObject({ wrote: true, lookups: 4, documentId: location.documentId });
  });

  it("says every entry carries a retrievalError when every lookup failed", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: { error: simulatedFailure } } });
    const error = await syncFailing(harness, [identityA]);
    expect(error.message).toContain(`: every entry carries a retrievalError.`);
    expect(error.message).not.toContain("the other identities were persisted");
  });

  it("does not rewrite an unchanged failing status, yet still fails", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: { error: simulatedFailure } } });
    await syncFailing(harness, [identityA]);
    const error = await syncFailing(harness, [identityA]);
    expect(error).toBeInstanceOf(UserAssignedIdentityReadError);
    expect(harness.reader.calls).toHaveLength(2);
    expect(harness.store.patches()).toHaveLength(1);
    expect(partialResultOf(error)?.wrote).toBe(false);
  });

  it("records an identity returned without properties as a failure of that identity only", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: { withoutProperties: true }, [identityB]: resolved("b", "pb") } });
    const error = await syncFailing(harness, [identityA, identityB]);
    expect(error.message).toContain(`${identityA}: MissingProperties (HTTP 200): Azure returned the identity without properties`);
    expect((persistedSubtree(harness) as JsonObject).identities).toEqual({
      [keyA]: { resourceID: identityA, retrievalError: "MissingProperties (HTTP 200): Azure returned the identity without properties" },
      [keyB]: { resourceID: identityB, clientId: "b", principalId: "pb" },
    });
  });

  it("caps a huge retrievalError at 1024 code points without splitting characters", async () => {
    const hugeCode = "𝔸".repeat(3000);
    const harness = createHarness({
      documents: [spcWith({})],
      identities: { [identityA]: { error: restError(hugeCode, 500, "😀".repeat(5000)) }, [identityB]: resolved("b", "pb") },
    });
    await syncFailing(harness, [identityA, identityB]);
    const entry = ((persistedSubtree(harness) as JsonObject).identities as JsonObject)[keyA] as JsonObject;
    const text = entry.retrievalError as string;
    expect(Array.from(text)).toHaveLength(maxRetrievalErrorLength);
    expect(text).toBe("𝔸".repeat(maxRetrievalErrorLength));
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it("keeps a long multi-line SDK message to its first line, bounded, with secrets redacted", async () => {
    const message = `${"é".repeat(600)} Bearer abcdefghijklmnopqrstuvwxyz\nRESPONSE 500\n${"x".repeat(5000)}`;
    const harness = createHarness({
      documents: [spcWith({})],
      identities: { [identityA]: { error: restError("InternalServerError", 500, message) }, [identityB]: resolved("b", "pb") },
    });
    await syncFailing(harness, [identityA, identityB]);
    const text = (((persistedSubtree(harness) as JsonObject).identities as JsonObject)[keyA] as JsonObject).retrievalError as string;
    expect(text.startsWith("InternalServerError (HTTP 500): éé")).toBe(true);
    expect(text).not.toContain("RESPONSE 500");
    expect(Array.from(text).length).toBeLessThanOrEqual(maxRetrievalErrorLength);
  });

  it("turns a lookup that outlives the timeout into a Timeout entry, even when the reader ignores the abort signal", async () => {
    const harness = createHarness({
      documents: [spcWith({})],
      identities: { [identityA]: { hang: "ignoringAbort" }, [identityB]: { hang: "untilAborted" }, [identityC]: resolved("c", "p") },
      syncOptions: { lookupTimeoutInMs: 30 },
    });
    const error = await syncFailing(harness, [identityA, identityB, identityC]);
    expect(error.message).toContain(`${identityA}: Timeout: the lookup did not complete within the configured lookup timeout`);
    expect(error.message).toContain(`${identityB}: Timeout`);
    expect((persistedSubtree(harness) as JsonObject).identities).toEqual({
      [keyA]: { resourceID: identityA, retrievalError: "Timeout: the lookup did not complete within the configured lookup timeout" },
      [keyB]: { resourceID: identityB, retrievalError: "Timeout: the lookup did not complete within the configured lookup timeout" },
      [keyC]: { resourceID: identityC, clientId: "c", principalId: "p" },
    });
  }, 5_000);

  it("gives each lookup its own abort signal", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("a", "a"), [identityB]: resolved("b", "b") } });
    await sync(harness, [identityA, identityB]);
    const [first, second] = harness.reader.calls;
    expect(first.abortSignal).not.toBe(second.abortSignal);
    expect(first.abortSignal.aborted).toBe(false);
  });
});

describe("syncManagedIdentityStatus: order and concurrency", () => {
  const many = Array.from({ length: 24 }, (_, index) => identityResourceId(`identity-${String(index).padStart(2, "0")}`));

  it("looks identities up in key order and never runs more than the limit at once", async () => {
    const scripts = Object.fromEntries(
      many.map((id, index) => [
        id,
        index % 5 === 0 ? { error: restError("AuthorizationFailed", 403, "The client does not have authorization") } : resolved(`c${index}`, `p${index}`),
      ]),
    );
    const harness = createHarness({ documents: [spcWith({})], identities: scripts, concurrency: 3, readerDelayInMs: 3 });
    const shuffled = [...many].reverse();
    const error = await syncFailing(harness, shuffled);
    expect(harness.reader.calledKeys).toEqual(many.map((id) => id.toLowerCase()));
    expect(harness.reader.peak).toBeLessThanOrEqual(3);
    expect(harness.reader.peak).toBeGreaterThan(1);
    expect(harness.limiter.peak).toBe(3);
    const failed = (error as UserAssignedIdentityReadError).failures.map((failure) => failure.resourceId);
    expect(failed).toEqual(many.filter((_, index) => index % 5 === 0));
    expect(Object.keys((persistedSubtree(harness) as JsonObject).identities as JsonObject)).toEqual(many.map((id) => id.toLowerCase()));
  });

  it("produces the same document whatever the order of the desired identities", async () => {
    const scripts = Object.fromEntries(many.map((id, index) => [id, resolved(`c${index}`, `p${index}`)]));
    const forward = createHarness({ documents: [spcWith({})], identities: scripts });
    const backward = createHarness({ documents: [spcWith({})], identities: scripts });
    await sync(forward, many);
    await sync(backward, [...many].reverse());
    expect(JSON.stringify(persistedSubtree(forward))).toBe(JSON.stringify(persistedSubtree(backward)));
  });

  it("looks an identity in another subscription up with that subscription", async () => {
    const foreign = identityResourceId("identity-x", { subscriptionId: "11111111-2222-3333-4444-555555555555", resourceGroupName: "other-rg" });
    const harness = createHarness({ documents: [spcWith({})], identities: { [foreign]: resolved("x", "y") } });
    await sync(harness, [foreign]);
    expect(harness.reader.calls[0].resourceId).toMatchObject({
      subscriptionId: "11111111-2222-3333-4444-555555555555",
      resourceGroupName: "other-rg",
      name: "identity-x",
    });
  });
});

describe("syncManagedIdentityStatus: the desired set from the cluster document", () => {
  it("reads operators from the cluster, deduplicates across casing and makes one Azure call", async () => {
    const upper = identityResourceId("IDENTITY-A", { resourceGroupName: "TEST-RG" });
    const harness = createHarness({
      documents: [buildClusterDocument({ dataPlaneOperators: { "operator-one": identityA, "operator-two": upper } }), spcWith({})],
      identities: { [identityA]: resolved("c", "p") },
    });
    const result = await sync(harness, undefined);
    expect(result.desiredSource).toBe("clusterDocument");
    expect(result.serviceManagedIdentity).toBe(identityResourceId("service-managed-identity"));
    expect(harness.reader.calls).toHaveLength(1);
    expect(Object.keys((persistedSubtree(harness) as JsonObject).identities as JsonObject)).toEqual([keyA]);
  });

  it("treats a cluster without dataPlaneOperators as an empty desired set", async () => {
    const harness = createHarness({ documents: [buildClusterDocument(), spcWith({})] });
    await sync(harness, undefined);
    expect(persistedSubtree(harness)).toEqual({ earliestRecheckTime: recheckAtRandomZero });
    expect(harness.reader.calls).toHaveLength(0);
  });

  it("does not need a service managed identity when there is nothing to look up", async () => {
    const harness = createHarness({ documents: [buildClusterDocument({ dataPlaneOperators: {}, serviceManagedIdentity: null }), spcWith({})] });
    const error = await syncFailing(harness, undefined);
    expect(error.name, "the MSI half needs it, and says so").toBe("MsiIdentitiesError");
    expect(persistedSubtree(harness)).toEqual({ earliestRecheckTime: recheckAtRandomZero });
  });

  it("skips a cluster being deleted: no Azure call, no write, status left as it is", async () => {
    const subtree = storedStatus([storedEntry(identityA, { clientId: "c" })], hourEarlier);
    const harness = createHarness({
      documents: [
        buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA, "operator-b": identityB }, deletionTimestamp: "2026-08-14T11:59:00Z" }),
        spcWith(subtree),
      ],
    });
    const result = await sync(harness, undefined);
    expect(result).toMatchObject({ skippedReason: "clusterDeleting", wrote: false, lookups: 0 });
    expect(result.status).toEqual({ identities: { [keyA]: { resourceID: identityA, clientId: "c" } }, earliestRecheckTime: hourEarlier });
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual(subtree);
  });

  it("refuses a null identity ID in the cluster document and writes nothing", async () => {
    const harness = createHarness({ documents: [buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA, "operator-b": null } }), spcWith({})] });
    const error = await syncFailing(harness, undefined);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect(error.message).toContain(
      `the cluster's HCPOpenShiftCluster document does not name its data plane operator identities in a form upstream writes: properties.customerProperties`,
    );
    expect(error.message).toContain("userAssignedIdentities.dataPlaneOperators.operator-b: identity resource ID is missing (null)");
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("refuses dataPlaneOperators of the wrong type and names the field", async () => {
    const harness = createHarness({
      documents: [
        buildClusterDocument({
          overrides: {
            properties: { customerProperties: { platform: { operatorsAuthentication: { userAssignedIdentities: { dataPlaneOperators: [identityA] } } } } },
          },
        }),
        spcWith({}),
      ],
    });
    const error = await syncFailing(harness, undefined);
    expect(error.message).toContain(
      "properties.customerProperties.platform.operatorsAuthentication.userAssignedIdentities.dataPlaneOperators is an array, expected an object",
    );
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("waits a bounded time for a missing cluster document, then fails naming it, and never creates anything", async () => {
    const harness = createHarness({
      documents: [spcWith({})],
      clusterDocument: "absent",
      syncOptions: { documentWaitInMs: 5_000, documentPollIntervalInMs: 1_000 },
    });
    const error = await syncFailing(harness, undefined);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect(error.message).toContain(`the HCPOpenShiftCluster document of cluster ${location.clusterName} (${location.clusterDocumentId})`);
    expect(error.message).toContain("does not exist after 5 s");
    expect(harness.clock.sleeps).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(harness.store.reads(location.clusterDocumentId)).toHaveLength(6);
    expect(harness.store.patches()).toHaveLength(0);
    expect(harness.store.get(location.partitionKey, location.clusterDocumentId)).toBeUndefined();
  });
});

describe("syncManagedIdentityStatus: the cluster document gates every pass", () => {
  it("with the desired set from the inputs, waits for a missing cluster document, fails naming it, makes no Azure call and writes nothing", async () => {
    const harness = createHarness({
      documents: [spcWith(storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourEarlier))],
      clusterDocument: "absent",
      identities: { [identityA]: { values: { clientId: "new", principalId: "new" } } },
      syncOptions: { documentWaitInMs: 2_000, documentPollIntervalInMs: 1_000 },
    });
    const before = persisted(harness);
    const error = await syncFailing(harness, [identityA]);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect(error.message).toContain(`the HCPOpenShiftCluster document of cluster ${location.clusterName} (${location.clusterDocumentId})`);
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(persisted(harness)).toEqual(before);
  });

  it("with the desired set from the inputs, skips a deleting cluster: no Azure call, no write, skippedReason set", async () => {
    const harness = createHarness({
      documents: [
        buildClusterDocument({ deletionTimestamp: "2026-08-14T11:00:00Z" }),
        spcWith(storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourEarlier)),
      ],
      identities: { [identityA]: { values: { clientId: "new", principalId: "new" } } },
    });
    const before = persisted(harness);
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ skippedReason: "clusterDeleting", lookups: 0, wrote: false });
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(persisted(harness)).toEqual(before);
  });

  it("treats a soft-deleted ServiceProviderCluster of a deleting cluster as absent", async () => {
    const harness = createHarness({
      documents: [
        buildClusterDocument({ deletionTimestamp: "2026-08-14T11:00:00Z" }),
        {
          ...spcWith(storedStatus([storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" })], hourEarlier)),
          deletionTimestamp: "2026-08-14T11:00:00Z",
          ttl: 30,
        },
      ],
    });
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ skippedReason: "clusterDeleting", status: {}, wrote: false });
    expect(harness.store.patches()).toHaveLength(0);
  });
});

describe("syncManagedIdentityStatus: the ServiceProviderCluster document", () => {
  it("waits a bounded time for a missing document, then fails naming it, and never creates it", async () => {
    const harness = createHarness({
      syncOptions: { documentWaitInMs: 3_000, documentPollIntervalInMs: 1_000 },
      identities: { [identityA]: resolved("c", "p") },
    });
    const error = await syncFailing(harness, [identityA]);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect((error as Error & { statusCode?: number }).statusCode).toBe(404);
    expect(error.message).toContain(`the ServiceProviderCluster document of cluster ${location.clusterName} (${location.documentId}) does not exist after 3 s`);
    expect(error.message).toContain("the resource provider creates it, this hook never does");
    expect(harness.store.reads(location.documentId)).toHaveLength(4);
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
    expect(persisted(harness)).toBeUndefined();
  });

  it("stops waiting after the bounded number of polls even when the clock stands still", async () => {
    const harness = createHarness({
      syncOptions: { documentWaitInMs: 3_000, documentPollIntervalInMs: 1_000 },
      identities: { [identityA]: resolved("c", "p") },
    });
    declareInClusterDocument(harness, [identityA]);
    const standingStill = { ...harness.dependencies, sleep: () => Promise.resolve() };
    const error = await syncManagedIdentityStatus(standingStill, {
      cluster: parsedCluster(),
      desired: desiredIdentitySet({ "operator-a": identityA }).identities,
      force: false,
    }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).toContain("does not exist");
    expect(harness.store.reads(location.documentId)).toHaveLength(4);
  });

  it("fails at once when the wait is zero", async () => {
    const harness = createHarness({ syncOptions: { documentWaitInMs: 0 } });
    await syncFailing(harness, [identityA]);
    expect(harness.clock.sleeps).toEqual([]);
    // One read of the cluster document (it gates every pass), one of the missing ServiceProviderCluster.
    expect(harness.store.reads()).toHaveLength(2);
    expect(harness.store.reads(location.documentId)).toHaveLength(1);
  });

  it("proceeds when the document appears during the wait", async () => {
    const harness = createHarness({ identities: { [identityA]: resolved("c", "p") } });
    harness.clock.onSleep = (count) => {
      if (count === 2) harness.store.put(spcWith({}));
    };
    const result = await sync(harness, [identityA]);
    expect(result.wrote).toBe(true);
    expect(harness.clock.sleeps).toHaveLength(2);
  });

  it("treats a soft-deleted document as missing", async () => {
    const harness = createHarness({ documents: [spcWith({}, { deletionTimestamp: "2026-08-14T11:00:00Z" })], syncOptions: { documentWaitInMs: 0 } });
    const error = await syncFailing(harness, [identityA]);
    expect(error.message).toContain("does not exist");
    expect(harness.store.patches()).toHaveLength(0);
    expect(harness.reader.calls).toHaveLength(0);
  });

  it("refuses a document that is not a ServiceProviderCluster and writes nothing", async () => {
    const harness = createHarness({
      documents: [buildClusterDocument(), spcWith({}, { overrides: { resourceType: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters" } })],
      identities: { [identityA]: resolved("c", "p") },
    });
    const error = await syncFailing(harness, [identityA]);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect(error.message).toContain(
      `the ServiceProviderCluster document is not in the layout upstream writes: resourceType is 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters', expected 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters'. Cluster ${location.clusterName}: nothing was written. [ServiceProviderCluster document ${location.documentId}]`,
    );
    expect(error.message).toContain("resourceType is 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters'");
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it.each([
    ["throttled (429)", 429],
    ["unavailable (503)", 503],
  ])("fails with a clear error when the read is %s", async (_title, code) => {
    const harness = createHarness({ documents: [spcWith({})] });
    harness.store.failNext("read", cosmosError(code), { id: location.documentId });
    const error = await syncFailing(harness, [identityA]);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect((error as Error & { statusCode?: number }).statusCode).toBe(code);
    expect(error.message).toContain(`[reading the ServiceProviderCluster document of cluster ${location.clusterName} (${location.documentId})]`);
    expect(error.message).toContain(`(HTTP ${code})`);
    expect(harness.reader.calls).toHaveLength(0);
  });

  it("does not retry a write that fails with 503, and says which document", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    harness.store.failNext("patch", cosmosError(503, "Service is currently unavailable."));
    const error = await syncFailing(harness, [identityA]);
    expect(error.message).toBe(
      `ServiceUnavailable (HTTP 503): Service is currently unavailable, writing the ServiceProviderCluster document. Cluster ${location.clusterName}: nothing was written. [ServiceProviderCluster document ${location.documentId}]`,
    );
    expect(harness.store.patches()).toHaveLength(1);
    expect(persistedSubtree(harness)).toEqual({});
  });
});

describe("syncManagedIdentityStatus: concurrent writers (412)", () => {
  it("re-reads after a 412, keeps the other writer's change and writes our subtree", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    const firstEtag = harness.store.etagOf(location.partitionKey, location.documentId);
    harness.store.beforeNextPatch(location.documentId, (store) => {
      store.mutate(location.partitionKey, location.documentId, (document) => {
        const properties = document.properties as JsonObject;
        properties.loadBalancerResourceID = "/changed/by/another/writer";
        ((properties.status as JsonObject).msiManagedIdentities as JsonObject).earliestRecheckTime = "2026-08-16T00:00:00Z";
        properties.cosmosMetadata = { ...(properties.cosmosMetadata as JsonObject), instanceVersion: 10 };
      });
    });
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ wrote: true, writeAttempts: 2 });
    const patches = harness.store.patches();
    expect(patches.map((patch) => patch.outcome)).toEqual(["error", "applied"]);
    expect(patches[0].ifMatchEtag).toBe(firstEtag);
    expect(patches[1].ifMatchEtag).not.toBe(firstEtag);
    const document = persisted(harness) as JsonObject;
    const properties = document.properties as JsonObject;
    expect(properties.loadBalancerResourceID).toBe("/changed/by/another/writer");
    expect(((properties.status as JsonObject).msiManagedIdentities as JsonObject).earliestRecheckTime).toBe("2026-08-16T00:00:00Z");
    expect(instanceVersionOf(document)).toBe(11);
    expect(subtreeOf(document)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
    expect(harness.reader.calls).toHaveLength(1);
    expect(harness.clock.sleeps).toHaveLength(1);
  });

  it("writes nothing more when the other writer already stored the same status", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    harness.store.beforeNextPatch(location.documentId, (store) => {
      store.mutate(location.partitionKey, location.documentId, (document) => {
        ((document.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities = {
          identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
          earliestRecheckTime: recheckAtRandomZero,
        };
      });
    });
    const result = await sync(harness, [identityA]);
    expect(result).toMatchObject({ wrote: false, writeAttempts: 1 });
    expect(harness.store.appliedPatches()).toHaveLength(0);
  });

  it("gives up after maxWriteAttempts with a clear error", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") }, syncOptions: { maxWriteAttempts: 3 } });
    harness.store.beforeNextPatch(
      location.documentId,
      (store) => store.mutate(location.partitionKey, location.documentId, (document) => ((document.properties as JsonObject).spec = { touched: Date.now() })),
      Number.POSITIVE_INFINITY,
    );
    const error = await syncFailing(harness, [identityA]);
    expect(isCosmosDocumentError(error)).toBe(true);
    expect((error as Error & { statusCode?: number }).statusCode).toBe(412);
    expect(error.message).toContain(
      `PreconditionFailed (HTTP 412): One of the specified pre-condition is not met after 3 attempts (the document kept changing between read and write), writing the ServiceProviderCluster document. Cluster ${location.clusterName}: nothing was written.`,
    );
    expect(harness.store.patches()).toHaveLength(3);
    expect(harness.store.appliedPatches()).toHaveLength(0);
    expect(persistedSubtree(harness)).toEqual({});
  });

  it("fails clearly when the document is deleted between the 412 and the re-read", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    harness.store.beforeNextPatch(location.documentId, (store) => {
      store.mutate(location.partitionKey, location.documentId, () => undefined);
    });
    harness.clock.onSleep = () => harness.store.remove(location.partitionKey, location.documentId);
    const error = await syncFailing(harness, [identityA]);
    expect(error.message).toBe(
      `the ServiceProviderCluster document was deleted while the status was being written. Cluster ${location.clusterName}: nothing was written. [ServiceProviderCluster document ${location.documentId}]`,
    );
    expect(persisted(harness)).toBeUndefined();
  });

  it("fails with 404 when the document is deleted just before the write, and does not create it", async () => {
    const harness = createHarness({ documents: [spcWith({})], identities: { [identityA]: resolved("c", "p") } });
    harness.store.beforeNextPatch(location.documentId, (store) => store.remove(location.partitionKey, location.documentId));
    const error = await syncFailing(harness, [identityA]);
    expect((error as Error & { statusCode?: number }).statusCode).toBe(404);
    expect(error.message).toContain(
      `the ServiceProviderCluster document was deleted while the status was being written (NotFound, HTTP 404). Cluster ${location.clusterName}:`,
    );
    expect(persisted(harness)).toBeUndefined();
  });
});

describe("locate", () => {
  it("derives the document ids and the lowercase partition key from the cluster", () => {
    const cluster = parsedCluster({
      subscriptionId: "0465BC32-C654-41B8-8D87-9815D7ABE8F6",
      resourceGroupName: "some-resource-group",
      clusterName: "some-hcp-cluster",
    });
    expect(locate(cluster)).toEqual({
      documentId: "7de6e0ae-f384-51a8-97e2-1177ac229b7c",
      partitionKey: "0465bc32-c654-41b8-8d87-9815d7abe8f6",
      serviceProviderClusterResourceId:
        "/subscriptions/0465BC32-C654-41B8-8D87-9815D7ABE8F6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster/serviceProviderClusters/default",
      clusterDocumentId: "68bc6026-a8a9-5706-92c5-25d3313bcabb",
      subscriptionDocumentId: "c4680ff9-30cf-5f7b-8821-8bf7831b673a",
      clusterName: "0465bc32-c654-41b8-8d87-9815d7abe8f6/some-resource-group/some-hcp-cluster",
    });
  });

  it("derives the subscription's document id as upstream does (the literal of its delete_orphaned_cosmos test)", () => {
    const cluster = parsedCluster({
      subscriptionId: "A433A095-1277-44F1-8453-8D61A4D848C2",
      resourceGroupName: "unimportantPostponement",
      clusterName: "monstrousPrecinct",
    });
    expect(locate(cluster).subscriptionDocumentId).toBe("718f75e1-6967-5ce1-ab3c-4f991504b7eb");
  });
});
