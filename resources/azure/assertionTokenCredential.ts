/**
 * A service managed identity's token credential: its certificate (as the Managed Identities data
 * plane handed it over) signs a client assertion, and one POST to its tenant's token endpoint at
 * the answer's authority asks for the token, over a pipeline every SMI of the process shares.
 *
 * Why not `@azure/identity`'s ClientCertificateCredential, as for the first party: each instance
 * holds an MSAL application, an HTTP pipeline and a token cache of its own, and asks for the
 * authority's metadata before its first token; at one SMI per cluster that is a client built, used
 * once and dropped per cluster, and the provider host's peak memory follows them. Here an SMI costs
 * its parsed key and chain, and one request per token.
 *
 * What is sent is what upstream's client sends (azidentity's ClientCertificateCredential with the
 * chain, MSAL for Go, for an ARM bearer policy that enables continuous access evaluation): the form
 * `claims` (client capability CP1, merged with a challenge's claims), `client_assertion`
 * (clientAssertion.ts), `client_assertion_type`, `client_id`, `client_info=1`,
 * `grant_type=client_credentials` and `scope` (the scope, then `openid offline_access profile`),
 * keys sorted as Go's `url.Values.Encode` writes them. MSAL's metadata request is not made: the
 * token endpoint of an Entra ID authority is `<authority>/<tenant>/oauth2/v2.0/token`.
 *
 * Failures are named as `@azure/identity` names them (errors.ts classifies by name): Entra ID's
 * refusal or an unreachable endpoint is an `AuthenticationError` carrying Entra's status and its
 * first line (AADSTS code and text), never the assertion or a token; an abort passes through.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import type { Pipeline, PipelineResponse } from "@azure/core-rest-pipeline";
import type { Agent } from "node:https";
import { redactSecrets, shortMessage } from "../core/retrievalError";
import { isJsonObject } from "../core/json";
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { signClientAssertion } from "./clientAssertion";

const jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/** The client capability azidentity declares when the caller enables continuous access evaluation (ARM's does). */
const clientCapabilities = { access_token: { xms_cc: { values: ["CP1"] } } };
/** MSAL adds these to every scope list it sends. */
const defaultScopes = ["openid", "offline_access", "profile"];
/** Without a `refresh_in`, a token lasting longer than this is renewed at half its life (as MSAL does). */
const halfLifeRefreshAboveInSeconds = 2 * 60 * 60;

/** One pipeline for every SMI's token requests: retries as azidentity's, the process's agent. */
export interface TokenRequestPipeline {
  readonly core: typeof import("@azure/core-rest-pipeline");
  readonly pipeline: Pipeline;
  readonly httpClient: import("@azure/core-rest-pipeline").HttpClient;
}

/** Builds the shared pipeline; @azure/core-rest-pipeline is already loaded by the data plane client. */
export function createTokenRequestPipeline(options: { readonly agent?: Agent; readonly userAgentPrefix: string }): TokenRequestPipeline {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the first SMI, as the data plane client loads it
  const core = require("@azure/core-rest-pipeline") as typeof import("@azure/core-rest-pipeline");
  const pipeline = core.createPipelineFromOptions({
    ...(options.agent === undefined ? {} : { agent: options.agent }),
    userAgentOptions: { userAgentPrefix: options.userAgentPrefix },
  });
  return { core, pipeline, httpClient: core.createDefaultHttpClient() };
}

/** The token endpoint of `tenantId` at an Entra ID authority host. */
export function tokenEndpointOf(authorityHost: string, tenantId: string): string {
  return `${authorityHost.replace(/\/+$/, "")}/${encodeURIComponent(tenantId)}/oauth2/v2.0/token`;
}

