/**
 * What the sandbox's Entra token endpoint, ARM and Managed Identities data plane accept and answer
 * where real Azure is lenient or answers in a way our own clients never provoke: client credential
 * requests as MSAL for Go writes them (OpenID scopes, standard base64 thumbprints) next to the
 * refusals Entra keeps; a token of another tenant at ARM; several identities per data plane
 * request (nulls for a deleted identity, another order and casing on request); a challenge in
 * each cluster's own tenant (its identity URL's tid) or in another one; and the request recording, which holds nothing secret. Through the admin API
 * of the global sandbox (each change undone), with hand-made requests where a library would hide
 * what is sent.
 */
import { constants, createHash, createPrivateKey, randomUUID, sign, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { ClientCertificateCredential } from "@azure/identity";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { decodePkcs12 } from "../../sandbox/certificateAuthority";
import type { FleetClusterDescription } from "../../sandbox/seed";

const connection = inject("sandbox");
const chain = connection.credentialChain;
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
let agent: Agent;
let clusters: FleetClusterDescription[];

beforeAll(async () => {
  agent = new Agent({ ca: connection.caBundlePem, keepAlive: true });
  clusters = await admin.seedTenantFleet({ clusters: 2, identitiesPerCluster: 1 });
});

afterAll(() => {
  agent?.destroy();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
}

function send(url: string, method: string, body: string | undefined, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(url, { method, agent, headers }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) }),
      );
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** The first party's certificate and key, from its bundle file. */
function firstPartyBundle(): { leaf: X509Certificate; keyPem: string } {
  const pem = readFileSync(chain.firstPartyApplication.certificateBundlePath, "utf8");
  const [leafPem] = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const [keyPem] = pem.match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/g) ?? [];
  return { leaf: new X509Certificate(leafPem ?? ""), keyPem: keyPem ?? "" };
}

const base64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * A client credentials request of the first party with a PS256 assertion, written by hand.
 *
 * @param scope - The `scope` field (omitted when undefined).
 * @param thumbprint - How `x5t#S256` is encoded.
 */
function tokenRequest(scope: string | undefined, thumbprint: "base64" | "base64url" | "wrong", tenantId = chain.serviceTenantId): Promise<Answer> {
  const { leaf, keyPem } = firstPartyBundle();
  const endpoint = `${chain.entraAuthorityHost}/${tenantId}/oauth2/v2.0/token`;
  const digest = createHash("sha256").update(leaf.raw).digest();
  const x5tS256 = thumbprint === "wrong" ? createHash("sha256").update("another certificate").digest("base64") : digest.toString(thumbprint);
  const header = { alg: "PS256", typ: "JWT", "x5t#S256": x5tS256, x5c: [leaf.raw.toString("base64")] };
  const now = Math.floor(Date.now() / 1000);
  const clientId = chain.firstPartyApplication.clientId;
  const payload = { aud: endpoint, iss: clientId, sub: clientId, jti: randomUUID(), nbf: now, exp: now + 600 };
  const signingInput = `${base64url(header)}.${base64url(payload)}`;
  const signature = sign("sha256", Buffer.from(signingInput), {
    key: createPrivateKey(keyPem),
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: 32,
  }).toString("base64url");
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: clientId,
    client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    client_assertion: `${signingInput}.${signature}`,
    ...(scope === undefined ? {} : { scope }),
  });
  return send(endpoint, "POST", form.toString(), { "content-type": "application/x-www-form-urlencoded" });
}

function firstPartyCredential(tenantId: string = chain.serviceTenantId): ClientCertificateCredential {
  return new ClientCertificateCredential(
    tenantId,
    chain.firstPartyApplication.clientId,
    { certificatePath: chain.firstPartyApplication.certificateBundlePath },
    { authorityHost: chain.entraAuthorityHost, disableInstanceDiscovery: true, sendCertificateChain: true, agent },
  );
}

function dataPlane(cluster: FleetClusterDescription, identityIds: string[], token?: string): Promise<Answer> {
  const url = new URL(cluster.identityUrl ?? "");
  url.searchParams.set("api-version", chain.dataPlaneApiVersion);
  return send(url.toString(), "POST", JSON.stringify({ identityIds }), {
    "content-type": "application/json",
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
  });
}

const dataPlaneScope = `${chain.dataPlaneAudience}/.default`;

describe("the sandbox Entra as real Entra ID reads a client credentials request", () => {
  it("accepts MSAL for Go's OpenID scopes and a standard base64 x5t#S256, and keeps Entra's refusals of the scope", async () => {
    const accepted = await tokenRequest(`${dataPlaneScope} openid offline_access profile`, "base64");
    expect(accepted.status).toBe(200);
    expect(accepted.json).toMatchObject({ token_type: "Bearer" });
    expect((await tokenRequest(dataPlaneScope, "base64url")).status).toBe(200);

    const refusals: Array<[string | undefined, number, string]> = [
      [undefined, 900144, "invalid_request"],
      ["openid offline_access profile", 1002012, "invalid_scope"],
      [`${dataPlaneScope} https://management.azure.com/.default openid`, 70011, "invalid_scope"],
      [`${chain.dataPlaneAudience} openid offline_access profile`, 1002012, "invalid_scope"],
    ];
    for (const [scope, code, error] of refusals) {
      const refused = await tokenRequest(scope, "base64");
      expect(refused.status, String(scope)).toBe(400);
      expect(refused.json, String(scope)).toMatchObject({ error, error_codes: [code] });
      expect(refused.json.error_description, String(scope)).toMatch(new RegExp(`^AADSTS${code}: `));
    }
    const wrongThumbprint = await tokenRequest(dataPlaneScope, "wrong");
    expect(wrongThumbprint.status).toBe(401);
    expect(wrongThumbprint.json).toMatchObject({ error: "invalid_client", error_codes: [700027] });
  });
});

