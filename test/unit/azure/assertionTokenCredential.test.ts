/**
 * A service managed identity's token path without MSAL (resources/azure/assertionTokenCredential.ts)
 * and its ARM requests on the shared pipeline (requestCredentialPolicy).
 * Entra ID is a fake HttpClient here (the unit seam); the sandbox's Entra ID and upstream's own
 * client check the same requests in test/integration/conformance.test.ts.
 */
import { X509Certificate, constants, createHash, verify } from "node:crypto";
import { createHttpHeaders, createPipelineFromOptions, createPipelineRequest } from "@azure/core-rest-pipeline";
import type { HttpClient, PipelineRequest, PipelineResponse } from "@azure/core-rest-pipeline";
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { beforeAll, describe, expect, it } from "vitest";
import {
  assertionTokenCredential,
  continuousAccessChallengeClaims,
  requestCredentialOptions,
  requestCredentialPolicy,
  signClientAssertion,
  tokenEndpointOf,
  tokenRequestForm,
} from "../../../resources/azure/assertionTokenCredential";
import type { TokenRequestPipeline } from "../../../resources/azure/managedIdentitiesDataPlane";
import { createTokenRequestPipeline } from "../../../resources/azure/managedIdentitiesDataPlane";
import type { CertificateCredentialMaterial } from "../../../resources/azure/certificateBundle";
import { parseCertificateBundle } from "../../../resources/azure/certificateBundle";
import { SandboxCertificateAuthority } from "../../../sandbox/certificateAuthority";

let material: CertificateCredentialMaterial;
let leafDer: Buffer;

beforeAll(async () => {
  const authority = await SandboxCertificateAuthority.create("assertion test CA");
  const leaf = await authority.issue("assertion test leaf");
  material = parseCertificateBundle(Buffer.from(`${leaf.privateKeyPem}\n${leaf.certificatePem}\n${authority.certificatePem}`), "test bundle");
  leafDer = new X509Certificate(leaf.certificatePem).raw;
});

const decode = (part: string): Record<string, unknown> => JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;

describe("the client assertion", () => {
  it("is a PS256 JWT laid out as MSAL for Go writes it, and verifies with the leaf certificate's key", () => {
    const endpoint = "https://login.example/tenant-a/oauth2/v2.0/token";
    const assertion = signClientAssertion({ clientId: "smi-client", tokenEndpoint: endpoint, material, nowInSeconds: 1_700_000_000, jwtId: "j-1" });
    const [header, claims, signature] = assertion.split(".") as [string, string, string];
    // Key order as Go's encoding/json writes a map: sorted.
    expect(Buffer.from(header, "base64url").toString("utf8")).toBe(
      JSON.stringify({ alg: "PS256", typ: "JWT", x5c: material.x5c, "x5t#S256": createHash("sha256").update(leafDer).digest("base64") }),
    );
    expect(Buffer.from(claims, "base64url").toString("utf8")).toBe(
      '{"aud":"https://login.example/tenant-a/oauth2/v2.0/token","exp":1700000600,"iss":"smi-client","jti":"j-1","nbf":1700000000,"sub":"smi-client"}',
    );
    expect(material.x5c).toHaveLength(2);
    expect(Buffer.from(material.x5c[0] ?? "", "base64").equals(leafDer)).toBe(true);
    const verified = verify(
      "sha256",
      Buffer.from(`${header}.${claims}`),
      {
        key: new X509Certificate(leafDer).publicKey,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
      },
      Buffer.from(signature, "base64url"),
    );
    expect(verified).toBe(true);
    expect(decode(claims).jti).toBe("j-1");
    expect(signClientAssertion({ clientId: "c", tokenEndpoint: endpoint, material }).split(".")[1]).not.toBe(
      signClientAssertion({ clientId: "c", tokenEndpoint: endpoint, material }).split(".")[1],
    );
  });
});