/** The form of one token request, keys sorted as Go's `url.Values.Encode`. */
export function tokenRequestForm(fields: {
  readonly clientId: string;
  readonly assertion: string;
  readonly scopes: readonly string[];
  /** A challenge's claims (JSON), merged with the client capability. */
  readonly claims?: string;
}): string {
  const form = new URLSearchParams();
  form.set("claims", JSON.stringify(mergeClaims(fields.claims)));
  form.set("client_assertion", fields.assertion);
  form.set("client_assertion_type", jwtBearerAssertionType);
  form.set("client_id", fields.clientId);
  form.set("client_info", "1");
  form.set("grant_type", "client_credentials");
  const scopes = fields.scopes.map((scope) => scope.trim()).filter((scope) => scope.length > 0 && !defaultScopes.includes(scope));
  form.set("scope", [...scopes, ...defaultScopes].join(" "));
  return form.toString();
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

/** Where an SMI credential authenticates. */
export interface AssertionCredentialOptions {
  /** The answer's `authentication_endpoint`. */
  readonly authorityHost: string;
  readonly pipeline: TokenRequestPipeline;
  readonly now?: () => number;
}

/**
 * A token credential for `clientId` in `tenantId`, signing with `material`. Every call asks Entra
 * ID (sharedTokenCredential.ts caches); a `tenantId` in the call other than its own is refused, as
 * a credential without additionally allowed tenants does.
 */
export function assertionTokenCredential(
  tenantId: string,
  clientId: string,
  material: CertificateCredentialMaterial,
  options: AssertionCredentialOptions,
): TokenCredential {
  const now = options.now ?? Date.now;
  const tokenEndpoint = tokenEndpointOf(options.authorityHost, tenantId);
  return {
    async getToken(scopes: string | string[], getTokenOptions?: GetTokenOptions): Promise<AccessToken> {
      if (getTokenOptions?.tenantId !== undefined && getTokenOptions.tenantId !== tenantId) {
        throw authenticationError(`the service managed identity ${clientId} of tenant ${tenantId} cannot get a token in tenant ${getTokenOptions.tenantId}`);
      }
      const { core, pipeline, httpClient } = options.pipeline;
      const assertion = signClientAssertion({ clientId, tokenEndpoint, material, nowInSeconds: Math.floor(now() / 1000) });
      const request = core.createPipelineRequest({
        url: tokenEndpoint,
        method: "POST",
        headers: core.createHttpHeaders({
          "content-type": "application/x-www-form-urlencoded; charset=utf-8",
          accept: "application/json",
          "return-client-request-id": "false",
        }),
        body: tokenRequestForm({
          clientId,
          assertion,
          scopes: Array.isArray(scopes) ? scopes : [scopes],
          ...(getTokenOptions?.claims === undefined ? {} : { claims: getTokenOptions.claims }),
        }),
        ...(getTokenOptions?.abortSignal === undefined ? {} : { abortSignal: getTokenOptions.abortSignal }),
      });
      const requestedAt = now();
      let response: PipelineResponse;
      try {
        response = await pipeline.sendRequest(httpClient, request);
      } catch (error) {
        if ((error as { name?: unknown }).name === "AbortError") throw error;
        const like = error as { code?: unknown; message?: unknown };
        const reason = typeof like.code === "string" ? like.code : shortMessage(typeof like.message === "string" ? like.message : "error");
        throw authenticationError(`Entra ID at ${new URL(tokenEndpoint).host} could not be reached (${reason})`, undefined, error);
      }
      return readTokenResponse(response, requestedAt);
    },
  };
}

/** The access token of a 200 answer; an {@link authenticationError} for anything else. */
function readTokenResponse(response: PipelineResponse, requestedAt: number): AccessToken {
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(response.bodyAsText ?? "") as unknown;
    if (isJsonObject(parsed)) body = parsed;
  } catch {
    // not JSON: reported below by status
  }
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

/** An error named as `@azure/identity` names a refused or failed token request; never carries a secret. */
function authenticationError(message: string, statusCode?: number, cause?: unknown): Error {
  const error = new Error(redactSecrets(message));
  Object.defineProperty(error, "name", { value: "AuthenticationError", writable: true, configurable: true, enumerable: false });
  if (statusCode !== undefined) Object.defineProperty(error, "statusCode", { value: statusCode, enumerable: true });
  if (cause !== undefined) Object.defineProperty(error, "cause", { value: cause, enumerable: false });
  return error;
}