describe("the sandbox data plane for several identities, as the real one answers them", () => {
  it("answers every assigned identity, with nulls for a deleted one, in another order and casing when told to, and 404 for one not assigned", async () => {
    const [cluster, other] = clusters as [FleetClusterDescription, FleetClusterDescription];
    const [controlPlane] = Object.values(cluster.controlPlaneOperators ?? {}) as [string];
    const [registered] = (await admin.listDataPlaneClusters()).filter((entry) => entry.clusterResourceId === cluster.clusterResourceId);
    expect(registered?.assignedIdentities).toEqual([controlPlane, cluster.serviceManagedIdentity]);
    const { token } = await firstPartyCredential(cluster.tenantId).getToken(dataPlaneScope);
    const asked = [cluster.serviceManagedIdentity, controlPlane];

    const answer = await dataPlane(cluster, asked, token);
    expect(answer.status).toBe(200);
    const entries = answer.json.explicit_identities as Array<Record<string, string | null>>;
    expect(entries.map((entry) => entry.resource_id)).toEqual(asked);
    const controlPlaneIdentity = await admin.getIdentity(controlPlane);
    const [, controlPlaneEntry] = entries as [Record<string, string | null>, Record<string, string>];
    expect(controlPlaneEntry).toMatchObject({
      client_id: controlPlaneIdentity.clientId,
      object_id: controlPlaneIdentity.principalId,
      tenant_id: cluster.tenantId,
    });
    // Its credential is its own: the control plane identity signs in with it in the cluster's tenant.
    const decoded = await decodePkcs12(Buffer.from(controlPlaneEntry.client_secret, "base64"));
    const credential = new ClientCertificateCredential(
      cluster.tenantId ?? "",
      controlPlaneIdentity.clientId,
      { certificate: `${decoded.certificatesPem.join("")}${decoded.privateKeyPem}` },
      { authorityHost: chain.entraAuthorityHost, disableInstanceDiscovery: true, sendCertificateChain: true, agent },
    );
    await expect(credential.getToken("https://management.azure.com/.default")).resolves.toMatchObject({ tokenType: "Bearer" });

    await admin.setAnswerVariation({ shuffleOrder: true, changeResourceIdCasing: true });
    await admin.deleteIdentity(controlPlane);
    try {
      const varied = await dataPlane(cluster, asked, token);
      const variedEntries = varied.json.explicit_identities as Array<Record<string, string | null>>;
      expect(variedEntries.map((entry) => entry.resource_id)).not.toEqual(asked);
      expect(variedEntries.map((entry) => entry.resource_id?.toLowerCase()).sort()).toEqual(asked.map((id) => id.toLowerCase()).sort());
      const deleted = variedEntries.find((entry) => entry.resource_id?.toLowerCase() === controlPlane.toLowerCase());
      expect(deleted).toMatchObject({ client_id: null, object_id: null, client_secret: null, tenant_id: cluster.tenantId });
    } finally {
      await admin.setAnswerVariation({ shuffleOrder: false, changeResourceIdCasing: false });
      await admin.createIdentity(controlPlane, { clientId: controlPlaneIdentity.clientId, principalId: controlPlaneIdentity.principalId });
    }

    const foreign = await dataPlane(cluster, [cluster.serviceManagedIdentity, other.serviceManagedIdentity], token);
    expect(foreign).toMatchObject({ status: 404, json: { error: { code: "NotFound" } } });
    // The path upstream's client never sends (a trailing '/') is no resource.
    const url = new URL(cluster.identityUrl ?? "");
    url.pathname += "/";
    url.searchParams.set("api-version", chain.dataPlaneApiVersion);
    const slashed = await send(url.toString(), "POST", JSON.stringify({ identityIds: [cluster.serviceManagedIdentity] }), {
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
    });
    expect(slashed.status).toBe(404);
  });

  it("challenges in each cluster's own tenant, which its identity URL names, or in the tenant it is told to; the first party gets a token there, and only that tenant's is accepted", async () => {
    const [cluster, other] = clusters as [FleetClusterDescription, FleetClusterDescription];
    for (const each of [cluster, other]) {
      expect(new URL(each.identityUrl ?? "").searchParams.get("tid")).toBe(each.tenantId);
      expect((await dataPlane(each, [each.serviceManagedIdentity])).headers["www-authenticate"]).toBe(
        `Bearer authorization="${chain.entraAuthorityHost}/${each.tenantId ?? ""}"`,
      );
    }
    const challengeTenant = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
    await admin.setChallengeTenant(challengeTenant, [cluster.clusterResourceId]);
    try {
      const challenge = await dataPlane(cluster, [cluster.serviceManagedIdentity]);
      expect(challenge.status).toBe(401);
      expect(challenge.headers["www-authenticate"]).toBe(`Bearer authorization="${chain.entraAuthorityHost}/${challengeTenant}"`);
      // The other cluster still challenges in its own tenant.
      expect((await dataPlane(other, [other.serviceManagedIdentity])).headers["www-authenticate"]).toBe(
        `Bearer authorization="${chain.entraAuthorityHost}/${other.tenantId ?? ""}"`,
      );
      const ownTenantToken = (await firstPartyCredential(cluster.tenantId).getToken(dataPlaneScope)).token;
      const refused = await dataPlane(cluster, [cluster.serviceManagedIdentity], ownTenantToken);
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toBe(`Bearer authorization="${chain.entraAuthorityHost}/${challengeTenant}"`);
      const challengeTenantToken = (await firstPartyCredential(challengeTenant).getToken(dataPlaneScope)).token;
      expect((await dataPlane(cluster, [cluster.serviceManagedIdentity], challengeTenantToken)).status).toBe(200);
      expect((await dataPlane(other, [other.serviceManagedIdentity], challengeTenantToken)).status).toBe(401);
    } finally {
      await admin.setChallengeTenant(cluster.tenantId ?? "", [cluster.clusterResourceId]);
    }
  });
});

