/**
 * A service managed identity's (SMI's) credential as upstream's client uses it (docs/operations.md,
 * "Credential modes"): its token request as azidentity with MSAL for Go sends it, on a pipeline every
 * SMI shares (an MSAL application per SMI would weigh on the host), and the policy by which each request
 * of the one arm-msi pipeline carries its SMI's credential. Failures are named as `@azure/identity`
 * names them, without the assertion or a token.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import type { UserAssignedIdentitiesGetOptionalParams as OperationOptions } from "@azure/arm-msi";
import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { constants, randomUUID, sign } from "node:crypto";
import { redactSecrets } from "../core/retrievalError";
import { isJsonObject, parsedJsonText } from "../core/json";
import { activeContextValue } from "../logging/spans";
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { credentialError, scopeList } from "./credentials";
import type { TokenRequestPipeline } from "./managedIdentitiesDataPlane";
import { sendPipelineRequest } from "./managedIdentitiesDataPlane";

/** The client capability azidentity declares when the caller enables continuous access evaluation (ARM's does). */
const clientCapabilities = { access_token: { xms_cc: { values: ["CP1"] } } };
/** MSAL adds these to every scope list it sends. */
const defaultScopes = ["openid", "offline_access", "profile"];
/** Without a `refresh_in`, a token lasting longer than this is renewed at half its life (as MSAL does). */
const halfLifeRefreshAboveInSeconds = 2 * 60 * 60;
/** How long an assertion is valid, as MSAL for Go signs it. */
const assertionLifetimeInSeconds = 600;

/** The token endpoint of `tenantId` at an Entra ID authority host (no metadata request, unlike MSAL). */
export function tokenEndpointOf(authorityHost: string, tenantId: string): string {
  return `${authorityHost.replace(/\/+$/, "")}/${encodeURIComponent(tenantId)}/oauth2/v2.0/token`;
}

/**
 * The client assertion (RFC 7523) as MSAL for Go writes it: a PS256 JWT with the leaf's `x5t#S256`
 * and the chain (`x5c`), keys sorted as Go's encoding/json writes a map.
 */
