import { constants, createHash, randomUUID, verify as verifySignature, X509Certificate } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { SandboxCertificate } from "./certificate";
import type { SandboxPrincipal } from "./entraDirectory";
import type { FaultInjector } from "./faultInjector";
import { applyFaults, listenOnLoopback, type ListeningServer, loopbackHost, readBody, sendJson } from "./httpUtilities";
import type { SandboxCredentials } from "./sandboxCredentials";
import { increment, type SandboxStatistics } from "./sandboxStatistics";
import type { TokenRegistry } from "./tokenRegistry";

/** What the sandbox Entra needs from the rest of the sandbox. */
export interface EntraServerOptions {
  certificate: SandboxCertificate;
  credentials: SandboxCredentials;
  tokens: TokenRegistry;
  faults: FaultInjector;
  statistics: SandboxStatistics;
}

/** A running sandbox Entra. */
export interface EntraServer extends ListeningServer {
  /** `https://127.0.0.1:<port>`: the authority host for `@azure/identity`. */
  authorityHost: string;
}

const jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const clockSkewInSeconds = 300;

/** A refusal in Entra's shape. */
class EntraError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: string,
    readonly code: number,
    description: string,
  ) {
    super(description);
  }
}

function entraErrorBody(authorityHost: string, failure: EntraError): Record<string, unknown> {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = new Date().toISOString().replace("T", " ");
  return {
    error: failure.error,
    error_description: `AADSTS${failure.code}: ${failure.message} Trace ID: ${traceId} Correlation ID: ${correlationId} Timestamp: ${timestamp}`,
    error_codes: [failure.code],
    timestamp,
    trace_id: traceId,
    correlation_id: correlationId,
    error_uri: `${authorityHost}/error?code=${failure.code}`,
  };
}

function base64UrlJson(segment: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new SyntaxError("not a JSON object");
  return parsed as Record<string, unknown>;
}

function thumbprintOf(certificate: X509Certificate, algorithm: "sha1" | "sha256"): string {
  return createHash(algorithm).update(certificate.raw).digest("base64url");
}

/** The assertion's parts, once parsed. */
interface ParsedAssertion {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

function parseAssertion(assertion: string): ParsedAssertion {
  const parts = assertion.split(".");
  if (parts.length !== 3 || parts.some((part) => part === "")) {
    throw new EntraError(400, "invalid_request", 50027, "JWT token is invalid or malformed.");
  }
  const [headerText = "", payloadText = "", signatureText = ""] = parts;
  try {
    return {
      header: base64UrlJson(headerText),
      payload: base64UrlJson(payloadText),
      signingInput: `${headerText}.${payloadText}`,
      signature: Buffer.from(signatureText, "base64url"),
    };
  } catch {
    throw new EntraError(400, "invalid_request", 50027, "JWT token is invalid or malformed.");
  }
}

/** Finds the certificate the assertion was signed with: the `x5c` leaf, or a registered one by thumbprint. */
function signingCertificate(header: Record<string, unknown>, principal: SandboxPrincipal): X509Certificate {
  const x5c = header.x5c;
  const chain = Array.isArray(x5c) ? x5c : typeof x5c === "string" ? [x5c] : [];
  const x5t = typeof header.x5t === "string" ? header.x5t : undefined;
  const x5tS256 = typeof header["x5t#S256"] === "string" ? header["x5t#S256"] : undefined;
  if (chain.length > 0) {
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(Buffer.from(String(chain[0]), "base64"));
    } catch {
      throw new EntraError(401, "invalid_client", 700027, "Client assertion contains an invalid x5c certificate.");
    }
    if ((x5tS256 !== undefined && x5tS256 !== thumbprintOf(leaf, "sha256")) || (x5t !== undefined && x5t !== thumbprintOf(leaf, "sha1"))) {
      throw new EntraError(
        401,
        "invalid_client",
        700027,
        "Client assertion failed signature validation. [Reason - The thumbprint in the header does not match the x5c certificate.]",
      );
    }
    return leaf;
  }
  for (const registered of principal.certificates) {
    const certificate = new X509Certificate(registered.certificatePem);
    if ((x5tS256 !== undefined && x5tS256 === thumbprintOf(certificate, "sha256")) || (x5t !== undefined && x5t === thumbprintOf(certificate, "sha1"))) {
      return certificate;
    }
  }
  throw new EntraError(
    401,
    "invalid_client",
    700027,
    `The certificate with identifier used to sign the client assertion is not registered on application. [Reason - The key was not found., Thumbprint of key used by client: '${x5tS256 ?? x5t ?? "none"}']`,
  );
}

