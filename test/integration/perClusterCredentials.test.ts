/**
 * The per-cluster credential chain against the sandbox, through the real @azure/identity
 * ClientCertificateCredential (MSAL) and @azure/arm-msi: the first-party application's token from
 * the sandbox Entra, the data plane's challenge and answer, the SMI credential built from the
 * returned PKCS #12, ARM's authorization by role, and refused certificates after rotation. TLS is
 * trusted per client (an https.Agent with the sandbox CA bundle), never globally.
 *
 * Own in-process sandbox in per-cluster mode (the global one runs the process-credential mode).
 */
import { readFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { ManagedServiceIdentityClient } from "@azure/arm-msi";
import { ClientCertificateCredential } from "@azure/identity";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { decodePkcs12 } from "../../sandbox/certificateAuthority";
import { parseIdentityResourceId } from "../../sandbox/identityStore";
import { type Sandbox, startSandbox } from "../../sandbox/sandbox";
import { armScope } from "../../sandbox/sandboxClients";
import { type FleetClusterDescription, seedFleet, seedTenantFleet } from "../../sandbox/seed";

interface ExplicitIdentity {
  client_id: string;
  client_secret: string;
  tenant_id: string;
  object_id: string;
  resource_id: string;
  authentication_endpoint: string;
  not_before: string;
  not_after: string;
  renew_after: string;
  cannot_renew_after: string;
}

let sandbox: Sandbox;
let agent: Agent;
let clusters: FleetClusterDescription[];

beforeAll(async () => {
  sandbox = await startSandbox({ perClusterCredentials: true });
  agent = new Agent({ ca: sandbox.caBundlePem, keepAlive: true });
  clusters = seedTenantFleet(sandbox, { clusters: 2, identitiesPerCluster: 2 });
});

afterAll(async () => {
  agent?.destroy();
  await sandbox?.stop();
});

/** A certificate credential as the hook builds one: instance discovery off, the chain sent (x5c), TLS trusted per client. */
function certificateCredential(tenantId: string, clientId: string, bundlePem: string, authorityHost?: string) {
  return new ClientCertificateCredential(
    tenantId,
    clientId,
    { certificate: bundlePem },
    {
      authorityHost: authorityHost ?? sandbox.credentialChain.entraAuthorityHost,
      disableInstanceDiscovery: true,
      sendCertificateChain: true,
      agent,
    },
  );
}

/**
 * The first-party application's credential, from its bundle file as the hook reads it (or from
 * another bundle), in its own tenant or in a cluster's (where the data plane's challenge sends it).
 */
function firstPartyCredential(bundlePem?: string, tenantId = sandbox.credentialChain.firstPartyApplication.tenantId) {
  const { clientId, certificateBundlePath } = sandbox.credentialChain.firstPartyApplication;
  return certificateCredential(tenantId, clientId, bundlePem ?? readFileSync(certificateBundlePath, "utf8"));
}

/** The first party's data plane token in a cluster's tenant, the one its identity URL names and its challenge asks for. */
async function dataPlaneToken(cluster: FleetClusterDescription): Promise<string> {
  return (await firstPartyCredential(undefined, cluster.tenantId).getToken(`${sandbox.credentialChain.dataPlaneAudience}/.default`)).token;
}

async function post(
  url: string,
  body: unknown,
  token?: string,
  via: Agent = agent,
): Promise<{ status: number; headers: Record<string, unknown>; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      { method: "POST", agent: via, headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } },
      (response) => {
        let text = "";
        response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) }),
        );
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}

/** The identity URL with the caller's api-version added to its own query. */
function withApiVersion(identityUrl: string): string {
  const url = new URL(identityUrl);
  url.searchParams.set("api-version", sandbox.credentialChain.dataPlaneApiVersion);
  return url.toString();
}