describe("the sandbox ARM and the request recording", () => {
  it("answers a token of another tenant with 401 InvalidAuthenticationTokenTenant, and records every request without a secret", async () => {
    const [cluster, other] = clusters as [FleetClusterDescription, FleetClusterDescription];
    await admin.startRecording();
    const { token } = await firstPartyCredential(cluster.tenantId).getToken(dataPlaneScope);
    const answer = await dataPlane(cluster, [cluster.serviceManagedIdentity], token);
    const [smi] = answer.json.explicit_identities as Array<Record<string, string>>;
    const decoded = await decodePkcs12(Buffer.from(smi?.client_secret ?? "", "base64"));
    const smiCredential = new ClientCertificateCredential(
      cluster.tenantId ?? "",
      smi?.client_id ?? "",
      { certificate: `${decoded.certificatesPem.join("")}${decoded.privateKeyPem}` },
      { authorityHost: chain.entraAuthorityHost, disableInstanceDiscovery: true, sendCertificateChain: true, agent },
    );
    const armToken = (await smiCredential.getToken("https://management.azure.com/.default")).token;
    const [foreignIdentity] = Object.values(other.dataPlaneOperators) as [string];
    const refused = await send(`${connection.endpoints.arm}${foreignIdentity}?api-version=2024-11-30`, "GET", undefined, {
      authorization: `Bearer ${armToken}`,
    });
    const recording = await admin.stopRecording();

    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: { code: "InvalidAuthenticationTokenTenant" } });
    expect(refused.headers["www-authenticate"]).toBe(
      `Bearer authorization_uri="${chain.entraAuthorityHost}/${other.tenantId ?? ""}", error="invalid_token", error_description="The access token is from the wrong issuer."`,
    );

    const byTarget = (target: string) => recording.requests.filter((entry) => entry.target === target);
    expect(byTarget("dataPlane")).toEqual([
      expect.objectContaining({
        method: "POST",
        path: new URL(cluster.identityUrl ?? "").pathname,
        contentType: "application/json",
        status: 200,
        body: { identityIds: [cluster.serviceManagedIdentity] },
        token: { audience: chain.dataPlaneAudience, tenantId: cluster.tenantId, clientId: chain.firstPartyApplication.clientId, kind: "application" },
      }),
    ]);
    const tokenRequests = byTarget("entra").filter((entry) => entry.method === "POST");
    expect(tokenRequests.map((entry) => entry.form?.client_id)).toEqual([chain.firstPartyApplication.clientId, smi?.client_id]);
    expect(tokenRequests[0]?.form).toMatchObject({
      grant_type: "client_credentials",
      scope: expect.stringContaining(dataPlaneScope) as string,
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      assertionHeader: { alg: "PS256", x5cCertificates: 2 },
    });
    expect(tokenRequests[0]?.form?.fields).toContain("client_assertion");
    expect(byTarget("arm")).toEqual([
      expect.objectContaining({
        method: "GET",
        status: 401,
        errorCode: "InvalidAuthenticationTokenTenant",
        query: "api-version=2024-11-30",
        token: expect.objectContaining({ audience: "https://management.azure.com", tenantId: cluster.tenantId, clientId: smi?.client_id }) as unknown,
      }),
    ]);
    // Nothing secret: no token, no assertion, no credential.
    const recorded = JSON.stringify(recording);
    for (const secret of [token, armToken, smi?.client_secret ?? "", "PRIVATE KEY", 'client_assertion":']) {
      expect(recorded.includes(secret), secret.slice(0, 12)).toBe(false);
    }
  });
});
