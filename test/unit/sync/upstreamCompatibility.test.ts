/**
 * Documents cross the boundary both ways: a status the upstream Go backend wrote must be read
 * (and not rewritten for cosmetic reasons) by this hook, and a status this hook wrote must have
 * exactly the shape the Go types decode. The upstream document below is written out by hand from
 * the upstream layout (docs/cosmos-data-flow.md; Go's encoding: lowercased keys, `resourceID` re-parsed from the key,
 * nil pointers omitted, whole-second RFC 3339 times, the raw SDK error text).
 */
import { describe, expect, it } from "vitest";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../../../resources/core/azureResourceId";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import type { JsonObject } from "../../../resources/core/json";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import { resourceNotFoundError } from "../../fakes/scriptedUserAssignedIdentityReader";
import { createHarness, declareInClusterDocument, parsedCluster } from "../../fakes/syncHarness";
import { buildServiceProviderClusterDocument, locationOf, withoutOwnedFields } from "../../fixtures/documents";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";

const location = locationOf();
// As the operator typed them (mixed case) and as upstream stores them (re-parsed from the lowercased key).
const typedA =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/Test-RG/providers/Microsoft.ManagedIdentity/userAssignedIdentities/Identity-A";
const typedB =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/Test-RG/providers/Microsoft.ManagedIdentity/userAssignedIdentities/Identity-B";
const keyA = typedA.toLowerCase();
const keyB = typedB.toLowerCase();
const upstreamResourceIdA =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/microsoft.managedidentity/userassignedidentities/identity-a";
const upstreamResourceIdB =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/microsoft.managedidentity/userassignedidentities/identity-b";

/** The subtree as upstream's controller writes it after a fully successful pass. */
const upstreamSubtree: JsonObject = {
  identities: {
    [keyA]: { resourceID: upstreamResourceIdA, clientId: "11111111-1111-1111-1111-111111111111", principalId: "22222222-2222-2222-2222-222222222222" },
    [keyB]: { resourceID: upstreamResourceIdB, clientId: "", principalId: "33333333-3333-3333-3333-333333333333" },
  },
  earliestRecheckTime: "2026-08-15T03:17:42Z",
};

function upstreamDocument(subtree: JsonObject = upstreamSubtree): JsonObject {
  const document = buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: subtree });
  (document.properties as JsonObject).cosmosMetadata = {
    ...((document.properties as JsonObject).cosmosMetadata as JsonObject),
    etag: '"stale-copy"',
    instanceVersion: 3,
  };
  return document;
}

const desired = desiredIdentitySet({ "operator-a": typedA, "operator-b": typedB }).identities;

describe("a status written by the upstream backend", () => {
  it("is read without a single problem", () => {
    expect(dataPlaneHalf.read(upstreamDocument())).toEqual({ status: upstreamSubtree, present: true, problems: [] });
  });

  it("satisfies the gate: inside the recheck window nothing is looked up or written, whatever the ID casing", async () => {
    const harness = createHarness({ documents: [upstreamDocument()] });
    declareInClusterDocument(harness, [typedA, typedB]);
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false });
    expect(result).toMatchObject({ workReason: undefined, wrote: false, lookups: 0 });
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("is not rewritten when Azure still returns the same values (resourceID compares case-insensitively)", async () => {
    const harness = createHarness({
      documents: [upstreamDocument()],
      identities: {
        [typedA]: { values: { clientId: "11111111-1111-1111-1111-111111111111", principalId: "22222222-2222-2222-2222-222222222222" } },
        [typedB]: { values: { clientId: "", principalId: "33333333-3333-3333-3333-333333333333" } },
      },
    });
    declareInClusterDocument(harness, [typedA, typedB]);
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: true });
    expect(result.wrote).toBe(false);
    expect(harness.reader.calls).toHaveLength(2);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("keeps its raw multi-line NotFound text: no write inside the recheck window, and after it only the recheck time moves (no ping-pong of error texts)", async () => {
    const rawText =
      "GET https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/identity-b\n" +
      "--------------------------------------------------------------------------------\nRESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound\n";
    const subtree = { identities: { [keyB]: { resourceID: upstreamResourceIdB, retrievalError: rawText } }, earliestRecheckTime: "2026-08-15T03:17:42Z" };
    const harness = createHarness({ documents: [upstreamDocument(subtree)], identities: { [typedB]: { error: resourceNotFoundError(typedB) } } });
    declareInClusterDocument(harness, [typedB]);
    const request = { cluster: parsedCluster(), desired: desiredIdentitySet({ b: typedB }).identities, force: false };
    // NotFound is data: upstream set a recheck time, so the gate holds until then.
    expect(await syncManagedIdentityStatus(harness.dependencies, request)).toMatchObject({ workReason: undefined, lookups: 0, wrote: false });
    expect(harness.store.patches()).toHaveLength(0);
    harness.clock.set(new Date("2026-08-15T03:17:42Z"));
    expect(await syncManagedIdentityStatus(harness.dependencies, request)).toMatchObject({ workReason: "recheckDue", lookups: 1, wrote: true });
    const written = dataPlaneHalf.read(harness.store.get(location.partitionKey, location.documentId) as JsonObject).status.identities?.[keyB];
    // The same failure in the hook's words would only make the two writers rewrite each other.
    expect(written?.retrievalError).toBe(rawText);
    const recheck = dataPlaneHalf.read(harness.store.get(location.partitionKey, location.documentId) as JsonObject).status.earliestRecheckTime;
    expect(Date.parse(recheck ?? "")).toBeGreaterThan(Date.parse("2026-08-15T03:17:42Z"));
  });
});

describe("a status written by this hook", () => {
  it("has exactly the fields, key form and time format the upstream Go types decode, and nothing else changes", async () => {
    const before = upstreamDocument({});
    const harness = createHarness({
      documents: [before],
      identities: { [typedA]: { values: { clientId: "c-a", principalId: "p-a" } }, [typedB]: { error: resourceNotFoundError(typedB) } },
    });
    declareInClusterDocument(harness, [typedA, typedB]);
    await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false });
    const after = harness.store.get(location.partitionKey, location.documentId) as JsonObject;
    const subtree = ((after.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities as JsonObject;

    expect(Object.keys(subtree).sort()).toEqual(["earliestRecheckTime", "identities"]);
    expect(subtree.earliestRecheckTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const identities = subtree.identities as Record<string, JsonObject>;
    expect(Object.keys(identities).sort()).toEqual([keyA, keyB]);
    expect(Object.keys(identities[keyA]).sort()).toEqual(["clientId", "principalId", "resourceID"]);
    expect(Object.keys(identities[keyB]).sort()).toEqual(["resourceID", "retrievalError"]);
    for (const [key, entry] of Object.entries(identities)) {
      // Upstream parses resourceID case-insensitively and keys by its lowercased string.
      const parsed = parseResourceIdOfType(entry.resourceID, userAssignedIdentityResourceType);
      expect(parsed.ok && parsed.resourceId.key).toBe(key);
    }
    expect(((after.properties as JsonObject).cosmosMetadata as JsonObject).instanceVersion).toBe(4);
    expect(withoutOwnedFields(after)).toEqual(withoutOwnedFields(before));
  });
});
