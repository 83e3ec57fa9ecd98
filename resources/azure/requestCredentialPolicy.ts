/**
 * One arm-msi pipeline for every cluster's service managed identity: each request carries its
 * credential in its tracing context (the SDK's per-operation store, passed to the pipeline request
 * as it is); a request without one is refused. The policy takes the bearer token policy's place and
 * name, and does what it does: a token per request and, after a 401 continuous access evaluation
 * challenge (`insufficient_claims`), one token with those claims and one retry, as upstream's does.
 */
import type { TokenCredential } from "@azure/identity";
import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import type { UserAssignedIdentitiesGetOptionalParams as OperationOptions } from "@azure/arm-msi";
import { activeContextValue } from "../logging/spans";
import { parsedJsonText } from "../core/json";
import { credentialError } from "./credentials";

const credentialKey = Symbol("aro-hcp-identity-status request credential");

/** An immutable tracing context; other keys read from the active context, so the SDK's spans nest under the identity read's. */
function valueContext(values: ReadonlyMap<symbol, unknown>): NonNullable<NonNullable<OperationOptions["tracingOptions"]>["tracingContext"]> {
  return {
    getValue: (key) => (values.has(key) ? values.get(key) : activeContextValue(key)),
    setValue: (key, value) => valueContext(new Map([...values, [key, value]])),
    deleteValue: (key) => {
      const rest = new Map(values);
      rest.delete(key);
      return valueContext(rest);
    },
  };
}

/** Operation options that make a request of the shared pipeline authenticate with `credential`. */
export function requestCredentialOptions(credential: TokenCredential): Pick<OperationOptions, "tracingOptions"> {
  return { tracingOptions: { tracingContext: valueContext(new Map([[credentialKey, credential]])) } };
}

/** The challenge's claims (decoded JSON) when a 401 asks for a token with more claims. */
export function continuousAccessChallengeClaims(wwwAuthenticate: string | undefined): string | undefined {
  if (wwwAuthenticate === undefined || !/^\s*Bearer\b/i.test(wwwAuthenticate)) return undefined;
  const parameters = new Map<string, string>();
  for (const match of wwwAuthenticate.matchAll(/([A-Za-z_]+)="([^"]*)"/g)) parameters.set((match[1] ?? "").toLowerCase(), match[2] ?? "");
  const claims = parameters.get("claims");
  if (parameters.get("error") !== "insufficient_claims" || claims === undefined || claims.length === 0) return undefined;
  const decoded = Buffer.from(claims, "base64").toString("utf8");
  return parsedJsonText(decoded) === undefined ? undefined : decoded;
}

/** The policy; `bearerTokenAuthenticationPolicyName` is the SDK's name for the role. */
export function requestCredentialPolicy(scope: string, bearerTokenAuthenticationPolicyName: string): PipelinePolicy {
  const authorize = async (request: PipelineRequest, credential: TokenCredential, claims?: string): Promise<void> => {
    const token = await credential.getToken(scope, {
      abortSignal: request.abortSignal,
      enableCae: true,
      ...(claims === undefined ? {} : { claims }),
    });
    if (token === null) throw credentialError("AuthenticationError", "the credential returned no token");
    request.headers.set("authorization", `Bearer ${token.token}`);
  };
  return {
    name: bearerTokenAuthenticationPolicyName,
    async sendRequest(request: PipelineRequest, next: SendRequest): Promise<PipelineResponse> {
      const credential = request.tracingOptions?.tracingContext?.getValue(credentialKey) as TokenCredential | undefined;
      if (credential === undefined) {
        throw new Error("a request of the service managed identities' ARM pipeline carries no credential (requestCredentialOptions)");
      }
      await authorize(request, credential);
      const response = await next(request);
      if (response.status !== 401) return response;
      const claims = continuousAccessChallengeClaims(response.headers.get("www-authenticate"));
      if (claims === undefined) return response;
      await authorize(request, credential, claims);
      return next(request);
    },
  };
}