async function smiCredentialFor(
  cluster: FleetClusterDescription,
): Promise<{ identity: ExplicitIdentity; credential: ClientCertificateCredential; bundle: string }> {
  const answer = await post(withApiVersion(cluster.identityUrl ?? ""), { identityIds: [cluster.serviceManagedIdentity] }, await dataPlaneToken(cluster));
  expect(answer.status).toBe(200);
  const [identity] = answer.json.explicit_identities as ExplicitIdentity[];
  if (identity === undefined) throw new Error("no explicit identity");
  const decoded = await decodePkcs12(Buffer.from(identity.client_secret, "base64"));
  const bundle = `${decoded.certificatesPem.join("")}${decoded.privateKeyPem}`;
  return {
    identity,
    credential: certificateCredential(identity.tenant_id, identity.client_id, bundle, identity.authentication_endpoint),
    bundle,
  };
}

function armClient(credential: ClientCertificateCredential, identityId: string): { client: ManagedServiceIdentityClient; resourceGroup: string; name: string } {
  const parts = parseIdentityResourceId(identityId);
  if (parts === undefined) throw new Error(`not an identity ID: ${identityId}`);
  const client = new ManagedServiceIdentityClient(credential, parts.subscriptionId, { endpoint: sandbox.endpoints.arm, credentialScopes: [armScope], agent });
  return { client, resourceGroup: parts.resourceGroupName, name: parts.name };
}

