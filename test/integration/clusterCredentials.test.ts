/**
 * Issue 26 through the provider with the real @azure/identity, @azure/arm-msi and @azure/cosmos
 * clients against a per-cluster sandbox: each cluster's identities are readable only by that
 * cluster's own service managed identity, whose certificate credential the sandbox's Managed
 * Identities data plane hands to the first-party application. Asserts on what Cosmos holds
 * afterwards, and counts the sandbox's data plane and token requests.
 */
import { expectStateKeptWithFailure } from "../fixtures/storedDocument";
import { Agent } from "node:https";
import { beforeAll, describe, expect, it } from "vitest";
import { certificateFileCredential, tokenRequestsPerClient } from "../../resources/azure/certificateCredential";
import type { JsonObject } from "../../resources/core/json";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { Sandbox } from "../../sandbox/sandbox";
import { useClusterModeSandbox } from "../fixtures/clusterModeSandbox";
import { type FleetClusterDescription, seedFleet, seedTenantFleet } from "../../sandbox/seed";

const fixture = useClusterModeSandbox({ clusters: 3, identitiesPerCluster: 2 });
let sandbox: Sandbox;
let clusters: FleetClusterDescription[];
beforeAll(() => {
  sandbox = fixture.sandbox;
  clusters = fixture.clusters;
});

function identitiesOf(cluster: FleetClusterDescription): JsonObject {
  const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
  const status = (document.properties as JsonObject).status as JsonObject;
  return ((status.dataPlaneOperatorsManagedIdentities as JsonObject | undefined)?.identities as JsonObject | undefined) ?? {};
}

function expectRecorded(cluster: FleetClusterDescription): void {
  const identities = identitiesOf(cluster);
  for (const identityId of Object.values(cluster.dataPlaneOperators)) {
    const expected = sandbox.identities.get(identityId);
    expect(identities[identityId.toLowerCase()], identityId).toMatchObject({ clientId: expected?.clientId, principalId: expected?.principalId });
  }
}

/** The MSI half as the document holds it now. */
function msiHalfOf(cluster: FleetClusterDescription): JsonObject {
  const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
  return ((document.properties as JsonObject).status as JsonObject).msiManagedIdentities as JsonObject;
}

/** The MSI half as recorded: each control plane operator identity and the SMI with the IDs `expected` gives (the identity's own by default). */
function expectMsiRecorded(
  cluster: FleetClusterDescription,
  expected: (id: string) => { clientId?: string; principalId?: string } = (id) => sandbox.identities.get(id) ?? {},
): void {
  const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
  const msi = ((document.properties as JsonObject).status as JsonObject).msiManagedIdentities as JsonObject;
  const values = (id: string) => ({ clientId: expected(id).clientId, principalId: expected(id).principalId });
  for (const id of Object.values(cluster.controlPlaneOperators ?? {})) {
    expect((msi.controlPlaneOperatorsIdentities as JsonObject)[id.toLowerCase()], id).toEqual({ resourceId: id, ...values(id) });
  }
  expect(msi.serviceManagedIdentity).toEqual({ resourceId: cluster.serviceManagedIdentity, ...values(cluster.serviceManagedIdentity) });
  expect(typeof msi.earliestRecheckTime).toBe("string");
}

/** Moves a cluster's MSI recheck time into the past, so its next pass asks the data plane for that half. */
function makeMsiDue(cluster: FleetClusterDescription): void {
  sandbox.documents.patch(
    cluster.partitionKey,
    cluster.serviceProviderClusterDocumentId,
    "/properties/status/msiManagedIdentities/earliestRecheckTime",
    "2000-01-01T00:00:00Z",
  );
}

/** Moves a cluster's recheck time into the past, so its next pass looks every identity up. */
function makeDue(cluster: FleetClusterDescription): void {
  sandbox.documents.patch(
    cluster.partitionKey,
    cluster.serviceProviderClusterDocumentId,
    "/properties/status/dataPlaneOperatorsManagedIdentities/earliestRecheckTime",
    "2000-01-01T00:00:00Z",
  );
}

