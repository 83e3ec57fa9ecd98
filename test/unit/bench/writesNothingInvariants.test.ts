/**
 * The reliability campaign's checks of the operations that must write nothing: a delete (it
 * relinquishes the cluster), the create a rename starts with over a current status, and a delete
 * with settings that name a Cosmos resource that does not exist. Each violation must count under
 * the invariant it breaks.
 */
import { describe, expect, it } from "vitest";
import type { Document } from "../../../bench/reliability/reliabilitySandbox";
import { ownedStatus } from "../../../bench/reliability/reliabilitySandbox";
import { checkDelete, checkRenameCreate, checkSettingsFault, invariantCatalogue, invariantOf } from "../../../bench/reliability/invariants";
import { encodeOutputsStatus, operatorNamesFromKeys } from "../../../resources/core/outputsStatus";
import { outputsStatusText } from "../../../resources/core/outputsStatus";
import { buildServiceProviderClusterDocument } from "../../../sandbox/documentBuilders";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";

const clusterResourceId = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/one";
const identityKey =
  "/subscriptions/00000000-0000-0000-0000-000000000001/resourcegroups/rg/providers/microsoft.managedidentity/userassignedidentities/operator-0";
const documentId = "0f4c7b32-1a2b-4c3d-8e9f-0123456789ab";
const secrets = ["a-secret-of-the-sandbox"];

/** The document as Cosmos holds it after a pass recorded one identity. */
function storedDocument(): Document {
  return {
    ...buildServiceProviderClusterDocument({
      clusterResourceId,
      dataPlaneOperatorsManagedIdentities: {
        identities: {
          [identityKey]: { resourceID: identityKey, clientId: "11111111-1111-1111-1111-111111111111", principalId: "22222222-2222-2222-2222-222222222222" },
        },
        earliestRecheckTime: "2027-01-01T06:00:00Z",
      },
    }),
    _etag: '"00000000-0000-0000-0000-000000000007"',
    _ts: 1_790_000_000,
  };
}

/** The same document after a write that changed nothing but Cosmos's and upstream's bookkeeping. */
function rewritten(document: Document): Document {
  const copy = structuredClone(document) as Document & { properties: { cosmosMetadata: { instanceVersion: number } } };
  copy.properties.cosmosMetadata.instanceVersion += 1;
  return { ...copy, _etag: '"00000000-0000-0000-0000-000000000008"', _ts: 1_790_000_060 };
}

const deletesInvariant = invariantCatalogue.findIndex((invariant) => invariant.key === "deletes");
const settingsInvariant = invariantCatalogue.findIndex((invariant) => invariant.key === "settingsErrors");

describe("checkDelete", () => {
  it("passes a delete that succeeded with the document exactly as it was, and one whose cluster's documents were gone", () => {
    const document = storedDocument();
    expect(checkDelete({ before: document, after: structuredClone(document), writes: 0, errorMessage: undefined, documentId }, secrets)).toEqual([]);
    expect(checkDelete({ before: undefined, after: undefined, writes: 0, errorMessage: undefined, documentId }, secrets)).toEqual([]);
  });

  it("counts a write that changed only the etag, _ts and instanceVersion, naming what changed", () => {
    const document = storedDocument();
    const violations = checkDelete({ before: document, after: rewritten(document), writes: 1, errorMessage: undefined, documentId }, secrets);
    expect(violations).toEqual([
      "a delete wrote 1 time(s) to the cluster's documents: it must write nothing",
      expect.stringMatching(
        new RegExp(`^a delete changed ServiceProviderCluster document ${documentId}: /(_etag|properties/cosmosMetadata/instanceVersion): expected`),
      ) as unknown as string,
    ]);
    for (const violation of violations) expect(invariantOf(violation)).toBe(deletesInvariant);
  });

  it("counts a delete that reset the subtree, and a delete that failed", () => {
    const document = storedDocument();
    const reset = rewritten(document) as { properties: { status: Record<string, unknown> } };
    reset.properties.status.dataPlaneOperatorsManagedIdentities = {};
    const violations = checkDelete({ before: document, after: reset, writes: 1, errorMessage: "the document changed", documentId }, secrets);
    expect(violations).toHaveLength(3);
    expect(violations[0]).toBe("a delete failed: the document changed");
    for (const violation of violations) expect(invariantOf(violation)).toBe(deletesInvariant);
  });
});

describe("checkRenameCreate", () => {
  const document = storedDocument();
  const subtree = dataPlaneHalf.readSubtree(ownedStatus(document));
  const reported = outputsStatusText(encodeOutputsStatus(subtree.status, operatorNamesFromKeys([["operator-0", identityKey]])));

  it("passes a create over a current status that wrote nothing and reported the persisted status", () => {
    expect(subtree.problems).toEqual([]);
    expect(
      checkRenameCreate(
        { before: document, after: structuredClone(document), writes: 0, errorMessage: undefined, documentId, reportedStatus: reported },
        secrets,
      ),
    ).toEqual([]);
  });

  it("counts a create over a current status that wrote, even with the status itself unchanged", () => {
    const violations = checkRenameCreate(
      { before: document, after: rewritten(document), writes: 1, errorMessage: undefined, documentId, reportedStatus: reported },
      secrets,
    );
    expect(violations).toHaveLength(2);
    expect(violations[1]).toMatch(/^a rename's create changed ServiceProviderCluster document .*\/(_etag|instanceVersion)/);
    for (const violation of violations) expect(invariantOf(violation)).toBe(deletesInvariant);
  });
});

describe("checkSettingsFault, a delete", () => {
  const base = { setting: "cosmosContainer", value: "Resources-typo", returnedId: undefined } as const;

  it("passes a delete with a wrong setting that succeeded writing nothing", () => {
    const document = storedDocument();
    expect(checkSettingsFault({ ...base, operation: "delete", before: document, after: structuredClone(document), failure: undefined }, secrets)).toEqual([]);
  });

  it("counts a delete with a wrong setting that failed, or changed the document", () => {
    const document = storedDocument();
    const failed = checkSettingsFault(
      {
        ...base,
        operation: "delete",
        before: document,
        after: document,
        failure: { outcome: "writeFailed", message: "NotFound (HTTP 404): ':cosmosContainer' Resources-typo" },
      },
      secrets,
    );
    expect(failed).toEqual([expect.stringMatching(/^delete with a wrong cosmosContainer failed/) as unknown as string]);
    const changed = checkSettingsFault({ ...base, operation: "delete", before: document, after: rewritten(document), failure: undefined }, secrets);
    expect(changed).toEqual([
      expect.stringMatching(
        /^delete with a wrong cosmosContainer changed the document: \/(_etag|properties\/cosmosMetadata\/instanceVersion)/,
      ) as unknown as string,
    ]);
    for (const violation of [...failed, ...changed]) expect(invariantOf(violation)).toBe(settingsInvariant);
  });

  it("still counts an update with a wrong setting that succeeded", () => {
    const document = storedDocument();
    expect(checkSettingsFault({ ...base, operation: "update", before: document, after: document, failure: undefined }, secrets)).toEqual([
      "update with a wrong cosmosContainer succeeded",
    ]);
  });
});