describe("the token request", () => {
  it("sends the form upstream's client sends: CP1, client info, MSAL's default scopes, keys sorted", () => {
    const form = new URLSearchParams(tokenRequestForm({ clientId: "smi-client", assertion: "a.b.c", scopes: ["https://management.azure.com//.default"] }));
    expect([...form.keys()]).toEqual(["claims", "client_assertion", "client_assertion_type", "client_id", "client_info", "grant_type", "scope"]);
    expect(form.get("claims")).toBe('{"access_token":{"xms_cc":{"values":["CP1"]}}}');
    expect(form.get("scope")).toBe("https://management.azure.com//.default openid offline_access profile");
    expect(form.get("grant_type")).toBe("client_credentials");
    expect(form.get("client_assertion_type")).toBe("urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  });

  it("merges a challenge's claims with the capability without overwriting them", () => {
    const challenge = '{"access_token":{"nbf":{"essential":true,"value":"1700000000"}}}';
    const form = new URLSearchParams(tokenRequestForm({ clientId: "c", assertion: "a", scopes: ["s/.default"], claims: challenge }));
    expect(JSON.parse(form.get("claims") ?? "")).toEqual({ access_token: { nbf: { essential: true, value: "1700000000" }, xms_cc: { values: ["CP1"] } } });
  });

  it("asks the tenant's token endpoint at the answer's authority", () => {
    expect(tokenEndpointOf("https://westus.login.example/", "tenant-a")).toBe("https://westus.login.example/tenant-a/oauth2/v2.0/token");
  });
});

/** A token pipeline whose HttpClient answers as `answer` says, and records what it was sent. */
function fakeEntra(answer: (request: PipelineRequest) => { status: number; body: unknown } | Error): {
  pipeline: TokenRequestPipeline;
  sent: PipelineRequest[];
} {
  const sent: PipelineRequest[] = [];
  const httpClient: HttpClient = {
    sendRequest: (request) => {
      sent.push(request);
      const result = answer(request);
      if (result instanceof Error) return Promise.reject(result);
      return Promise.resolve({
        request,
        status: result.status,
        headers: createHttpHeaders({ "content-type": "application/json" }),
        bodyAsText: JSON.stringify(result.body),
      });
    },
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const core = require("@azure/core-rest-pipeline") as typeof import("@azure/core-rest-pipeline");
  return { pipeline: { core, pipeline: createPipelineFromOptions({ retryOptions: { maxRetries: 0 } }), httpClient }, sent };
}

describe("the SMI's token credential", () => {
  it("returns Entra's token with its lifetime and refresh time, from one POST to the tenant's endpoint", async () => {
    const entra = fakeEntra(() => ({ status: 200, body: { token_type: "Bearer", access_token: "token-1", expires_in: 3599, refresh_in: 1800 } }));
    const credential = assertionTokenCredential("tenant-a", "smi-client", material, {
      authorityHost: "https://login.example",
      pipeline: entra.pipeline,
      now: () => 1_000_000,
    });
    const token = await credential.getToken("https://management.azure.com//.default");
    expect(token).toEqual({ token: "token-1", tokenType: "Bearer", expiresOnTimestamp: 1_000_000 + 3_599_000, refreshAfterTimestamp: 1_000_000 + 1_800_000 });
    expect(entra.sent).toHaveLength(1);
    const request = entra.sent[0];
    if (request === undefined) throw new Error("no request was sent");
    expect(request.method).toBe("POST");
    expect(request.url).toBe("https://login.example/tenant-a/oauth2/v2.0/token");
    expect(request.headers.get("content-type")).toBe("application/x-www-form-urlencoded; charset=utf-8");
    const assertion = new URLSearchParams(typeof request.body === "string" ? request.body : "").get("client_assertion") ?? "";
    expect(decode(assertion.split(".")[1] ?? "").aud).toBe("https://login.example/tenant-a/oauth2/v2.0/token");
  });

  it("renews a token of more than two hours at half its life when Entra gives no refresh_in", async () => {
    const entra = fakeEntra(() => ({ status: 200, body: { access_token: "t", expires_in: "86399" } }));
    const credential = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline: entra.pipeline, now: () => 0 });
    expect(await credential.getToken("s/.default")).toMatchObject({ expiresOnTimestamp: 86_399_000, refreshAfterTimestamp: 43_199_500 });
  });

  it("names a refusal as @azure/identity does, with Entra's status and first line, and nothing of the assertion", async () => {
    const entra = fakeEntra(() => ({
      status: 401,
      body: { error: "invalid_client", error_description: "AADSTS700027: Client assertion failed signature validation.\r\nTrace ID: x", error_codes: [700027] },
    }));
    const credential = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline: entra.pipeline });
    const error = (await credential.getToken("s/.default").catch((caught: unknown) => caught)) as Error & { statusCode?: number };
    expect(error.name).toBe("AuthenticationError");
    expect(error.statusCode).toBe(401);
    expect(error.message).toBe("Entra ID refused the token request (401 invalid_client): AADSTS700027: Client assertion failed signature validation.");
  });

  it("names an unreachable Entra ID and a 200 without a token as authentication failures; passes an abort on", async () => {
    const refused = fakeEntra(() => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
    const credential = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline: refused.pipeline });
    await expect(credential.getToken("s/.default")).rejects.toMatchObject({
      name: "AuthenticationError",
      message: "Entra ID at login.example could not be reached (ECONNREFUSED)",
    });
    const empty = fakeEntra(() => ({ status: 200, body: { token_type: "Bearer" } }));
    const second = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline: empty.pipeline });
    await expect(second.getToken("s/.default")).rejects.toMatchObject({ name: "AuthenticationError", statusCode: 200 });
    const aborted = fakeEntra(() => Object.assign(new Error("aborted"), { name: "AbortError" }));
    const third = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline: aborted.pipeline });
    await expect(third.getToken("s/.default")).rejects.toMatchObject({ name: "AbortError" });
  });

  it("refuses a token in a tenant other than its own without asking Entra ID", async () => {
    const entra = fakeEntra(() => ({ status: 200, body: { access_token: "t", expires_in: 3600 } }));
    const credential = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline: entra.pipeline });
    await expect(credential.getToken("s/.default", { tenantId: "tenant-b" })).rejects.toMatchObject({ name: "AuthenticationError" });
    expect(entra.sent).toHaveLength(0);
  });

  it.each([
    ["another host", 307, "https://elsewhere.example/tenant-a/oauth2/v2.0/token"],
    ["its own host", 307, "https://login.example/other/oauth2/v2.0/token"],
    ["another host, as a 308", 308, "https://elsewhere.example/token"],
  ])("follows no redirect (to %s): the assertion is sent once, to the tenant's endpoint, and the redirect is a refusal", async (_name, status, location) => {
    const sent: PipelineRequest[] = [];
    const httpClient: HttpClient = {
      sendRequest: (request) => {
        sent.push(request);
        return Promise.resolve({ request, status, headers: createHttpHeaders({ location }), bodyAsText: "" });
      },
    };
    // The project's own token pipeline, with its policies, over a fake HttpClient.
    const pipeline = { ...createTokenRequestPipeline({ userAgentPrefix: "test", maxRetries: 0 }), httpClient };
    const credential = assertionTokenCredential("tenant-a", "c", material, { authorityHost: "https://login.example", pipeline });
    await expect(credential.getToken("s/.default")).rejects.toMatchObject({ name: "AuthenticationError", statusCode: status });
    expect(sent.map((request) => request.url)).toEqual(["https://login.example/tenant-a/oauth2/v2.0/token"]);
  });
});

