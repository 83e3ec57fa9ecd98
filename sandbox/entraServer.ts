import { constants, createHash, randomUUID, verify as verifySignature, X509Certificate } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { SandboxCertificate } from "./certificate";
import type { SandboxPrincipal } from "./entraDirectory";
import type { FaultInjector } from "./faultInjector";
import { applyFaults, listenOnLoopback, type ListeningServer, loopbackHost, readBody, sendJson } from "./httpUtilities";
import { type RecordedAssertionHeader, type RecordedTokenForm, type RequestRecorder, recordedExchange } from "./requestRecorder";
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
  /** Where token requests are recorded (secrets left out), when a recording runs. */
  recorder?: RequestRecorder;
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

/**
 * Whether a thumbprint header names the certificate. Entra reads `x5t` and `x5t#S256` in base64url
 * (RFC 7515) and in standard base64 with padding, which MSAL for Go and MSAL.NET send.
 */
function thumbprintMatches(header: string | undefined, certificate: X509Certificate, algorithm: "sha1" | "sha256"): boolean {
  if (header === undefined || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(header)) return false;
  const standard = header.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  const expected = createHash(algorithm).update(certificate.raw).digest("base64").replace(/=+$/, "");
  return standard === expected;
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
    if ((x5tS256 !== undefined && !thumbprintMatches(x5tS256, leaf, "sha256")) || (x5t !== undefined && !thumbprintMatches(x5t, leaf, "sha1"))) {
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
    if (thumbprintMatches(x5tS256, certificate, "sha256") || thumbprintMatches(x5t, certificate, "sha1")) {
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

/** The OpenID Connect scopes Entra ignores in a client credentials request (MSAL adds them to every request). */
const openIdScopes = new Set(["openid", "offline_access", "profile", "email"]);

/**
 * The resource of a client credentials request, as Entra reads its `scope`: the OpenID Connect
 * scopes are ignored, and exactly one `<resource>/.default` must remain.
 *
 * @param scope - The form's `scope`, when sent.
 * @returns The resource (the scope without `/.default`).
 * @throws EntraError with Entra's code for a missing scope, for several resources, or for a scope without `/.default`.
 */
function clientCredentialResource(scope: string | null): string {
  const scopes = (scope ?? "").split(" ").filter((entry) => entry !== "");
  if (scopes.length === 0) {
    throw new EntraError(400, "invalid_request", 900144, "The request body must contain the following parameter: 'scope'.");
  }
  const resourceScopes = scopes.filter((entry) => !openIdScopes.has(entry.toLowerCase()));
  if (resourceScopes.length > 1) {
    throw new EntraError(
      400,
      "invalid_scope",
      70011,
      `The provided request must include a 'scope' input parameter. The provided value for the input parameter 'scope' is not valid. The scope ${scopes.join(" ")} is not valid.`,
    );
  }
  const [resourceScope] = resourceScopes;
  const resource = resourceScope?.endsWith("/.default") ? resourceScope.slice(0, -"/.default".length) : "";
  if (resource === "") {
    throw new EntraError(
      400,
      "invalid_scope",
      1002012,
      `The provided value for scope ${scopes.join(" ")} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
    );
  }
  return resource;
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

/** The form fields a recording may keep (none of them a secret). */
const recordedFormFields = ["grant_type", "scope", "client_id", "client_assertion_type", "claims", "client_info"] as const;

/** What a recording keeps of a token request: the plain fields, the names of all, and the assertion's header. */
function recordedForm(form: URLSearchParams): RecordedTokenForm {
  const recorded: RecordedTokenForm = { fields: [...new Set(form.keys())].sort() };
  for (const field of recordedFormFields) {
    const value = form.get(field);
    if (value !== null) recorded[field] = value;
  }
  const assertion = form.get("client_assertion");
  if (assertion !== null) {
    try {
      const header = base64UrlJson(assertion.split(".")[0] ?? "");
      const assertionHeader: RecordedAssertionHeader = { fields: Object.keys(header).sort() };
      for (const field of ["alg", "typ", "x5t", "x5t#S256"] as const) {
        if (typeof header[field] === "string") assertionHeader[field] = header[field];
      }
      if (header.x5c !== undefined) assertionHeader.x5cCertificates = Array.isArray(header.x5c) ? header.x5c.length : 1;
      assertionHeader.claimNames = Object.keys(base64UrlJson(assertion.split(".")[1] ?? "")).sort();
      recorded.assertionHeader = assertionHeader;
    } catch {
      // not a readable JWT: the recording keeps the field names only
    }
  }
  return recorded;
}

async function handle(options: EntraServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const statistics = options.statistics.entra;
  const host = options.credentials.entraAuthorityHost;
  statistics.requests += 1;
  let form = new URLSearchParams();
  const reply = (statusCode: number, body: unknown, headers: Record<string, string> = {}): void => {
    increment(statistics.responsesByStatus, String(statusCode));
    sendJson(response, statusCode, body, { "cache-control": "no-store, no-cache", pragma: "no-cache", ...headers });
    if (options.recorder?.active === true) {
      const error = (body as { error?: unknown } | undefined)?.error;
      options.recorder.record({
        ...recordedExchange("entra", request, statusCode, error),
        ...(request.method === "POST" ? { form: recordedForm(form) } : {}),
      });
    }
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
  if (isToken && request.method === "POST") form = new URLSearchParams((await readBody(request)).toString("utf8"));
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
    const resource = clientCredentialResource(form.get("scope"));
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