describe("the per-cluster credential chain with the real SDK clients", () => {
  it("gives the first-party application a token for the data plane audience, from a PS256 assertion carrying x5c", async () => {
    const before = sandbox.statistics.snapshot().entra;
    const { token } = await firstPartyCredential().getToken(`${sandbox.credentialChain.dataPlaneAudience}/.default`);
    const verification = sandbox.tokens.verify(token);
    expect(verification.valid && verification.issued.principal).toEqual({
      tenantId: sandbox.credentialChain.serviceTenantId,
      clientId: sandbox.credentialChain.firstPartyApplication.clientId,
      objectId: sandbox.credentialChain.firstPartyApplication.objectId,
      kind: "application",
    });
    const after = sandbox.statistics.snapshot().entra;
    expect(after.discoveryRequests - before.discoveryRequests).toBe(1);
    expect((after.assertionAlgorithms["PS256+x5c"] ?? 0) - (before.assertionAlgorithms["PS256+x5c"] ?? 0)).toBe(1);
  });

  it("challenges a request without a token in the identity URL's tenant, then answers the SMI's credential as a PKCS #12 the SMI authenticates with", async () => {
    const [cluster] = clusters as [FleetClusterDescription];
    const challenge = await post(withApiVersion(cluster.identityUrl ?? ""), { identityIds: [cluster.serviceManagedIdentity] });
    expect(challenge.status).toBe(401);
    expect(new URL(cluster.identityUrl ?? "").searchParams.get("tid")).toBe(cluster.tenantId);
    expect(challenge.headers["www-authenticate"]).toBe(`Bearer authorization="${sandbox.credentialChain.entraAuthorityHost}/${cluster.tenantId ?? ""}"`);
    // The first party's token of its own (service) tenant is not one of the cluster's tenant: refused with the same challenge.
    const { token: serviceTenantToken } = await firstPartyCredential().getToken(`${sandbox.credentialChain.dataPlaneAudience}/.default`);
    const otherTenant = await post(withApiVersion(cluster.identityUrl ?? ""), { identityIds: [cluster.serviceManagedIdentity] }, serviceTenantToken);
    expect(otherTenant.status).toBe(401);
    expect(otherTenant.headers["www-authenticate"]).toBe(challenge.headers["www-authenticate"]);

    const { identity, credential } = await smiCredentialFor(cluster);
    expect(identity).toMatchObject({
      client_id: cluster.serviceManagedIdentityClientId,
      object_id: cluster.serviceManagedIdentityPrincipalId,
      tenant_id: cluster.tenantId,
      resource_id: cluster.serviceManagedIdentity,
      authentication_endpoint: `${sandbox.credentialChain.entraAuthorityHost}/`,
    });
    expect(Date.parse(identity.not_before)).toBeLessThan(Date.parse(identity.renew_after));
    expect(Date.parse(identity.renew_after)).toBeLessThan(Date.parse(identity.not_after));

    // Its own cluster's operator identity: read. Another identity of its subscription: 403
    // AuthorizationFailed. The other cluster's, in another tenant's subscription: 401 InvalidAuthenticationTokenTenant.
    const [ownIdentity] = Object.values(cluster.dataPlaneOperators) as [string];
    const own = armClient(credential, ownIdentity);
    expect((await own.client.userAssignedIdentities.get(own.resourceGroup, own.name)).clientId).toBe(sandbox.identities.get(ownIdentity)?.clientId);
    const ownParts = parseIdentityResourceId(ownIdentity);
    const unassignedIdentity = sandbox.identities.create(
      `/subscriptions/${ownParts?.subscriptionId ?? ""}/resourceGroups/unassigned-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/unassigned`,
      { tenantId: cluster.tenantId ?? "" },
    ).id;
    const unassigned = armClient(credential, unassignedIdentity);
    const refused = (await unassigned.client.userAssignedIdentities.get(unassigned.resourceGroup, unassigned.name).catch((error: unknown) => error)) as {
      statusCode: number;
      code: string;
      message: string;
    };
    expect(refused.statusCode).toBe(403);
    expect(refused.code).toBe("AuthorizationFailed");
    expect(refused.message).toBe(
      `The client '${identity.object_id}' with object id '${identity.object_id}' does not have authorization to perform action 'Microsoft.ManagedIdentity/userAssignedIdentities/read' over scope '${unassignedIdentity}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
    );
    const [foreignIdentity] = Object.values(clusters[1]?.dataPlaneOperators ?? {}) as [string];
    const foreign = armClient(credential, foreignIdentity);
    const wrongTenant = (await foreign.client.userAssignedIdentities.get(foreign.resourceGroup, foreign.name).catch((error: unknown) => error)) as {
      statusCode: number;
      code: string;
      message: string;
      response?: { headers: { get(name: string): string | undefined } };
    };
    const foreignTenant = clusters[1]?.tenantId ?? "";
    expect(wrongTenant.statusCode).toBe(401);
    expect(wrongTenant.code).toBe("InvalidAuthenticationTokenTenant");
    expect(wrongTenant.message).toMatch(
      new RegExp(
        `^The access token is from the wrong issuer 'https://sts.windows.net/${cluster.tenantId ?? ""}/'. It must match the tenant 'https://sts.windows.net/${foreignTenant}/' associated with this subscription.`,
      ),
    );
    expect(wrongTenant.response?.headers.get("www-authenticate")).toBe(
      `Bearer authorization_uri="${sandbox.credentialChain.entraAuthorityHost}/${foreignTenant}", error="invalid_token", error_description="The access token is from the wrong issuer."`,
    );
  });

  it("refuses another cluster's SMI and tokens of other callers; the fixed identity reads the clusters of its own tenant only", async () => {
    const [first, second] = clusters as [FleetClusterDescription, FleetClusterDescription];
    const token = await dataPlaneToken(first);
    expect((await post(withApiVersion(first.identityUrl ?? ""), { identityIds: [second.serviceManagedIdentity] }, token)).status).toBe(404);

    const { tenantId, clientId, certificateBundlePath } = sandbox.credentialChain.fixedIdentity;
    const fixed = certificateCredential(tenantId, clientId, readFileSync(certificateBundlePath, "utf8"));
    const fixedToken = (await fixed.getToken(`${sandbox.credentialChain.dataPlaneAudience}/.default`)).token;
    const forbidden = await post(withApiVersion(first.identityUrl ?? ""), { identityIds: [first.serviceManagedIdentity] }, fixedToken);
    expect(forbidden.status).toBe(403);
    expect((forbidden.json.error as { code: string }).code).toBe("Forbidden");
    // Upstream's stand-in reads every cluster of its own tenant (a development environment's): a
    // tenant fleet's subscriptions are in other tenants, so ARM refuses its token there.
    const [sameTenantCluster] = seedFleet(sandbox, { clusters: 1, identitiesPerCluster: 1 }) as [FleetClusterDescription];
    for (const cluster of [sameTenantCluster, ...clusters]) {
      const [identityId] = Object.values(cluster.dataPlaneOperators) as [string];
      const { client, resourceGroup, name } = armClient(fixed, identityId);
      if (cluster.tenantId === tenantId) {
        expect((await client.userAssignedIdentities.get(resourceGroup, name)).principalId).toBe(sandbox.identities.get(identityId)?.principalId);
      } else {
        const refusal = (await client.userAssignedIdentities.get(resourceGroup, name).catch((error: unknown) => error)) as { statusCode: number; code: string };
        expect(refusal).toMatchObject({ statusCode: 401, code: "InvalidAuthenticationTokenTenant" });
      }
    }

    // The process credential (managed-identity endpoint) is authorized by role in per-cluster mode: none.
    const managedIdentityToken = sandbox.tokens.issue("https://management.azure.com").token;
    const [identityId] = Object.values(first.dataPlaneOperators) as [string];
    const { client, resourceGroup, name } = armClient(
      { getToken: () => Promise.resolve({ token: managedIdentityToken, expiresOnTimestamp: Date.now() + 60_000 }) } as never,
      identityId,
    );
    expect(((await client.userAssignedIdentities.get(resourceGroup, name).catch((error: unknown) => error)) as { statusCode: number }).statusCode).toBe(403);
  });

  it("refuses a revoked certificate after rotation, with Entra's error and no key in the message", async () => {
    const [, cluster] = clusters as [FleetClusterDescription, FleetClusterDescription];
    const { bundle } = await smiCredentialFor(cluster);
    const rotation = await sandbox.credentials.rotateClusterCredential(cluster.clusterResourceId, { revokePreviousAfterMs: 0 });
    expect(rotation.previousSerialNumber).toBeDefined();
    const stale = certificateCredential(cluster.tenantId ?? "", cluster.serviceManagedIdentityClientId ?? "", bundle);
    const error = (await stale.getToken(armScope).catch((caught: unknown) => caught)) as Error;
    expect(error.message).toContain("AADSTS700027");
    expect(error.message).not.toContain("PRIVATE KEY");
    // The data plane now hands out the new certificate, which works.
    const renewed = await smiCredentialFor(cluster);
    expect(renewed.bundle).not.toBe(bundle);
    expect((await renewed.credential.getToken(armScope)).token).toMatch(/^sandbox-/);

    // First-party rotation: the file holds the new bundle; the old one is refused once revoked.
    const oldBundle = readFileSync(sandbox.credentialChain.firstPartyApplication.certificateBundlePath, "utf8");
    await sandbox.credentials.rotateFilePrincipal("firstPartyApplication", { revokePreviousAfterMs: 0 });
    const refused = (await firstPartyCredential(oldBundle)
      .getToken(`${sandbox.credentialChain.dataPlaneAudience}/.default`)
      .catch((caught: unknown) => caught)) as Error;
    expect(refused.message).toContain("AADSTS700027");
    await expect(firstPartyCredential().getToken(`${sandbox.credentialChain.dataPlaneAudience}/.default`)).resolves.toMatchObject({ tokenType: "Bearer" });
  });

  it("refuses a client of another tenant with AADSTS700016, and injects data plane faults per cluster", async () => {
    const [first, second] = clusters as [FleetClusterDescription, FleetClusterDescription];
    const { bundle } = await smiCredentialFor(first);
    const wrongTenant = certificateCredential(second.tenantId ?? "", first.serviceManagedIdentityClientId ?? "", bundle);
    expect(((await wrongTenant.getToken(armScope).catch((caught: unknown) => caught)) as Error).message).toContain("AADSTS700016");

    sandbox.faults.add({ target: "dataPlane", kind: "noExplicitIdentities", match: { clusterResourceId: second.clusterResourceId } });
    const token = await dataPlaneToken(second);
    const before = sandbox.statistics.snapshot().dataPlane.requestsByCluster[second.clusterResourceId.toLowerCase()] ?? 0;
    const empty = await post(withApiVersion(second.identityUrl ?? ""), { identityIds: [second.serviceManagedIdentity] }, token);
    expect(empty).toMatchObject({ status: 200, json: {} });
    expect(sandbox.statistics.snapshot().dataPlane.requestsByCluster[second.clusterResourceId.toLowerCase()]).toBe(before + 1);
  });
});

describe("the credential chain through the admin API of the global sandbox", () => {
  it("seeds a tenant fleet, injects a data plane fault for one cluster, and rotates the first-party certificate with a delayed revocation", async () => {
    const connection = inject("sandbox");
    const globalAgent = new Agent({ ca: connection.caBundlePem });
    const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
    const [cluster] = (await admin.seedTenantFleet({ clusters: 1, identitiesPerCluster: 1 })) as [FleetClusterDescription];
    const document = await admin.readDocument(cluster.partitionKey, cluster.clusterDocumentId);
    expect(
      (document.properties as { serviceProviderProperties: Record<string, unknown> }).serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL,
    ).toBe(cluster.identityUrl);
    await admin.addFault({
      target: "dataPlane",
      kind: "status",
      statusCode: 503,
      errorCode: "ServiceUnavailable",
      match: { clusterResourceId: cluster.clusterResourceId },
    });
    try {
      const chain = connection.credentialChain;
      // The first party in the cluster's tenant, where the data plane's challenge sends it.
      const credential = new ClientCertificateCredential(
        cluster.tenantId ?? "",
        chain.firstPartyApplication.clientId,
        { certificatePath: chain.firstPartyApplication.certificateBundlePath },
        {
          authorityHost: chain.entraAuthorityHost,
          disableInstanceDiscovery: true,
          sendCertificateChain: true,
          agent: globalAgent,
        },
      );
      const { token } = await credential.getToken(`${chain.dataPlaneAudience}/.default`);
      const url = new URL(cluster.identityUrl ?? "");
      url.searchParams.set("api-version", chain.dataPlaneApiVersion);
      const requestsBefore = (await admin.getStatistics()).dataPlane.requestsByCluster[cluster.clusterResourceId.toLowerCase()] ?? 0;
      const failed = await post(url.toString(), { identityIds: [cluster.serviceManagedIdentity] }, token, globalAgent);
      expect(failed).toMatchObject({ status: 503, json: { error: { code: "ServiceUnavailable" } } });
      expect((await admin.getStatistics()).dataPlane.requestsByCluster[cluster.clusterResourceId.toLowerCase()]).toBe(requestsBefore + 1);

      const before = readFileSync(chain.firstPartyApplication.certificateBundlePath, "utf8");
      const rotation = await admin.rotateCertificate("firstPartyApplication", 60_000);
      expect(readFileSync(chain.firstPartyApplication.certificateBundlePath, "utf8")).not.toBe(before);
      expect(Date.parse(rotation.previousRevocationAt ?? "")).toBeGreaterThan(Date.now());
      const principal = (await admin.listPrincipals()).find((entry) => entry.clientId === chain.firstPartyApplication.clientId);
      expect(principal?.certificates.map((certificate) => certificate.serialNumber)).toEqual([rotation.previousSerialNumber, rotation.serialNumber]);
    } finally {
      globalAgent.destroy();
      await admin.clearFaults("dataPlane");
    }
  });
});
