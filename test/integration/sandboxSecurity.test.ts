/**
 * Security of the sandbox itself, beyond sandbox.test.ts (loopback-only listeners, a wrong admin
 * token, the identity header): every admin route demands the exact bearer token and changes
 * nothing without it, the admin API cannot be read from a web page, and ARM and Cosmos accept a
 * token only for their own audience.
 */
import { randomUUID } from "node:crypto";
import { Agent, request as httpsRequest } from "node:https";
import { describe, expect, inject, it } from "vitest";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { identityResourceId } from "../../sandbox/identityStore";

const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);

const routes: Array<[string, string]> = [
  ["GET", "/health"],
  ["GET", "/identities"],
  ["POST", "/identities"],
  ["DELETE", "/identities?resourceId=x"],
  ["POST", "/identities/rotate"],
  ["GET", "/documents"],
  ["PUT", "/documents/partition/document"],
  ["PATCH", "/documents/partition/document"],
  ["DELETE", "/documents/partition/document"],
  ["POST", "/faults"],
  ["GET", "/faults"],
  ["DELETE", "/faults"],
  ["PUT", "/latency"],
  ["GET", "/stats"],
  ["POST", "/stats/reset"],
  ["POST", "/tokens/expire"],
  ["PUT", "/tokens/lifetime"],
  ["POST", "/seed/demo"],
  ["POST", "/seed/fleet"],
];

const forgedCredentials: Array<[string, Record<string, string>, string]> = [
  ["no Authorization header", {}, ""],
  ["the token without 'Bearer '", { authorization: connection.adminToken }, ""],
  ["a lowercase scheme", { authorization: `bearer ${connection.adminToken}` }, ""],
  ["a one-character prefix of the token", { authorization: `Bearer ${connection.adminToken.slice(0, -1)}` }, ""],
  ["Basic authentication", { authorization: `Basic ${Buffer.from(`admin:${connection.adminToken}`).toString("base64")}` }, ""],
  ["the token in the query string", {}, `token=${encodeURIComponent(connection.adminToken)}&access_token=${encodeURIComponent(connection.adminToken)}`],
  ["the token of another sandbox service (the identity header)", { authorization: `Bearer ${connection.identityHeader}` }, ""],
];

async function sandboxToken(resource: string): Promise<string> {
  const url = `${connection.endpoints.identity}?api-version=2019-08-01&resource=${encodeURIComponent(resource)}`;
  const response = await fetch(url, { headers: { "x-identity-header": connection.identityHeader } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** One HTTPS GET that trusts only the given certificate; resolves status and body. */
async function httpsGet(url: string, certificatePem: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const agent = new Agent({ ca: certificatePem });
  try {
    return await new Promise((resolve, reject) => {
      const request = httpsRequest(url, { method: "GET", headers, agent }, (response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on("error", reject);
      request.end();
    });
  } finally {
    agent.destroy();
  }
}

describe("sandbox admin API authorization", () => {
  it.each(forgedCredentials)("refuses %s on every route with 401 and changes nothing", async (_name, headers, query) => {
    const identityId = identityResourceId(randomUUID(), "security-rg", "guarded-identity");
    await admin.createIdentity(identityId);
    const before = {
      identities: (await admin.listIdentities()).length,
      faults: (await admin.listFaults()).length,
      identity: await admin.getIdentity(identityId),
    };
    for (const [method, path] of routes) {
      const url = `${connection.endpoints.admin}${path}${query === "" ? "" : `${path.includes("?") ? "&" : "?"}${query}`}`;
      const response = await fetch(url, {
        method,
        headers: { ...headers, "content-type": "application/json" },
        ...(method === "GET" || method === "DELETE"
          ? {}
          : { body: JSON.stringify({ target: "arm", kind: "throttle", resourceId: identityId, lifetimeInMs: 1 }) }),
      });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(await response.text()).not.toContain(connection.adminToken);
    }
    expect({
      identities: (await admin.listIdentities()).length,
      faults: (await admin.listFaults()).length,
      identity: await admin.getIdentity(identityId),
    }).toEqual(before);
    await admin.deleteIdentity(identityId);
  });

  it("sends no CORS headers, so a web page on another origin cannot read the answers", async () => {
    const preflight = await fetch(`${connection.endpoints.admin}/identities`, {
      method: "OPTIONS",
      headers: { origin: "https://attacker.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-headers")).toBeNull();
    const simple = await fetch(`${connection.endpoints.admin}/health`, {
      headers: { origin: "https://attacker.example", authorization: `Bearer ${connection.adminToken}` },
    });
    expect(simple.status).toBe(200);
    expect(simple.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("token audiences", () => {
  it("ARM refuses a live sandbox token issued for another resource", async () => {
    const identityId = identityResourceId(randomUUID(), "security-rg", "audience-identity");
    await admin.createIdentity(identityId);
    const url = `${connection.endpoints.arm}${identityId}?api-version=2024-11-30`;
    const armToken = await sandboxToken("https://management.azure.com");
    expect((await httpsGet(url, connection.armCertificatePem, { authorization: `Bearer ${armToken}` })).status).toBe(200);
    const vaultToken = await sandboxToken("https://vault.azure.net");
    const refused = await httpsGet(url, connection.armCertificatePem, { authorization: `Bearer ${vaultToken}` });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "InvalidAuthenticationToken" } });
    expect(refused.body).toContain("wrong audience");
    expect(refused.body).not.toContain(vaultToken);
  });

  it("Cosmos refuses an Entra ID token issued for ARM", async () => {
    const armToken = await sandboxToken("https://management.azure.com");
    const date = new Date().toUTCString();
    const response = await httpsGet(`${connection.endpoints.cosmos}/dbs/${connection.database}`, connection.cosmosCertificatePem, {
      authorization: `type=aad&ver=1.0&sig=${armToken}`,
      "x-ms-date": date,
      "x-ms-version": "2020-07-15",
    });
    expect(response.status).toBe(401);
    expect(response.body).not.toContain(armToken);
  });
});
