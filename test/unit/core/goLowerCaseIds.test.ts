/**
 * Issue 10 item 5: a cluster or identity whose names contain letters JavaScript lowercases
 * differently from Go (Turkish İ, Greek final Σ, ß/ẞ, Cyrillic, Kelvin sign) gets exactly the
 * document id, partition key and identity key upstream (Go) computes. Every expected value is read
 * from test/fixtures/goVectors.json, which Go printed (see goStrings.test.ts), never from the code
 * under test.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../../../resources/core/azureResourceId";
import { cosmosItemIdFor, locate } from "../../../resources/core/documentLocation";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import type { JsonObject } from "../../../resources/core/json";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import { createHarness, parsedCluster } from "../../fakes/syncHarness";
import { buildClusterDocument, buildServiceProviderClusterDocument, type ClusterCoordinates } from "../../fixtures/documents";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";

interface ArmVector {
  readonly armResourceId: string;
  readonly lower: string;
  readonly documentId: string;
}

const vectors = (JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../fixtures/goVectors.json"), "utf8")) as { armResourceIds: ArmVector[] })
  .armResourceIds;
const clusterPath = "/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/";
// Clusters for which Go also printed the ServiceProviderCluster's vector.
const clusters = vectors.filter(
  (vector) =>
    vector.armResourceId.includes(clusterPath) && vectors.some((other) => other.armResourceId === `${vector.armResourceId}/serviceProviderClusters/default`),
);
const identities = vectors.filter((vector) => vector.armResourceId.includes("/userAssignedIdentities/"));

function goVector(armResourceId: string): ArmVector {
  const vector = vectors.find((candidate) => candidate.armResourceId === armResourceId);
  if (vector === undefined) throw new Error(`no Go vector for ${armResourceId}`);
  return vector;
}

function coordinatesOf(clusterResourceId: string): ClusterCoordinates {
  const segments = clusterResourceId.split("/");
  return { subscriptionId: segments[2], resourceGroupName: segments[4], clusterName: segments[8] };
}

/** Go's lowercased subscription segment: upstream's partition key. */
function goPartitionKey(vector: ArmVector): string {
  return vector.lower.split("/")[2];
}

describe("document ids and partition keys of clusters with non-ASCII names", () => {
  it("has Go vectors with the letters JavaScript gets wrong", () => {
    const names = clusters.map((vector) => vector.armResourceId).join(" ");
    for (const letter of ["İ", "Σ", "ẞ", "М", "ı"]) {
      expect(names).toContain(letter);
    }
    expect(identities.length).toBeGreaterThanOrEqual(4);
  });

  it.each(clusters.map((vector) => [vector.armResourceId]))("locates %s where upstream stores it", (clusterResourceId) => {
    const spc = goVector(`${clusterResourceId}/serviceProviderClusters/default`);
    const location = locate(parsedCluster(coordinatesOf(clusterResourceId)));
    expect(location.clusterDocumentId).toBe(goVector(clusterResourceId).documentId);
    expect(location.documentId).toBe(spc.documentId);
    expect(location.partitionKey).toBe(goPartitionKey(spc));
  });

  it.each(vectors.map((vector) => [vector.armResourceId, vector.documentId]))("gives %s upstream's id %s", (armResourceId, documentId) => {
    expect(cosmosItemIdFor(armResourceId)).toBe(documentId);
  });
});

describe("identity keys with non-ASCII names", () => {
  it.each(identities.map((vector) => [vector.armResourceId, vector.lower]))("keys %s as upstream does", (armResourceId, lower) => {
    const parsed = parseResourceIdOfType(armResourceId, userAssignedIdentityResourceType);
    expect(parsed.ok && parsed.resourceId.key).toBe(lower);
    expect(desiredIdentitySet({ operator: armResourceId }).identities.map((identity) => identity.key)).toEqual([lower]);
  });
});

describe("a sync pass for a cluster named with İ", () => {
  const clusterResourceId = clusters.find((vector) => vector.armResourceId.includes("İSTANBUL"))?.armResourceId as string;
  const cluster = coordinatesOf(clusterResourceId);
  const spcVector = goVector(`${clusterResourceId}/serviceProviderClusters/default`);
  const identity = identities.find((vector) => vector.armResourceId.includes("disk-csi-İ")) as ArmVector;

  /** The documents as upstream stores them: ids and partition key from Go, not from the hook. */
  function upstreamDocuments(subtree: JsonObject): JsonObject[] {
    const partitionKey = goPartitionKey(spcVector);
    const clusterDocument = buildClusterDocument({ cluster, dataPlaneOperators: { "disk-csi-driver": identity.armResourceId } });
    const spcDocument = buildServiceProviderClusterDocument({ cluster, dataPlaneOperatorsManagedIdentities: subtree });
    return [
      { ...clusterDocument, id: goVector(clusterResourceId).documentId, partitionKey },
      { ...spcDocument, id: spcVector.documentId, partitionKey },
    ];
  }

  it("writes the identity under Go's key into the document upstream created", async () => {
    const harness = createHarness({
      documents: upstreamDocuments({}),
      identities: {
        [identity.armResourceId]: { values: { clientId: "11111111-1111-1111-1111-111111111111", principalId: "22222222-2222-2222-2222-222222222222" } },
      },
    });
    const desired = desiredIdentitySet({ "disk-csi-driver": identity.armResourceId }).identities;
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(cluster), desired, force: false });
    expect(result.wrote).toBe(true);
    const stored = harness.store.get(goPartitionKey(spcVector), spcVector.documentId) as JsonObject;
    const identitiesWritten = dataPlaneHalf.read(stored).status.identities ?? {};
    expect(Object.keys(identitiesWritten)).toEqual([identity.lower]);
    expect(identitiesWritten[identity.lower]).toMatchObject({
      clientId: "11111111-1111-1111-1111-111111111111",
      principalId: "22222222-2222-2222-2222-222222222222",
    });
  });

  it("recognises the entry upstream wrote under Go's key: inside the recheck window, no lookup and no write", async () => {
    const upstreamEntry = { resourceID: identity.lower, clientId: "11111111-1111-1111-1111-111111111111", principalId: "22222222-2222-2222-2222-222222222222" };
    const harness = createHarness({
      documents: upstreamDocuments({ identities: { [identity.lower]: upstreamEntry }, earliestRecheckTime: "2026-08-15T03:17:42Z" }),
    });
    const desired = desiredIdentitySet({ "disk-csi-driver": identity.armResourceId }).identities;
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(cluster), desired, force: false });
    expect(result).toMatchObject({ wrote: false, lookups: 0 });
    expect(harness.reader.calls).toHaveLength(0);
    expect(harness.store.patches()).toHaveLength(0);
  });
});
