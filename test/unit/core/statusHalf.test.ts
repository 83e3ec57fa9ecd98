import { describe, expect, it } from "vitest";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";
import { msiHalf } from "../../../resources/core/msiManagedIdentities";
import { identityResourceId } from "../../fixtures/documents";

const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();
const now = new Date("2026-08-15T00:00:00Z");

describe("one half of the status, for both halves", () => {
  it("gates both halves alike: another set, no recheck time, a recheck time that has come", () => {
    const dpDesired = [{ key: keyA, resourceId: identityA }];
    const msiDesired = { controlPlaneOperators: [{ key: keyA, resourceId: identityA }], serviceManagedIdentity: { key: keyB, resourceId: identityB } };
    const later = "2026-08-16T00:00:00Z";
    expect(dataPlaneHalf.workReason(dpDesired, { identities: {} }, now)).toBe("desiredSetChanged");
    expect(dataPlaneHalf.workReason(dpDesired, { identities: { [keyA]: { resourceID: identityA } } }, now)).toBe("neverChecked");
    expect(dataPlaneHalf.workReason(dpDesired, { identities: { [keyA]: { resourceID: identityA } }, earliestRecheckTime: later }, now)).toBeUndefined();
    expect(dataPlaneHalf.workReason(dpDesired, { identities: { [keyA]: { resourceID: identityA } }, earliestRecheckTime: now.toISOString() }, now)).toBe(
      "recheckDue",
    );
    const msiStored = { earliestRecheckTime: later, controlPlaneOperatorsIdentities: { [keyA]: { resourceId: identityA } } };
    // The service managed identity is part of the set: without it the half has work.
    expect(msiHalf.workReason(msiDesired, msiStored, now)).toBe("desiredSetChanged");
    expect(msiHalf.workReason(msiDesired, { ...msiStored, serviceManagedIdentity: { resourceId: identityB.toUpperCase() } }, now)).toBeUndefined();
  });

  it("has work for a data plane entry that records a real failure, not for a NotFound one", () => {
    const desired = [{ key: keyA, resourceId: identityA }];
    const stored = (retrievalError: string) => ({
      identities: { [keyA]: { resourceID: identityA, retrievalError } },
      earliestRecheckTime: "2026-08-16T00:00:00Z",
    });
    expect(dataPlaneHalf.workReason(desired, stored("Throttled (HTTP 429): slow down"), now)).toBe("entryHasError");
    expect(dataPlaneHalf.workReason(desired, stored("ResourceNotFound (HTTP 404): gone"), now)).toBeUndefined();
  });

  it("names the entries and fields that differ, in struct order, keys sorted", () => {
    expect(
      dataPlaneHalf.changes(
        { identities: { [keyA]: { resourceID: identityA, clientId: "c" }, [keyB]: { resourceID: identityB } } },
        { identities: { [keyA]: { resourceID: identityA.toUpperCase(), clientId: "d", principalId: "p" } }, earliestRecheckTime: "2026-08-16T00:00:00Z" },
      ),
    ).toEqual([
      { field: "identities", key: keyA, change: "changed", fields: ["clientId", "principalId"] },
      { field: "identities", key: keyB, change: "removed", fields: [] },
    ]);
    expect(msiHalf.changes({}, { serviceManagedIdentity: { resourceId: identityB } })).toEqual([
      { field: "serviceManagedIdentity", key: undefined, change: "added", fields: [] },
    ]);
  });

  it("writes nothing after a conflict when the other writer left the half current, and nothing equal to what is stored", () => {
    const desired = [{ key: keyA, resourceId: identityA }];
    const current = { status: { identities: { [keyA]: { resourceID: identityA } }, earliestRecheckTime: "2026-08-16T00:00:00Z" }, present: true, problems: [] };
    const next = { identities: { [keyA]: { resourceID: identityA, clientId: "c" } }, earliestRecheckTime: "2026-08-16T00:00:00Z" };
    expect(dataPlaneHalf.decideWrite({ desired, current, reread: true, now }, () => next)).toBeUndefined();
    expect(dataPlaneHalf.decideWrite({ desired, current, reread: false, now }, () => next)).toEqual(next);
    expect(dataPlaneHalf.decideWrite({ desired, current, reread: false, now }, (stored) => ({ ...stored }))).toBeUndefined();
    // A malformed stored half is always rewritten.
    expect(dataPlaneHalf.decideWrite({ desired, current: { ...current, problems: ["x"] }, reread: false, now }, (stored) => ({ ...stored }))).toEqual(
      current.status,
    );
  });

  it("keeps a still-valid recheck time when a pass finds nothing new, in both halves; a due one moves", () => {
    const stillValid = "2026-08-16T00:00:00Z";
    const moved = "2026-08-15T14:00:00Z";
    const msiDesired = { controlPlaneOperators: [{ key: keyA, resourceId: identityA }], serviceManagedIdentity: { key: keyB, resourceId: identityB } };
    const msiEntries = {
      controlPlaneOperatorsIdentities: { [keyA]: { resourceId: identityA, clientId: "c-a", principalId: "p-a" } },
      serviceManagedIdentity: { resourceId: identityB, clientId: "c-b", principalId: "p-b" },
    };
    const msiStored = { present: true, problems: [], status: { earliestRecheckTime: stillValid, ...msiEntries } };
    // The same answers with a new recheck time: nothing to write.
    expect(
      msiHalf.decideWrite({ desired: msiDesired, current: msiStored, reread: false, now }, () => ({ earliestRecheckTime: moved, ...msiEntries })),
    ).toBeUndefined();
    // Another answer writes, with its own recheck time.
    const rotated = { ...msiEntries, serviceManagedIdentity: { resourceId: identityB, clientId: "c-b2", principalId: "p-b2" } };
    expect(msiHalf.decideWrite({ desired: msiDesired, current: msiStored, reread: false, now }, () => ({ earliestRecheckTime: moved, ...rotated }))).toEqual({
      earliestRecheckTime: moved,
      ...rotated,
    });
    // A recheck time that has come moves even when nothing else changed.
    const due = { ...msiStored, status: { ...msiStored.status, earliestRecheckTime: now.toISOString() } };
    expect(msiHalf.decideWrite({ desired: msiDesired, current: due, reread: false, now }, () => ({ earliestRecheckTime: moved, ...msiEntries }))).toEqual({
      earliestRecheckTime: moved,
      ...msiEntries,
    });
    // The data plane operators' half follows the same rule; a decided half recording a failure has no recheck time to keep.
    const dpDesired = [{ key: keyA, resourceId: identityA }];
    const identities = { [keyA]: { resourceID: identityA, clientId: "c-a", principalId: "p-a" } };
    const dpStored = { present: true, problems: [], status: { identities, earliestRecheckTime: stillValid } };
    expect(
      dataPlaneHalf.decideWrite({ desired: dpDesired, current: dpStored, reread: false, now }, () => ({ identities, earliestRecheckTime: moved })),
    ).toBeUndefined();
    const failed = { [keyA]: { resourceID: identityA, clientId: "c-a", principalId: "p-a", retrievalError: "Throttled (HTTP 429): slow down" } };
    expect(dataPlaneHalf.keepRecheckTime({ identities: failed }, dpStored.status, now)).toEqual({ identities: failed });
  });

  it("reads each half with its own struct's rules and names the field of each problem", () => {
    expect(dataPlaneHalf.readSubtree({ identities: { [keyA]: null }, earliestRecheckTime: "soon" }).problems).toEqual([
      `identities['${keyA}'] is not a valid entry`,
      "earliestRecheckTime is not an RFC 3339 timestamp",
    ]);
    // Go decodes null into a nil MSI entry: the key is there, the entry says nothing.
    expect(msiHalf.readSubtree({ controlPlaneOperatorsIdentities: { [keyA]: null }, earliestRecheckTime: "soon" })).toEqual({
      status: { controlPlaneOperatorsIdentities: { [keyA]: {} } },
      present: true,
      problems: ["msiManagedIdentities.earliestRecheckTime is not an RFC 3339 timestamp"],
    });
  });

  it("carries fields it does not know over after the known ones, except the claimedBy earlier builds wrote", () => {
    const stored = { claimedBy: "0123456789abcdef", tenantWide: true, identities: { [keyA]: { resourceID: identityA, tenantId: "t" } } };
    const json = dataPlaneHalf.toJson({ identities: { [keyA]: { resourceID: identityA, clientId: "c" } } }, stored);
    expect(JSON.stringify(json)).toBe(JSON.stringify({ identities: { [keyA]: { resourceID: identityA, clientId: "c", tenantId: "t" } }, tenantWide: true }));
  });
});