function checkSignature(parsed: ParsedAssertion, certificate: X509Certificate): void {
  const algorithm = parsed.header.alg;
  const key = certificate.publicKey;
  let valid: boolean;
  if (algorithm === "RS256") {
    valid = verifySignature("sha256", Buffer.from(parsed.signingInput), key, parsed.signature);
  } else if (algorithm === "PS256") {
    valid = verifySignature(
      "sha256",
      Buffer.from(parsed.signingInput),
      { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
      parsed.signature,
    );
  } else {
    throw new EntraError(401, "invalid_client", 5002738, `Invalid JWT token. '${String(algorithm)}' is not a supported signature algorithm.`);
  }
  if (!valid) {
    throw new EntraError(401, "invalid_client", 700027, "Client assertion failed signature validation.");
  }
}

/**
 * Verifies a client assertion for a principal: claims (iss, sub, aud, nbf, exp), the signing
 * certificate (issued by the sandbox CA, valid, not revoked, registered on the principal) and the
 * signature. Throws an {@link EntraError} naming the first problem; nothing secret goes into it.
 */
function verifyAssertion(options: EntraServerOptions, parsed: ParsedAssertion, principal: SandboxPrincipal, tenant: string): void {
  const { payload } = parsed;
  if (payload.iss !== principal.clientId && String(payload.iss).toLowerCase() !== principal.clientId.toLowerCase()) {
    throw new EntraError(401, "invalid_client", 700021, "Client assertion application identifier doesn't match 'client_id' parameter.");
  }
  if (String(payload.sub).toLowerCase() !== principal.clientId.toLowerCase()) {
    throw new EntraError(401, "invalid_client", 700021, "Client assertion subject doesn't match 'client_id' parameter.");
  }
  const host = options.credentials.entraAuthorityHost;
  const audiences = [`${host}/${tenant}/oauth2/v2.0/token`, `${host}/${tenant}/v2.0`, `${host}/${tenant}/oauth2/token`].map((value) => value.toLowerCase());
  const audience = Array.isArray(payload.aud) ? payload.aud.map(String) : [String(payload.aud)];
  if (!audience.some((value) => audiences.includes(value.toLowerCase()))) {
    throw new EntraError(401, "invalid_client", 700212, `The client assertion audience '${audience.join(", ")}' is not the token endpoint of this tenant.`);
  }
  const now = Date.now() / 1000;
  const expiry = typeof payload.exp === "number" ? payload.exp : Number.NaN;
  const notBefore = typeof payload.nbf === "number" ? payload.nbf : now;
  if (!Number.isFinite(expiry) || expiry + clockSkewInSeconds < now || notBefore - clockSkewInSeconds > now) {
    throw new EntraError(401, "invalid_client", 700024, "Client assertion is not within its valid time range.");
  }
  const certificate = signingCertificate(parsed.header, principal);
  const registered = principal.certificates.some((entry) => entry.thumbprint === createHash("sha1").update(certificate.raw).digest("hex").toUpperCase());
  const problem = options.credentials.authority.check(certificate);
  const thumbprint = thumbprintOf(certificate, "sha256");
  if (problem === "expired" || problem === "notYetValid") {
    throw new EntraError(
      401,
      "invalid_client",
      700027,
      `Client assertion failed signature validation. [Reason - The key used is expired., Thumbprint of key used by client: '${thumbprint}']`,
    );
  }
  if (problem !== undefined || !registered) {
    const reason = problem === "notIssuedBySandbox" ? "The certificate chain is not trusted." : "The key was not found.";
    throw new EntraError(
      401,
      "invalid_client",
      700027,
      `The certificate with identifier used to sign the client assertion is not registered on application. [Reason - ${reason}, Thumbprint of key used by client: '${thumbprint}']`,
    );
  }
  checkSignature(parsed, certificate);
}

function discoveryDocument(host: string, tenant: string): Record<string, unknown> {
  return {
    token_endpoint: `${host}/${tenant}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
    jwks_uri: `${host}/${tenant}/discovery/v2.0/keys`,
    response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
    subject_types_supported: ["pairwise"],
    id_token_signing_alg_values_supported: ["RS256"],
    issuer: `${host}/${tenant}/v2.0`,
    authorization_endpoint: `${host}/${tenant}/oauth2/v2.0/authorize`,
    device_authorization_endpoint: `${host}/${tenant}/oauth2/v2.0/devicecode`,
    end_session_endpoint: `${host}/${tenant}/oauth2/v2.0/logout`,
    tenant_region_scope: "NA",
    cloud_instance_name: "sandbox.invalid",
  };
}

async function handle(options: EntraServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const statistics = options.statistics.entra;
  const host = options.credentials.entraAuthorityHost;
  statistics.requests += 1;
  const reply = (statusCode: number, body: unknown, headers: Record<string, string> = {}): void => {
    increment(statistics.responsesByStatus, String(statusCode));
    sendJson(response, statusCode, body, { "cache-control": "no-store, no-cache", pragma: "no-cache", ...headers });
  };
  const refuse = (failure: EntraError, headers: Record<string, string> = {}): void => {
    increment(statistics.errorsByCode, String(failure.code));
    reply(failure.statusCode, entraErrorBody(host, failure), headers);
  };
  const url = new URL(request.url ?? "/", host);
  const segments = url.pathname.split("/").filter((segment) => segment !== "");
  const tenant = decodeURIComponent(segments[0] ?? "");
  const rest = segments.slice(1).join("/");
  const isDiscovery = rest === "v2.0/.well-known/openid-configuration" || rest === ".well-known/openid-configuration";
  const isToken = rest === "oauth2/v2.0/token";
  const form = isToken && request.method === "POST" ? new URLSearchParams((await readBody(request)).toString("utf8")) : new URLSearchParams();
  const clientId = form.get("client_id") ?? "";
  if (isToken) {
    increment(statistics.tokenRequestsByTenant, tenant.toLowerCase());
    increment(statistics.tokenRequestsByClient, `${tenant}/${clientId}`.toLowerCase());
  }
  const rule = await applyFaults(
    options.faults,
    { target: "entra", method: request.method ?? "GET", path: url.pathname, tenantId: tenant, ...(isToken ? { clientId } : {}) },
    request,
    statistics.responsesByStatus,
  );
  if (rule === "reset") {
    return;
  }
  if (rule !== undefined) {
    const statusCode = rule.kind === "throttle" ? 429 : rule.kind === "unavailable" ? 503 : (rule.statusCode ?? 500);
    const retryAfter = rule.retryAfterSeconds ?? (rule.kind === "throttle" ? 1 : undefined);
    refuse(
      new EntraError(
        statusCode,
        rule.errorCode ?? (statusCode >= 500 ? "temporarily_unavailable" : "invalid_request"),
        90033,
        rule.message ?? `Sandbox fault '${rule.kind}' (rule ${rule.id}).`,
      ),
      retryAfter === undefined ? {} : { "retry-after": String(retryAfter) },
    );
    return;
  }
  if (!isDiscovery && !isToken) {
    reply(404, { error: "not_found", error_description: `no route ${request.method} ${url.pathname}` });
    return;
  }
  if (!options.credentials.directory.hasTenant(tenant)) {
    refuse(
      new EntraError(
        400,
        isDiscovery ? "invalid_tenant" : "invalid_request",
        90002,
        `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
      ),
    );
    return;
  }
  if (isDiscovery) {
    statistics.discoveryRequests += 1;
    reply(200, discoveryDocument(host, tenant));
    return;
  }
  if (request.method !== "POST") {
    refuse(new EntraError(405, "invalid_request", 900561, "The endpoint only accepts POST requests."));
    return;
  }
  try {
    if (form.get("grant_type") !== "client_credentials") {
      throw new EntraError(400, "unsupported_grant_type", 70003, `The app requested an unsupported grant type '${form.get("grant_type") ?? ""}'.`);
    }
    const principal = options.credentials.directory.get(tenant, clientId);
    if (principal === undefined) {
      throw new EntraError(
        400,
        "unauthorized_client",
        700016,
        `Application with identifier '${clientId}' was not found in the directory '${tenant}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      );
    }
    const scopes = (form.get("scope") ?? "").split(" ").filter((scope) => scope !== "");
    const resource = scopes.length === 1 && scopes[0]?.endsWith("/.default") ? scopes[0].slice(0, -"/.default".length) : undefined;
    if (resource === undefined || resource === "") {
      throw new EntraError(
        400,
        "invalid_scope",
        1002012,
        `The provided value for scope ${scopes.join(" ")} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
      );
    }
    const assertion = form.get("client_assertion");
    if (form.get("client_assertion_type") !== jwtBearerAssertionType || assertion === null || assertion === "") {
      throw new EntraError(
        401,
        "invalid_client",
        7000216,
        "'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type.",
      );
    }
    const parsed = parseAssertion(assertion);
    increment(statistics.assertionAlgorithms, `${String(parsed.header.alg)}${parsed.header.x5c === undefined ? "" : "+x5c"}`);
    verifyAssertion(options, parsed, principal, tenant);
    const issued = options.tokens.issue(resource, undefined, {
      tenantId: principal.tenantId,
      clientId: principal.clientId,
      objectId: principal.objectId,
      kind: principal.kind,
    });
    statistics.tokensIssued += 1;
    increment(statistics.tokensIssuedByClient, `${principal.tenantId}/${principal.clientId}`.toLowerCase());
    const expiresIn = Math.max(1, Math.floor((issued.expiresOnInMs - Date.now()) / 1000));
    reply(200, { token_type: "Bearer", expires_in: expiresIn, ext_expires_in: expiresIn, access_token: issued.token });
  } catch (error) {
    if (error instanceof EntraError) {
      refuse(error);
      return;
    }
    throw error;
  }
}

/**
 * Starts the sandbox Entra over HTTPS on 127.0.0.1: per tenant, the OpenID discovery document
 * (`GET /{tenant}/v2.0/.well-known/openid-configuration`) and the client credentials token endpoint
 * (`POST /{tenant}/oauth2/v2.0/token` with a certificate-signed client assertion). Tokens come
 * from the shared {@link TokenRegistry} and record the principal. See docs/sandbox.md.
 *
 * @param options - The TLS certificate and the shared sandbox state.
 * @returns The running server and its authority host.
 */
export async function startEntraServer(options: EntraServerOptions): Promise<EntraServer> {
  const server = createServer({ key: options.certificate.privateKeyPem, cert: options.certificate.certificatePem, keepAlive: true }, (request, response) => {
    handle(options, request, response).catch(() => {
      increment(options.statistics.entra.responsesByStatus, "500");
      sendJson(response, 500, { error: "server_error", error_description: "AADSTS90100: The sandbox Entra failed to handle the request." });
    });
  });
  const listening = await listenOnLoopback(server);
  const authorityHost = `https://${loopbackHost}:${listening.port}`;
  options.credentials.entraAuthorityHost = authorityHost;
  return { ...listening, authorityHost };
}
