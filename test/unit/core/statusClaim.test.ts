import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../../resources/core/json";
import { claimChanges, storedClaimOf, withClaim } from "../../../resources/core/statusClaim";
import { statusPatchOperations } from "../../../resources/core/statusPatch";
import { buildServiceProviderClusterDocument, storedEntry, storedStatus, identityResourceId } from "../../fixtures/documents";

const identityA = identityResourceId("identity-a");
const status = storedStatus([storedEntry(identityA, { clientId: "c", principalId: "p" })], "2026-08-15T00:00:00Z");

describe("the claim of the owned subtree", () => {
  it("is read from the subtree, and absent when the subtree or the field is", () => {
    expect(storedClaimOf(buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: { ...status, claimedBy: "x" } }))).toBe("x");
    expect(storedClaimOf(buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: status }))).toBeUndefined();
    expect(storedClaimOf(buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: "absent" }))).toBeUndefined();
    expect(storedClaimOf(buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: { ...status, claimedBy: 7 } }))).toBeUndefined();
  });

  it("is set into, or dropped from, the subtree the status patch writes, whichever path it sets", () => {
    const document = buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: { ...status, claimedBy: "old", tenantHint: 1 } });
    const operations = statusPatchOperations(document, { identities: {} }, '"etag"');
    const taken = withClaim(operations, { set: "new" });
    expect(taken[0]).toEqual({ op: "set", path: "/properties/status/dataPlaneOperatorsManagedIdentities", value: { tenantHint: 1, claimedBy: "new" } });
    expect(taken.slice(1)).toEqual(operations.slice(1));
    expect(withClaim(operations, "drop")[0]).toEqual({ op: "set", path: "/properties/status/dataPlaneOperatorsManagedIdentities", value: { tenantHint: 1 } });
    // A document without a status object gets the whole status object; the claim goes inside it.
    const bare = buildServiceProviderClusterDocument({ overrides: { properties: { status: undefined } } });
    const created = withClaim(statusPatchOperations(bare, status, '"etag"'), { set: "new" })[0] as { value: JsonObject };
    expect((created.value.dataPlaneOperatorsManagedIdentities as JsonObject).claimedBy).toBe("new");
  });

  it("changes only when the write would change it", () => {
    const claimed = buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: { ...status, claimedBy: "x" } });
    const unclaimed = buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: status });
    expect([claimChanges(claimed, { set: "x" }), claimChanges(claimed, { set: "y" }), claimChanges(claimed, "drop")]).toEqual([false, true, true]);
    expect([claimChanges(unclaimed, { set: "x" }), claimChanges(unclaimed, "drop")]).toEqual([true, false]);
  });
});