export function signClientAssertion(request: {
  readonly clientId: string;
  /** The assertion's audience. */
  readonly tokenEndpoint: string;
  readonly material: Pick<CertificateCredentialMaterial, "privateKey" | "x5c" | "x5tS256">;
  readonly nowInSeconds?: number;
  readonly jwtId?: string;
}): string {
  const now = request.nowInSeconds ?? Math.floor(Date.now() / 1000);
  const header = { alg: "PS256", typ: "JWT", x5c: request.material.x5c, "x5t#S256": request.material.x5tS256 };
  const claims = {
    aud: request.tokenEndpoint,
    exp: now + assertionLifetimeInSeconds,
    iss: request.clientId,
    jti: request.jwtId ?? randomUUID(),
    nbf: now,
    sub: request.clientId,
  };
  const signingInput = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  const signature = sign("sha256", Buffer.from(signingInput), {
    key: request.material.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    // Go's rsa.PSSSaltLengthEqualsHash, as the JWT PS256 profile asks.
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return `${signingInput}.${signature.toString("base64url")}`;
}

/** The form of one token request, keys sorted as Go's `url.Values.Encode`; `claims` is a challenge's (JSON). */
export function tokenRequestForm(fields: {
  readonly clientId: string;
  readonly assertion: string;
  readonly scopes: readonly string[];
  readonly claims?: string;
}): string {
  const scopes = fields.scopes.map((scope) => scope.trim()).filter((scope) => scope.length > 0 && !defaultScopes.includes(scope));
  return new URLSearchParams({
    claims: JSON.stringify(mergeClaims(fields.claims)),
    client_assertion: fields.assertion,
    client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    client_id: fields.clientId,
    client_info: "1",
    grant_type: "client_credentials",
    scope: [...scopes, ...defaultScopes].join(" "),
  }).toString();
}

/** The client capability merged into a challenge's claims without overwriting them (MSAL for Go's merge). */
function mergeClaims(claims: string | undefined): Record<string, unknown> {
  if (claims === undefined || claims.length === 0) return clientCapabilities;
  const challenge = JSON.parse(claims) as Record<string, unknown>;
  const merge = (from: Record<string, unknown>, into: Record<string, unknown>): void => {
    for (const [key, value] of Object.entries(from)) {
      const existing = into[key];
      if (existing === undefined) into[key] = value;
      else if (isJsonObject(existing) && isJsonObject(value)) merge(value, existing);
    }
  };
  merge(clientCapabilities, challenge);
  return challenge;
}

/** `clientId`'s credential in `tenantId` at `authorityHost`: every call asks Entra ID (callers cache); another tenant is refused. */
export function assertionTokenCredential(
  tenantId: string,
  clientId: string,
  material: CertificateCredentialMaterial,
  options: { readonly authorityHost: string; readonly pipeline: TokenRequestPipeline; readonly now?: () => number },
): TokenCredential {
  const now = options.now ?? Date.now;
  const tokenEndpoint = tokenEndpointOf(options.authorityHost, tenantId);
  return {
    async getToken(scopes: string | string[], getTokenOptions?: GetTokenOptions): Promise<AccessToken> {
      if (getTokenOptions?.tenantId !== undefined && getTokenOptions.tenantId !== tenantId) {
        throw authenticationError(`the service managed identity ${clientId} of tenant ${tenantId} cannot get a token in tenant ${getTokenOptions.tenantId}`);
      }
      const assertion = signClientAssertion({ clientId, tokenEndpoint, material, nowInSeconds: Math.floor(now() / 1000) });
      const requestedAt = now();
      const response = await sendPipelineRequest(
        options.pipeline,
        {
          url: tokenEndpoint,
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8", accept: "application/json", "return-client-request-id": "false" },
          body: tokenRequestForm({ clientId, assertion, scopes: scopeList(scopes), claims: getTokenOptions?.claims }),
          abortSignal: getTokenOptions?.abortSignal,
        },
        (reason, cause) => authenticationError(`Entra ID at ${new URL(tokenEndpoint).host} could not be reached (${reason})`, undefined, cause),
      );
      return readTokenResponse(response, requestedAt);
    },
  };
}

/** The access token of a 200 answer; an AuthenticationError with Entra's status and first line for anything else. */
function readTokenResponse(response: PipelineResponse, requestedAt: number): AccessToken {
  const parsed = parsedJsonText(response.bodyAsText ?? "");
  const body: Record<string, unknown> = isJsonObject(parsed) ? parsed : {};
  if (response.status !== 200) {
    const description = typeof body.error_description === "string" ? body.error_description.split(/\r?\n/)[0] : undefined;
    const code = typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
    throw authenticationError(`Entra ID refused the token request (${response.status} ${code}): ${description ?? "no description"}`, response.status);
  }
  const token = body.access_token;
  const expiresIn = Number(body.expires_in);
  if (typeof token !== "string" || token.length === 0 || !Number.isFinite(expiresIn)) {
    throw authenticationError("Entra ID answered 200 without an access token and its lifetime", 200);
  }
  const refreshIn = Number(body.refresh_in);
  const refreshAfterInSeconds = Number.isFinite(refreshIn) && refreshIn > 0 ? refreshIn : expiresIn > halfLifeRefreshAboveInSeconds ? expiresIn / 2 : undefined;
  return {
    token,
    tokenType: "Bearer",
    expiresOnTimestamp: requestedAt + expiresIn * 1000,
    ...(refreshAfterInSeconds === undefined ? {} : { refreshAfterTimestamp: requestedAt + refreshAfterInSeconds * 1000 }),
  };
}

function authenticationError(message: string, statusCode?: number, cause?: unknown): Error {
  return credentialError("AuthenticationError", redactSecrets(message), { statusCode, cause });
}

const credentialKey = Symbol("aro-hcp-identity-status request credential");

/** An immutable tracing context; other keys read from the active context, so the SDK's spans nest under the identity read's. */
function valueContext(values: ReadonlyMap<symbol, unknown>): NonNullable<NonNullable<OperationOptions["tracingOptions"]>["tracingContext"]> {
  return {
    getValue: (key) => (values.has(key) ? values.get(key) : activeContextValue(key)),
    setValue: (key, value) => valueContext(new Map([...values, [key, value]])),
    deleteValue: (key) => valueContext(new Map([...values].filter(([name]) => name !== key))),
  };
}

/** Operation options that make a request of the shared pipeline authenticate with `credential`. */
export function requestCredentialOptions(credential: TokenCredential): Pick<OperationOptions, "tracingOptions"> {
  return { tracingOptions: { tracingContext: valueContext(new Map([[credentialKey, credential]])) } };
}

/** The challenge's claims (decoded JSON) when a 401 asks for a token with more claims. */
export function continuousAccessChallengeClaims(wwwAuthenticate: string | undefined): string | undefined {
  if (wwwAuthenticate === undefined || !/^\s*Bearer\b/i.test(wwwAuthenticate)) return undefined;
  const parameters = new Map([...wwwAuthenticate.matchAll(/([A-Za-z_]+)="([^"]*)"/g)].map(([, name, value]) => [name.toLowerCase(), value]));
  const claims = parameters.get("claims");
  if (parameters.get("error") !== "insufficient_claims" || claims === undefined || claims.length === 0) return undefined;
  const decoded = Buffer.from(claims, "base64").toString("utf8");
  return parsedJsonText(decoded) === undefined ? undefined : decoded;
}

/**
 * The shared arm-msi pipeline's policy, in the SDK's bearer token policy's place and name: a token of
 * each request's own credential and, after a 401 `insufficient_claims` challenge, one token with its
 * claims and one retry.
 */
export function requestCredentialPolicy(scope: string, bearerTokenAuthenticationPolicyName: string): PipelinePolicy {
  const authorize = async (request: PipelineRequest, credential: TokenCredential, claims?: string): Promise<void> => {
    const token = await credential.getToken(scope, { abortSignal: request.abortSignal, enableCae: true, ...(claims === undefined ? {} : { claims }) });
    if (token === null) throw authenticationError("the credential returned no token");
    request.headers.set("authorization", `Bearer ${token.token}`);
  };
  return {
    name: bearerTokenAuthenticationPolicyName,
    async sendRequest(request: PipelineRequest, next: SendRequest): Promise<PipelineResponse> {
      const credential = request.tracingOptions?.tracingContext?.getValue(credentialKey) as TokenCredential | undefined;
      if (credential === undefined)
        throw new Error("a request of the service managed identities' ARM pipeline carries no credential (requestCredentialOptions)");
      await authorize(request, credential);
      const response = await next(request);
      const claims = response.status === 401 ? continuousAccessChallengeClaims(response.headers.get("www-authenticate")) : undefined;
      if (claims === undefined) return response;
      await authorize(request, credential, claims);
      return next(request);
    },
  };
}
