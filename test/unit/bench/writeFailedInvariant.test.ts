/**
 * The reliability campaign's check of a pass that failed at its write (bench/reliability/invariants.ts):
 * the owned subtree stays as it was, unless the write got no answer and its failure says it may have
 * landed (sync/writeStatus.ts), when either is right.
 */
import { describe, expect, it } from "vitest";
import { IdentityStore } from "../../../sandbox/identityStore";
import { checkPass } from "../../../bench/reliability/invariants";

const identityA = "/subscriptions/s/resourceGroups/rg-one/providers/Microsoft.ManagedIdentity/userAssignedIdentities/a";
const keyA = identityA.toLowerCase();

function document(clientId: string): Record<string, unknown> {
  return {
    id: "doc",
    properties: {
      status: { dataPlaneOperatorsManagedIdentities: { identities: { [keyA]: { resourceID: identityA, clientId, principalId: `${clientId}-p` } } } },
    },
  };
}

function failedWrite(after: Record<string, unknown>, errorMessage: string): string[] {
  const identities = new IdentityStore();
  identities.create(identityA, { clientId: "a2", principalId: "a2-p" });
  return checkPass(
    {
      outcome: "writeFailed",
      before: document("a1"),
      after,
      expectedForeign: { id: "doc", properties: { status: {} } },
      desired: new Map([[keyA, identityA]]),
      reportedStatus: undefined,
      deletedDuringPass: false,
      errorMessage,
      documentId: "doc",
    },
    identities,
    [],
  );
}

describe("a pass that failed at its write", () => {
  const nothingWritten =
    "PreconditionFailed (HTTP 412): … after 5 attempts, writing the ServiceProviderCluster document. Cluster c: nothing was written. [doc]";
  const mayHaveLanded =
    "ECONNRESET: socket hang up, writing the ServiceProviderCluster document. Cluster c: the write got no answer and may have landed; the next pass reads the document back and writes only what it still lacks. [doc]";

  it("changed nothing when its failure says nothing was written", () => {
    expect(failedWrite(document("a1"), nothingWritten)).toEqual([]);
    expect(failedWrite(document("a2"), nothingWritten)).toEqual(["a failed write changed the owned subtree (a partial write)"]);
  });

  it("may have changed the subtree when its failure says the write got no answer and may have landed", () => {
    expect(failedWrite(document("a1"), mayHaveLanded)).toEqual([]);
    expect(failedWrite(document("a2"), mayHaveLanded)).toEqual([]);
  });
});
