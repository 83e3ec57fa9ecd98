/**
 * The seam of issue 26 (resources/sync/azureAnswers.ts) with the sync pass's real decision code
 * and fakes for the store and the cluster credentials: when a pass asks for its cluster's credential,
 * with which service managed identity and identity URL, and what each failure leaves stored.
 */
import { describe, expect, it } from "vitest";
import type { ClusterCredentialRequest, ClusterCredentialSource } from "../../../resources/azure/clusterCredentials";
import { ClusterCredentialError } from "../../../resources/azure/clusterCredentials";
import { DataPlaneError } from "../../../resources/azure/dataPlaneAnswer";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import type { JsonObject } from "../../../resources/core/json";
import { refreshManagedIdentityStatus } from "../../../resources/sync/refreshManagedIdentityStatus";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import { ScriptedUserAssignedIdentityReader, restError } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { Harness } from "../../fakes/syncHarness";
import { createHarness, parsedCluster } from "../../fakes/syncHarness";
import { buildClusterDocument, buildServiceProviderClusterDocument, identityResourceId, locationOf, storedEntry, storedStatus } from "../../fixtures/documents";

const location = locationOf();
const identityA = identityResourceId("identity-a");
const keyA = identityA.toLowerCase();
const clusterDocument = buildClusterDocument({ dataPlaneOperators: { a: identityA } });
const documentSmi = identityResourceId("service-managed-identity");
const documentUrl = ((clusterDocument.properties as JsonObject).serviceProviderProperties as JsonObject).managedIdentitiesDataPlaneIdentityURL as string;

/** A source whose one cluster reader answers from `identities`, recording every request; or failing with `failure`. */
function fakeSource(identities: Readonly<Record<string, IdentityScript>>, failure?: Error): ClusterCredentialSource & { requests: ClusterCredentialRequest[] } {
  const requests: ClusterCredentialRequest[] = [];
  return {
    requests,
    readerFor(request) {
      requests.push(request);
      if (failure !== undefined) return Promise.reject(failure);
      return Promise.resolve({ reader: new ScriptedUserAssignedIdentityReader(identities, 1), description: "the cluster's SMI (fake)" });
    },
  };
}

function harnessWith(subtree: JsonObject, source: ClusterCredentialSource): Harness {
  const harness = createHarness({ documents: [clusterDocument, buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: subtree })] });
  return { ...harness, dependencies: { ...harness.dependencies, clusterCredentials: source } };
}

const recorded = storedStatus([storedEntry(identityA, { clientId: "client-a", principalId: "principal-a" })], "2026-08-14T11:00:00Z");
const notDue = storedStatus([storedEntry(identityA, { clientId: "client-a", principalId: "principal-a" })], "2026-08-14T13:00:00Z");
const documentOf = (harness: Harness): JsonObject | undefined => harness.store.get(location.partitionKey, location.documentId);