/** What a create of the cluster threw (with the properties a partial result carries), or undefined when it succeeded. */
async function createFailure(
  provider: ReturnType<typeof fixture.provider>,
  cluster: FleetClusterDescription,
): Promise<(Error & { properties?: unknown }) | undefined> {
  return provider.create({ clusterResourceId: cluster.clusterResourceId }).then(
    () => undefined,
    (caught: unknown) => caught as Error & { properties?: unknown },
  );
}

const documentOf = (cluster: FleetClusterDescription): unknown =>
  structuredClone(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId));

describe("clusterServiceManagedIdentity mode against the sandbox", () => {
  it("reads each cluster's identities with its own SMI only, in its own tenant, and records them", async () => {
    const provider = fixture.provider();
    sandbox.statistics.reset();
    await Promise.all(clusters.slice(0, 2).map((cluster) => provider.create({ clusterResourceId: cluster.clusterResourceId })));
    clusters.slice(0, 2).forEach(expectRecorded);
    // The MSI half: the data plane's own answer for the control plane operator identities and the SMI.
    clusters.slice(0, 2).forEach((cluster) => expectMsiRecorded(cluster));
    const statistics = sandbox.statistics.snapshot();
    // Per cluster: the SMI's credential and the MSI half's answer, each a challenge and an answer;
    // each token came from the SMI's own tenant, and ARM refused nothing.
    expect(Object.values(statistics.dataPlane.requestsByCluster).reduce((sum, count) => sum + count, 0)).toBe(8);
    for (const cluster of clusters.slice(0, 2)) {
      expect(statistics.entra.tokensIssuedByClient[`${cluster.tenantId}/${cluster.serviceManagedIdentityClientId}`.toLowerCase()]).toBe(1);
    }
    expect(statistics.arm.responsesByStatus["403"]).toBeUndefined();
    // Certificates were sent with their chain and signed as MSAL signs them.
    expect(Object.keys(statistics.entra.assertionAlgorithms).every((algorithm) => algorithm.endsWith("+x5c"))).toBe(true);
  });

  it("reuses an SMI's credential and tokens within renew_after: a second pass asks neither the data plane nor Entra", async () => {
    const provider = fixture.provider({ lookupConcurrency: "4" });
    const cluster = clusters[0];
    await (provider.update as NonNullable<typeof provider.update>)("id", {} as never, { clusterResourceId: cluster.clusterResourceId });
    sandbox.statistics.reset();
    // Forced (a refresh found drift): every identity is looked up again.
    makeDue(cluster);
    await (provider.update as NonNullable<typeof provider.update>)("id", {} as never, { clusterResourceId: cluster.clusterResourceId });
    const statistics = sandbox.statistics.snapshot();
    expect(statistics.arm.getRequests).toBe(2);
    // Unknown state forces the MSI half too: its own request (challenge and answer) as the first
    // party, whose token is reused; the SMI's credential is not asked for again.
    expect(statistics.dataPlane.requests).toBe(2);
    expect(statistics.entra.tokensIssued).toBe(0);
    expectRecorded(cluster);
  });

  it.each([
    ["the data plane answering 503", { kind: "unavailable" as const }, /HTTP 503/],
    ["the data plane answering without explicit_identities", { kind: "noExplicitIdentities" as const }, /no explicit_identities/],
    ["an unusable certificate in the answer", { kind: "unusableCertificate" as const }, /unusable certificate/],
    ["the data plane refusing with 404", { kind: "status" as const, statusCode: 404, errorCode: "NotFound" }, /HTTP 404/],
  ])("fails only that cluster on %s, naming it, and writes nothing for it", async (_title, fault, message) => {
    const provider = fixture.provider();
    const [failing, healthy] = [clusters[1], clusters[2]];
    sandbox.documents.patch(failing.partitionKey, failing.serviceProviderClusterDocumentId, "/properties/status/dataPlaneOperatorsManagedIdentities", {});
    const before = documentOf(failing);
    sandbox.faults.add({ target: "dataPlane", ...fault, count: 10, match: { clusterResourceId: failing.clusterResourceId } });
    const [failed, succeeded] = await Promise.allSettled([
      provider.create({ clusterResourceId: failing.clusterResourceId }),
      provider.create({ clusterResourceId: healthy.clusterResourceId }),
    ]);
    expect(failed.status).toBe("rejected");
    const error = (failed as PromiseRejectedResult).reason as Error;
    expect(error.name).toBe("ClusterCredentialError");
    expect(error.message).toMatch(message);
    expect(error.message).toContain(failing.clusterResourceId);
    expect(error.message).not.toMatch(/BEGIN|MII|sandbox-/);
    expect(documentOf(failing)).toEqual(before);
    expect(succeeded.status).toBe("fulfilled");
    expectRecorded(healthy);
  });

  it("names the missing identity URL field of a cluster document, refuses an input in its place, and writes nothing", async () => {
    const provider = fixture.provider();
    const cluster = clusters[2];
    const clusterDocument = sandbox.documents.read(cluster.partitionKey, cluster.clusterDocumentId) as JsonObject;
    const identityUrl = ((clusterDocument.properties as JsonObject).serviceProviderProperties as JsonObject).managedIdentitiesDataPlaneIdentityURL;
    sandbox.documents.patch(
      cluster.partitionKey,
      cluster.clusterDocumentId,
      "/properties/serviceProviderProperties/managedIdentitiesDataPlaneIdentityURL",
      null,
    );
    makeDue(cluster);
    const before = documentOf(cluster);
    try {
      await expect(provider.create({ clusterResourceId: cluster.clusterResourceId })).rejects.toThrow(/managedIdentitiesDataPlaneIdentityURL/);
      expect(documentOf(cluster)).toEqual(before);
      // The cluster document is the authority: the same URL declared as an input instead is refused, naming both.
      sandbox.statistics.reset();
      await expect(
        provider.create({ clusterResourceId: cluster.clusterResourceId, managedIdentitiesDataPlaneIdentityURL: identityUrl as string }),
      ).rejects.toThrow(/^the managedIdentitiesDataPlaneIdentityURL input is .* but the cluster's HCPOpenShiftCluster document has none: /);
      expect(documentOf(cluster)).toEqual(before);
      expect(sandbox.statistics.snapshot().dataPlane.requests).toBe(0);
      sandbox.documents.patch(
        cluster.partitionKey,
        cluster.clusterDocumentId,
        "/properties/serviceProviderProperties/managedIdentitiesDataPlaneIdentityURL",
        identityUrl,
      );
      // An input that agrees with the document works, and a refresh reads with the document's URL.
      const created = await provider.create({ clusterResourceId: cluster.clusterResourceId, managedIdentitiesDataPlaneIdentityURL: identityUrl as string });
      expectRecorded(cluster);
      makeDue(cluster);
      sandbox.statistics.reset();
      const refreshed = await (provider.read as NonNullable<typeof provider.read>)(created.id, created.outs);
      expect(refreshed.id).toBe(created.id);
      expect(sandbox.statistics.snapshot().arm.getRequests).toBe(Object.keys(cluster.dataPlaneOperators).length);
    } finally {
      sandbox.documents.patch(
        cluster.partitionKey,
        cluster.clusterDocumentId,
        "/properties/serviceProviderProperties/managedIdentitiesDataPlaneIdentityURL",
        identityUrl,
      );
    }
  });

  it("names the missing serviceManagedIdentity of a cluster document, and writes nothing", async () => {
    const provider = fixture.provider();
    const cluster = clusters[2];
    const smiPath = "/properties/customerProperties/platform/operatorsAuthentication/userAssignedIdentities/serviceManagedIdentity";
    sandbox.documents.patch(cluster.partitionKey, cluster.clusterDocumentId, smiPath, null);
    makeDue(cluster);
    const before = documentOf(cluster);
    try {
      await expect(provider.create({ clusterResourceId: cluster.clusterResourceId })).rejects.toThrow(
        new RegExp(
          `^the cluster's HCPOpenShiftCluster document names no service managed identity .*serviceManagedIdentity.* Cluster \\S+: nothing was written.* \\[${cluster.clusterResourceId}\\]`,
        ),
      );
      expect(documentOf(cluster)).toEqual(before);
    } finally {
      sandbox.documents.patch(cluster.partitionKey, cluster.clusterDocumentId, smiPath, cluster.serviceManagedIdentity);
    }
  });

  it("fails every cluster as a global failure when the first-party credential is refused, and writes nothing anywhere", async () => {
    const provider = fixture.provider();
    const before = clusters.map(documentOf);
    clusters.forEach(makeDue);
    const due = clusters.map(documentOf);
    sandbox.faults.add({
      target: "entra",
      kind: "status",
      statusCode: 400,
      errorCode: "invalid_client",
      message: "AADSTS7000215: Invalid client secret provided.",
      match: { clientId: sandbox.credentialChain.firstPartyApplication.clientId },
      // The first party asks in each cluster's own tenant (both halves of a cluster at most once each).
      count: 2 * clusters.length,
    });
    const results = await Promise.allSettled(clusters.map((cluster) => provider.create({ clusterResourceId: cluster.clusterResourceId })));
    for (const result of results) {
      expect(result.status).toBe("rejected");
      expect(((result as PromiseRejectedResult).reason as Error).name).toBe("AzureAccessError");
      expect(((result as PromiseRejectedResult).reason as Error).message).toContain("first-party");
    }
    expect(clusters.map(documentOf)).toEqual(due);
    expect(before).toHaveLength(clusters.length);
  });

  it("refuses a challenge naming another tenant than the identity URL's tid: the first party asks for no token there, and nothing is read, written or recorded in state", async () => {
    const provider = fixture.provider();
    const cluster = clusters[1];
    const otherTenant = "0f0e0d0c-0b0a-4909-8807-060504030201";
    makeDue(cluster);
    makeMsiDue(cluster);
    const before = documentOf(cluster);
    sandbox.credentials.setChallengeTenant(otherTenant, [cluster.clusterResourceId]);
    sandbox.statistics.reset();
    sandbox.recorder.start();
    try {
      const error = await createFailure(provider, cluster);
      expect(error?.name).toBe("ClusterCredentialError");
      expect(error?.message).toMatch(
        new RegExp(
          `challenged for a token in tenant ${otherTenant}, but the cluster's identity URL \\(managedIdentitiesDataPlaneIdentityURL\\) names tenant ${cluster.tenantId ?? ""} \\(its tid\\)`,
        ),
      );
      expect(error?.message).toContain(cluster.clusterResourceId);
      // No status recorded in state: the create carries the failure only.
      expectStateKeptWithFailure(error);
      expect(documentOf(cluster)).toEqual(before);
      const requests = sandbox.recorder.snapshot().requests;
      // The data plane was asked without a token only (the challenge), Entra for nothing in the other tenant, ARM for nothing.
      const dataPlaneRequests = requests.filter((entry) => entry.target === "dataPlane");
      expect(dataPlaneRequests.length).toBeGreaterThan(0);
      expect(dataPlaneRequests.map((entry) => [entry.status, entry.token])).toEqual(dataPlaneRequests.map(() => [401, undefined]));
      expect(requests.filter((entry) => entry.target === "entra" && entry.path.toLowerCase().includes(otherTenant))).toEqual([]);
      expect(requests.filter((entry) => entry.target === "arm")).toEqual([]);
      const firstParty = sandbox.credentialChain.firstPartyApplication.clientId;
      expect(sandbox.statistics.snapshot().entra.tokensIssuedByClient[`${otherTenant}/${firstParty}`.toLowerCase()]).toBeUndefined();
    } finally {
      sandbox.recorder.stop();
      sandbox.credentials.setChallengeTenant(cluster.tenantId ?? "", [cluster.clusterResourceId]);
    }
    // Its challenge back in its own tenant, the cluster is recorded, with the first party's token of that tenant.
    await provider.create({ clusterResourceId: cluster.clusterResourceId });
    expectRecorded(cluster);
  });

  it.each([
    [
      "on a host that is no data plane host of the cloud",
      (url: URL) => {
        url.hostname = "identity.example.com";
        url.port = "";
      },
      /is on host 'identity\.example\.com', which is not a Managed Identities data plane host of AzurePublicCloud/,
    ],
    ["without a tid", (url: URL) => url.searchParams.delete("tid"), /names no tenant: it has no tid query parameter/],
    ["with a tid that is no tenant ID", (url: URL) => url.searchParams.set("tid", "contoso.example"), /has tid 'contoso\.example', which is not a tenant ID/],
    ["with two tids", (url: URL) => url.searchParams.append("tid", "0f0e0d0c-0b0a-4909-8807-060504030201"), /has 2 tid query parameters/],
  ])("refuses an identity URL %s before any request, naming the field and the value, and writes nothing", async (_title, change, message) => {
    const provider = fixture.provider();
    const cluster = clusters[2];
    const field = "/properties/serviceProviderProperties/managedIdentitiesDataPlaneIdentityURL";
    const url = new URL(cluster.identityUrl ?? "");
    change(url);
    makeDue(cluster);
    makeMsiDue(cluster);
    sandbox.documents.patch(cluster.partitionKey, cluster.clusterDocumentId, field, url.toString());
    const before = documentOf(cluster);
    sandbox.statistics.reset();
    try {
      const error = await createFailure(provider, cluster);
      expect(error?.name).toBe("ClusterCredentialError");
      expect(error?.message).toMatch(/^the cluster's identity URL \(properties\.serviceProviderProperties\.managedIdentitiesDataPlaneIdentityURL\) /);
      expect(error?.message).toMatch(message);
      expect(error?.message).toContain(cluster.clusterResourceId);
      expectStateKeptWithFailure(error);
      expect(documentOf(cluster)).toEqual(before);
      const statistics = sandbox.statistics.snapshot();
      expect([statistics.dataPlane.requests, statistics.entra.tokensIssued, statistics.arm.getRequests]).toEqual([0, 0, 0]);
    } finally {
      sandbox.documents.patch(cluster.partitionKey, cluster.clusterDocumentId, field, cluster.identityUrl);
    }
  });

  it("keeps a refusal of the first party in one cluster's tenant with that cluster: the others are recorded, and its message names only its own tenant", async () => {
    const provider = fixture.provider();
    const [broken, ...others] = clusters;
    const brokenTenant = broken.tenantId ?? "";
    clusters.forEach(makeDue);
    sandbox.faults.add({
      target: "entra",
      kind: "status",
      statusCode: 400,
      errorCode: "invalid_request",
      message: `AADSTS90002: Tenant '${brokenTenant}' not found.`,
      match: { tenantId: brokenTenant, clientId: sandbox.credentialChain.firstPartyApplication.clientId },
    });
    const before = documentOf(broken);
    const results = await Promise.allSettled(clusters.map((cluster) => provider.create({ clusterResourceId: cluster.clusterResourceId })));
    expect(results.map((result) => result.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
    const message = ((results[0] as PromiseRejectedResult).reason as Error).message;
    expect(message).toContain(brokenTenant);
    for (const other of others) {
      expect(message).not.toContain(other.tenantId);
      expect(message).not.toContain(other.clusterResourceId);
      expectRecorded(other);
    }
    expect(documentOf(broken)).toEqual(before);
    // Held for that tenant: the next pass of the broken cluster does not ask Entra again; another cluster still does its work.
    sandbox.statistics.reset();
    others.forEach(makeDue);
    await expect(provider.create({ clusterResourceId: broken.clusterResourceId })).rejects.toThrow(brokenTenant);
    await provider.create({ clusterResourceId: others[0].clusterResourceId });
    const statistics = sandbox.statistics.snapshot();
    expect(statistics.entra.tokenRequestsByTenant[brokenTenant]).toBeUndefined();
  });

  it("records the MSI half from an answer in another order and casing, and an identity deleted since as null IDs", async () => {
    const cluster = clusters[2];
    const [deleted] = Object.values(cluster.controlPlaneOperators ?? {});
    makeDue(cluster);
    makeMsiDue(cluster);
    sandbox.credentials.answerVariation = { shuffleOrder: true, changeResourceIdCasing: true };
    const removed = sandbox.identities.get(deleted);
    sandbox.identities.delete(deleted);
    try {
      await fixture.provider().create({ clusterResourceId: cluster.clusterResourceId });
      expectMsiRecorded(cluster, (id) => (id === deleted ? {} : (sandbox.identities.get(id) ?? {})));
    } finally {
      sandbox.credentials.answerVariation = { shuffleOrder: false, changeResourceIdCasing: false };
      if (removed !== undefined) sandbox.identities.create(deleted, { tenantId: removed.tenantId });
    }
  });

  it("keeps the MSI half's IDs through a failing data plane while the other half is written; refresh shows its drift; a delete keeps another writer's newer half", async () => {
    const provider = fixture.provider();
    const cluster = clusters[0];
    const msiOf = (): JsonObject =>
      structuredClone(
        ((sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject).properties as JsonObject).status as JsonObject,
      ).msiManagedIdentities as JsonObject;
    makeDue(cluster);
    makeMsiDue(cluster);
    const created = await provider.create({ clusterResourceId: cluster.clusterResourceId });
    const outs = created.outs as ProviderOutputs;
    expectMsiRecorded(cluster);
    const recorded = msiOf();

    // The SMI's credential is kept by this provider: the next pass's one data plane call is the MSI half's, and it fails on every try.
    makeDue(cluster);
    makeMsiDue(cluster);
    const due = msiOf();
    const rotated = Object.values(cluster.dataPlaneOperators)[0];
    sandbox.identities.rotate(rotated);
    sandbox.faults.add({ target: "dataPlane", kind: "status", statusCode: 503, count: 20, match: { clusterResourceId: cluster.clusterResourceId } });
    await expect(provider.update!(created.id, outs, { clusterResourceId: cluster.clusterResourceId })).rejects.toThrow(/503/);
    expect(msiOf(), "the MSI half, its IDs and recheck time").toEqual(due);
    expect(identitiesOf(cluster)[rotated.toLowerCase()], "the other half, written").toMatchObject({ clientId: sandbox.identities.get(rotated)?.clientId });
    sandbox.faults.clear();

    // Another writer (upstream's controller) records other values for the SMI: a refresh reads them and names the drift.
    sandbox.documents.patch(cluster.partitionKey, cluster.serviceProviderClusterDocumentId, "/properties/status/msiManagedIdentities", {
      ...recorded,
      serviceManagedIdentity: { ...(recorded.serviceManagedIdentity as JsonObject), clientId: "11111111-2222-4333-8444-555555555555" },
    });
    const theirs = msiOf();
    const refreshed = await provider.read!(created.id, outs);
    expect((refreshed.props as { drift?: string[] }).drift?.some((line) => line.startsWith("msiManagedIdentities: "))).toBe(true);
    expect(msiOf(), "a refresh writes nothing").toEqual(theirs);

    // The delete of the resource whose record was overwritten since keeps the other writer's half.
    await provider.delete!(created.id, outs);
    expect(msiOf()).toEqual(theirs);
  });

  it("clears IDs when ARM answers 403 to the cluster's own SMI for one identity, and keeps the other's", async () => {
    const provider = fixture.provider();
    const cluster = clusters[0];
    const [revoked, kept] = Object.values(cluster.dataPlaneOperators);
    await provider.create({ clusterResourceId: cluster.clusterResourceId });
    expectRecorded(cluster);
    makeDue(cluster);
    const removed = sandbox.credentials.directory.removeRoleAssignments(cluster.serviceManagedIdentityPrincipalId as string, revoked);
    expect(removed).toBe(1);
    try {
      await expect(provider.create({ clusterResourceId: cluster.clusterResourceId })).rejects.toThrow(/AuthorizationFailed/);
      const identities = identitiesOf(cluster);
      expect(identities[revoked.toLowerCase()]).not.toHaveProperty("clientId");
      expect(identities[revoked.toLowerCase()]).toHaveProperty("retrievalError");
      expect(identities[kept.toLowerCase()]).toMatchObject({ clientId: sandbox.identities.get(kept)?.clientId });
    } finally {
      sandbox.credentials.directory.assignRole({ principalObjectId: cluster.serviceManagedIdentityPrincipalId as string, scope: revoked });
    }
  });

  it("follows a rotation of the first-party certificate in every tenant at once: each cluster refused with the revoked one uses the new file", async () => {
    const provider = fixture.provider();
    sandbox.tokens.setTokenLifetime(1000);
    try {
      const [first, ...others] = clusters;
      makeDue(first);
      await provider.create({ clusterResourceId: first.clusterResourceId });
      await sandbox.credentials.rotateFilePrincipal("firstPartyApplication", { revokePreviousAfterMs: 0 });
      // The clusters of two other tenants ask for their credentials at the same time: the first
      // party asks Entra in both tenants with the revoked certificate, and both are refused.
      for (const cluster of others) makeDue(cluster);
      sandbox.statistics.reset();
      // Entra answers both slowly, so both are in flight with the revoked certificate before either is refused.
      sandbox.faults.add({ target: "entra", kind: "delay", delayInMs: 300, count: others.length });
      const outcomes = await Promise.allSettled(others.map((cluster) => provider.create({ clusterResourceId: cluster.clusterResourceId })));
      expect(outcomes.map((outcome) => (outcome.status === "rejected" ? String(outcome.reason) : "recorded"))).toEqual(others.map(() => "recorded"));
      others.forEach(expectRecorded);
      expect(sandbox.statistics.snapshot().entra.errorsByCode["700027"]).toBe(others.length);
    } finally {
      sandbox.tokens.setTokenLifetime(60 * 60 * 1000);
    }
  });

  it("builds the first party's ClientCertificateCredential again after tokenRequestsPerClient token requests: each new one asks Entra once, and tokens keep coming", async () => {
    const firstParty = sandbox.credentialChain.firstPartyApplication;
    const agent = new Agent({ ca: sandbox.caBundlePem, keepAlive: true });
    try {
      const credential = certificateFileCredential(
        {
          clientId: firstParty.clientId,
          tenantId: firstParty.tenantId,
          certificateFile: firstParty.certificateBundlePath,
          certificateFileSetting: "firstPartyCertificateFile",
        },
        { authorityHost: sandbox.credentialChain.entraAuthorityHost, disableInstanceDiscovery: true, agent, additionallyAllowedTenants: ["*"] },
      );
      const scope = `${sandbox.credentialChain.dataPlaneAudience}/.default`;
      const tenantId = clusters[0].tenantId;
      sandbox.statistics.reset();
      const tokens = new Set<string>();
      for (let request = 0; request < 2 * tokenRequestsPerClient + 1; request += 1) {
        const token = await credential.getToken(scope, { tenantId });
        expect(token?.token, `token request ${request + 1}`).toBeTruthy();
        tokens.add(token?.token ?? "");
      }
      // MSAL answers one tenant and scope from its own cache: Entra sees one request per credential built.
      const statistics = sandbox.statistics.snapshot().entra;
      expect(statistics.tokensIssuedByClient[`${tenantId}/${firstParty.clientId}`.toLowerCase()]).toBe(3);
      expect(tokens.size).toBe(3);
    } finally {
      agent.destroy();
    }
  });

  it("follows a rotation of the first-party certificate during a run: the revoked one is refused, the new file takes over", async () => {
    const provider = fixture.provider();
    // Short-lived tokens, so the first party asks Entra again for each new cluster credential.
    sandbox.tokens.setTokenLifetime(1000);
    try {
      makeDue(clusters[1]);
      await provider.create({ clusterResourceId: clusters[1].clusterResourceId });
      await sandbox.credentials.rotateFilePrincipal("firstPartyApplication", { revokePreviousAfterMs: 0 });
      makeDue(clusters[2]);
      sandbox.statistics.reset();
      await provider.create({ clusterResourceId: clusters[2].clusterResourceId });
      expectRecorded(clusters[2]);
      const statistics = sandbox.statistics.snapshot();
      // The old certificate was refused once (AADSTS700027), then the re-read file's was accepted.
      expect(statistics.entra.errorsByCode["700027"]).toBe(1);
    } finally {
      sandbox.tokens.setTokenLifetime(60 * 60 * 1000);
    }
  });
});

describe("fixedIdentity mode against the sandbox", () => {
  it("reads every cluster of its tenant as the one fixed identity, and keeps stored IDs on a 403 to it and on ARM's 401 for another tenant's subscription", async () => {
    const chain = sandbox.credentialChain;
    // Upstream's stand-in serves a development environment, whose clusters are in its own tenant:
    // ARM refuses its token in another tenant's subscription (InvalidAuthenticationTokenTenant).
    const clusters = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 2 });
    const fixedSettings = {
      credentialMode: "fixedIdentity",
      firstPartyClientId: "",
      firstPartyTenantId: "",
      firstPartyCertificateFile: "",
      dataPlaneAudience: "",
      fixedIdentityClientId: chain.fixedIdentity.clientId,
      fixedIdentityTenantId: chain.fixedIdentity.tenantId,
      fixedIdentityCertificateFile: chain.fixedIdentity.certificateBundlePath,
      fixedIdentityPrincipalId: chain.fixedIdentity.objectId,
    };
    // The seeded documents hold the data plane's real IDs in their MSI half: the stand-in refuses
    // to write its own over them (issue 44 item 8), naming the setting, and that half stays as it was.
    clusters.forEach(makeDue);
    const realMsi = clusters.map((cluster) => structuredClone(msiHalfOf(cluster)));
    const guarded = fixture.provider(fixedSettings);
    for (const cluster of clusters) {
      await expect(guarded.create({ clusterResourceId: cluster.clusterResourceId })).rejects.toThrow(
        /credentialMode fixedIdentity would write the fixed identity's IDs over .*allowFixedIdentityOverwrite/,
      );
    }
    expect(clusters.map(msiHalfOf)).toEqual(realMsi);
    // Set for the update that means it: the stand-in's IDs replace them.
    const fixed = fixture.provider({ ...fixedSettings, allowFixedIdentityOverwrite: "true" });
    sandbox.statistics.reset();
    clusters.forEach(makeDue);
    await Promise.all(clusters.map((cluster) => fixed.create({ clusterResourceId: cluster.clusterResourceId })));
    clusters.forEach(expectRecorded);
    // Upstream's stand-in answers the MSI half with the fixed identity's own IDs for every identity.
    clusters.forEach((cluster) => expectMsiRecorded(cluster, () => ({ clientId: chain.fixedIdentity.clientId, principalId: chain.fixedIdentity.objectId })));
    const statistics = sandbox.statistics.snapshot();
    expect(statistics.dataPlane.requests).toBe(0);
    expect(Object.keys(statistics.entra.tokensIssuedByClient)).toEqual([`${chain.fixedIdentity.tenantId}/${chain.fixedIdentity.clientId}`.toLowerCase()]);

    // A 403 to a credential that is not the cluster's own says nothing about the identity.
    const cluster = clusters[0];
    makeDue(cluster);
    const fixedObjectId = chain.fixedIdentity.objectId;
    sandbox.credentials.directory.removeRoleAssignments(fixedObjectId, "/");
    try {
      await expect(fixed.create({ clusterResourceId: cluster.clusterResourceId })).rejects.toThrow(/AuthorizationFailed|nothing was written/);
      const identities = identitiesOf(cluster);
      for (const identityId of Object.values(cluster.dataPlaneOperators)) {
        expect(identities[identityId.toLowerCase()]).toMatchObject({ clientId: sandbox.identities.get(identityId)?.clientId });
      }
    } finally {
      sandbox.credentials.directory.assignRole({ principalObjectId: fixedObjectId, scope: "/" });
    }

    // A cluster whose subscription is another tenant's: ARM answers 401 InvalidAuthenticationTokenTenant,
    // which says nothing about its identities: the stored IDs stay, byte for byte.
    const foreign = seedTenantFleet(sandbox, { clusters: 1, identitiesPerCluster: 1 })[0];
    await fixture.provider().create({ clusterResourceId: foreign.clusterResourceId });
    expectRecorded(foreign);
    makeDue(foreign);
    const recorded = documentOf(foreign);
    const failure = await fixed.create({ clusterResourceId: foreign.clusterResourceId }).catch((error: unknown) => error as Error);
    expect(failure).toMatchObject({ name: "AzureAccessError" });
    expect((failure as Error).message).toContain("InvalidAuthenticationTokenTenant");
    expect(documentOf(foreign)).toEqual(recorded);
  });
});
