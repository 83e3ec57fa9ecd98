/**
 * The decisions of one pass, without a sandbox or a fake store: what each half writes into the
 * document the write read, and what the pass reports once it wrote.
 */
import { describe, expect, it } from "vitest";
import { AzureAccessError } from "../../../resources/core/errors";
import { desiredFromClusterDocument, desiredIdentitySet } from "../../../resources/core/clusterDocument";
import { locate } from "../../../resources/core/documentLocation";
import { UserAssignedIdentityReadError } from "../../../resources/core/errors";
import type { PassDecisions, SyncResult } from "../../../resources/core/passDecision";
import { decideHalves, reportPass } from "../../../resources/core/passDecision";
import { dataPlaneRefusal, lookupsAccessError } from "../../../resources/core/statusDecision";
import { msiHalf, planMsiHalf } from "../../../resources/core/msiManagedIdentities";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";
import { parsedCluster } from "../../fakes/syncHarness";
import { buildClusterDocument, buildServiceProviderClusterDocument, fixedNow, identityResourceId, storedEntry, storedStatus } from "../../fixtures/documents";

const location = locate(parsedCluster());
const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const desired = desiredIdentitySet({ "operator-a": identityA, "operator-b": identityB }).identities;
const context = { now: fixedNow, random: () => 0, idsOnLookupFailure: "keep" as const, guard: undefined };
const resolved = { kind: "resolved" as const, clientId: "client", principalId: "principal" };
const throttled = { kind: "failed" as const, error: { code: "TooManyRequests", statusCode: 429, message: "slow down" } };

function decisions(overrides: Partial<PassDecisions> = {}): PassDecisions {
  return {
    dataPlane: { kind: "work", reason: "neverChecked", desired },
    dataPlaneAnswer: { outcomes: [resolved, throttled], credentialScope: "process" },
    basis: {},
    msi: { kind: "current" },
    msiAnswer: undefined,
    ...overrides,
  };
}

const written: SyncResult = {
  documentId: location.documentId,
  partitionKey: location.partitionKey,
  serviceProviderClusterResourceId: location.serviceProviderClusterResourceId,
  desiredSource: "inputs",
  serviceManagedIdentity: undefined,
  status: {},
  msiStatus: {},
  skippedReason: undefined,
  msiSkippedReason: undefined,
  workReason: "neverChecked",
  msiWorkReason: undefined,
  wrote: true,
  writeAttempts: 1,
  lookups: 2,
  failures: [],
};

describe("the halves a pass writes", () => {
  it("writes the data plane half from its outcomes, keeping a throttled identity's stored IDs beside its error, and leaves the MSI half without an answer alone", () => {
    const document = buildServiceProviderClusterDocument({
      dataPlaneOperatorsManagedIdentities: storedStatus([storedEntry(identityB, { clientId: "old-client", principalId: "old-principal" })]),
    });
    const halves = decideHalves(decisions(), document, false, context);
    expect(halves.msi).toBeUndefined();
    expect(halves.dataPlane?.earliestRecheckTime).toBeUndefined();
    expect(halves.dataPlane?.identities?.[identityA.toLowerCase()]).toEqual({ resourceID: identityA, clientId: "client", principalId: "principal" });
    expect(halves.dataPlane?.identities?.[identityB.toLowerCase()]).toMatchObject({ clientId: "old-client", principalId: "old-principal" });
    expect(halves.dataPlane?.identities?.[identityB.toLowerCase()]?.retrievalError).toMatch(/^TooManyRequests \(HTTP 429\)/);
  });

  it("writes neither half when their answers leave what is stored", () => {
    const current = { identities: { [identityA.toLowerCase()]: { resourceID: identityA, clientId: "client", principalId: "principal" } } };
    const document = buildServiceProviderClusterDocument({
      dataPlaneOperatorsManagedIdentities: dataPlaneHalf.toJson({ ...current, earliestRecheckTime: "2026-08-15T00:00:00Z" }),
    });
    const stored = msiHalf.read(document).status;
    const msiDesired = planMsiHalf(desiredFromCluster(), msiHalf.read(document), fixedNow, true);
    if (msiDesired.kind !== "work") throw new Error("expected work");
    const halves = decideHalves(
      decisions({
        dataPlane: { kind: "work", reason: "forced", desired: desired.slice(0, 1) },
        dataPlaneAnswer: { outcomes: [resolved], credentialScope: "process" },
        msi: msiDesired,
        msiAnswer: { answered: stored },
      }),
      document,
      false,
      context,
    );
    expect(halves).toEqual({ dataPlane: undefined, msi: undefined });
  });
});

describe("what a pass reports", () => {
  it("reports the identities whose failure the persisted status records, with the result attached", () => {
    const status = { identities: { [identityB.toLowerCase()]: { resourceID: identityB, retrievalError: "TooManyRequests (HTTP 429): slow down" } } };
    const error = capture(() => reportPass(location, { ...written, status }, decisions(), { dataPlane: status }));
    expect(error).toBeInstanceOf(UserAssignedIdentityReadError);
    expect((error as { result?: SyncResult }).result?.failures.map((failure) => failure.resourceId)).toEqual([identityB]);
  });

  it("reports no failure another writer answered meanwhile", () => {
    const status = { identities: { [identityB.toLowerCase()]: { resourceID: identityB, clientId: "theirs", principalId: "theirs" } } };
    expect(reportPass(location, { ...written, status }, decisions(), {}).failures).toEqual([]);
  });

  it("names both halves' errors, the data plane half's first", () => {
    const accessError = new AzureAccessError({
      documentId: location.documentId,
      error: { code: "AuthenticationFailed", message: "expired" },
      credential: "the hook's",
    });
    const msiError = new Error("the data plane did not answer");
    const error = capture(() =>
      reportPass(location, { ...written, wrote: false }, decisions({ dataPlaneAnswer: { error: accessError }, msiAnswer: { error: msiError } }), {}),
    );
    expect(error).toBe(accessError);
    expect(error.message).toMatch(/AuthenticationFailed[\s\S]*\nand: the data plane did not answer$/);
    expect((error as { result?: unknown }).result).toBeUndefined();
  });
});

describe("what ends a half before any write", () => {
  it("is a lookup failure not about one identity, or every lookup failing the same transient way", () => {
    const global = { kind: "global" as const, error: { code: "AuthenticationFailed", message: "expired" } };
    const options = { credential: "the hook's", idsOnLookupFailure: "keep" as const, shared: true };
    expect(lookupsAccessError(location, [resolved, global], options)?.message).toContain("AuthenticationFailed");
    expect(lookupsAccessError(location, [throttled, throttled], options)?.message).toContain("TooManyRequests");
    expect(lookupsAccessError(location, [throttled, throttled], { ...options, shared: false })).toBeUndefined();
    expect(lookupsAccessError(location, [throttled, throttled], { ...options, idsOnLookupFailure: "clear" })).toBeUndefined();
    expect(lookupsAccessError(location, [throttled, resolved], options)).toBeUndefined();
  });

  it("is inputs naming another set than the cluster document, named with both", () => {
    const fromCluster = desiredFromCluster();
    expect(dataPlaneRefusal(fromCluster, desired, location)?.message).toContain(identityB);
  });
});

function desiredFromCluster(): Exclude<ReturnType<typeof desiredFromClusterDocument>, { kind: "deleting" }> {
  const verdict = desiredFromClusterDocument(buildClusterDocument());
  if (verdict.kind === "deleting") throw new Error("expected a live cluster document");
  return verdict;
}

function capture(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}