describe("the cluster credential seam", () => {
  it("asks for no credential while the recheck gate says nothing is due", async () => {
    const source = fakeSource({});
    const harness = harnessWith(notDue, source);
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false });
    expect(result.lookups).toBe(0);
    expect(source.requests).toHaveLength(0);
  });

  it("asks with the cluster document's SMI and identity URL, also when the inputs agree with them", async () => {
    const source = fakeSource({ [identityA]: { values: { clientId: "client-a", principalId: "principal-a" } } });
    const harness = harnessWith(recorded, source);
    await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false });
    await syncManagedIdentityStatus(harness.dependencies, {
      cluster: parsedCluster(),
      desired: desiredIdentitySet({ a: identityA }).identities,
      force: true,
      serviceManagedIdentity: documentSmi.toUpperCase(),
      identityUrl: documentUrl,
    });
    expect(source.requests.map(({ serviceManagedIdentity, identityUrl }) => ({ serviceManagedIdentity, identityUrl }))).toEqual([
      { serviceManagedIdentity: documentSmi, identityUrl: documentUrl },
      { serviceManagedIdentity: documentSmi, identityUrl: documentUrl },
    ]);
  });

  it.each([
    [
      "serviceManagedIdentity",
      { serviceManagedIdentity: identityResourceId("copied-from-another-cluster") },
      /names .*copied-from-another-cluster.*names .*service-managed-identity/,
    ],
    [
      "managedIdentitiesDataPlaneIdentityURL",
      { identityUrl: "https://declared.example/x?y=1" },
      /^the managedIdentitiesDataPlaneIdentityURL input is https:\/\/declared\.example\/x\?y=1, but the cluster's HCPOpenShiftCluster document has https:.*Cluster .*: nothing was written/,
    ],
  ])(
    "fails the cluster when the %s input disagrees with the cluster document, naming both, asking for no credential and writing nothing",
    async (field, declared, message) => {
      const source = fakeSource({ [identityA]: { values: { clientId: "other", principalId: "other" } } });
      const harness = harnessWith(recorded, source);
      const before = structuredClone(documentOf(harness));
      // Both halves due: neither is read nor written.
      const failure = await syncManagedIdentityStatus(harness.dependencies, {
        cluster: parsedCluster(),
        desired: undefined,
        force: true,
        forceMsi: true,
        ...declared,
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ClusterCredentialError);
      expect(failure).toMatchObject({ field });
      expect((failure as Error).message).toMatch(message);
      expect(source.requests).toHaveLength(0);
      expect(documentOf(harness)).toEqual(before);
    },
  );

  it.each([
    [
      "a data plane refusal for this cluster",
      new ClusterCredentialError("cannot get the credential: answered HTTP 404", { statusCode: 404 }),
      "ClusterCredentialError",
    ],
    ["the first-party credential failing", new DataPlaneError("the first-party credential could not get a token", { firstParty: true }), "AzureAccessError"],
  ])("fails the pass on %s and leaves the document exactly as it was", async (_title, failure, name) => {
    const harness = harnessWith(recorded, fakeSource({}, failure));
    const before = structuredClone(documentOf(harness));
    await expect(syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false })).rejects.toMatchObject({
      name,
    });
    expect(documentOf(harness)).toEqual(before);
    expect(harness.store.calls.filter((call) => call.kind === "patch")).toHaveLength(0);
  });

  it("clears IDs on a 403 read with the cluster's own credential, and keeps them on a 403 of the process credential", async () => {
    const forbidden: IdentityScript = { error: restError("AuthorizationFailed", 403, "does not have authorization") };
    const withCluster = harnessWith(recorded, fakeSource({ [identityA]: forbidden }));
    await expect(syncManagedIdentityStatus(withCluster.dependencies, { cluster: parsedCluster(), desired: undefined, force: false })).rejects.toThrow(
      /AuthorizationFailed/,
    );
    const clusterEntry = (((documentOf(withCluster)?.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities as JsonObject)
      .identities as JsonObject;
    expect(clusterEntry[keyA]).toMatchObject({ resourceID: identityA });
    expect(clusterEntry[keyA]).not.toHaveProperty("clientId");

    const withProcess = createHarness({
      documents: [clusterDocument, buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: recorded })],
      identities: { [identityA]: forbidden },
    });
    await expect(syncManagedIdentityStatus(withProcess.dependencies, { cluster: parsedCluster(), desired: undefined, force: false })).rejects.toThrow(
      /AuthorizationFailed/,
    );
    const processEntry = (((documentOf(withProcess)?.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities as JsonObject)
      .identities as JsonObject;
    expect(processEntry[keyA]).toMatchObject({ clientId: "client-a", principalId: "principal-a" });
  });

  it("lets a refresh ask for the credential only when a recheck is due, with the cluster document's SMI", async () => {
    const source = fakeSource({ [identityA]: { values: { clientId: "client-a", principalId: "principal-a" } } });
    const quiet = harnessWith(notDue, source);
    await refreshManagedIdentityStatus(quiet.dependencies, parsedCluster(), {});
    expect(source.requests).toHaveLength(0);
    const due = harnessWith(recorded, source);
    await refreshManagedIdentityStatus(due.dependencies, parsedCluster(), {});
    expect(source.requests).toMatchObject([{ serviceManagedIdentity: documentSmi, identityUrl: documentUrl }]);
  });
});