/** A credential that hands out numbered tokens and records what it was asked. */
function countingCredential(name: string): TokenCredential & { asked: Array<GetTokenOptions | undefined> } {
  const asked: Array<GetTokenOptions | undefined> = [];
  return {
    asked,
    getToken: (_scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken> => {
      asked.push(options);
      return Promise.resolve({ token: `${name}-${asked.length}`, expiresOnTimestamp: Date.now() + 3_600_000 });
    },
  };
}

describe("the shared ARM pipeline's request credential", () => {
  const challenge = `Bearer authorization_uri="https://login.example", error="insufficient_claims", claims="${Buffer.from('{"access_token":{"nbf":{"essential":true,"value":"1"}}}').toString("base64")}"`;

  async function send(options: {
    credential?: TokenCredential;
    answers: number[];
    wwwAuthenticate?: string;
  }): Promise<{ statuses: number[]; authorizations: string[] }> {
    const authorizations: string[] = [];
    const answers = [...options.answers];
    const pipeline = createPipelineFromOptions({ retryOptions: { maxRetries: 0 } });
    pipeline.addPolicy(requestCredentialPolicy("arm/.default", "bearerTokenAuthenticationPolicy"), { phase: "Sign" });
    const httpClient: HttpClient = {
      sendRequest: (request): Promise<PipelineResponse> => {
        authorizations.push(request.headers.get("authorization") ?? "");
        const status = answers.shift() ?? 200;
        const headers = createHttpHeaders(status === 401 && options.wwwAuthenticate !== undefined ? { "www-authenticate": options.wwwAuthenticate } : {});
        return Promise.resolve({ request, status, headers });
      },
    };
    // As core-client hands an operation's tracing options to its request.
    const request = createPipelineRequest({ url: "https://arm.example/x" });
    if (options.credential !== undefined) request.tracingOptions = requestCredentialOptions(options.credential).tracingOptions;
    const response = await pipeline.sendRequest(httpClient, request);
    return { statuses: [response.status], authorizations };
  }

  it("authorizes each request with the credential it carries", async () => {
    const a = countingCredential("a");
    const b = countingCredential("b");
    expect((await send({ credential: a, answers: [200] })).authorizations).toEqual(["Bearer a-1"]);
    expect((await send({ credential: b, answers: [200] })).authorizations).toEqual(["Bearer b-1"]);
    expect(a.asked[0]).toMatchObject({ enableCae: true });
  });

  it("answers a continuous access evaluation challenge with one new token carrying its claims, then gives ARM's answer", async () => {
    const a = countingCredential("a");
    const result = await send({ credential: a, answers: [401, 200], wwwAuthenticate: challenge });
    expect(result.authorizations).toEqual(["Bearer a-1", "Bearer a-2"]);
    expect(a.asked[1]?.claims).toBe('{"access_token":{"nbf":{"essential":true,"value":"1"}}}');
    const again = await send({ credential: countingCredential("b"), answers: [401, 401], wwwAuthenticate: challenge });
    expect(again).toEqual({ statuses: [401], authorizations: ["Bearer b-1", "Bearer b-2"] });
  });

  it("passes a 401 without a claims challenge on, without asking again", async () => {
    const a = countingCredential("a");
    expect(await send({ credential: a, answers: [401], wwwAuthenticate: 'Bearer error="invalid_token"' })).toEqual({
      statuses: [401],
      authorizations: ["Bearer a-1"],
    });
    expect(continuousAccessChallengeClaims('Bearer error="insufficient_claims", claims="bm90IGpzb24="')).toBeUndefined();
  });

  it("refuses a request that carries no credential", async () => {
    await expect(send({ answers: [200] })).rejects.toThrow(/carries no credential/);
  });
});
