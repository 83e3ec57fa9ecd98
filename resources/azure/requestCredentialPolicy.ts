/**
 * One arm-msi pipeline for every cluster's service managed identity: the credential travels with
 * each request instead of being built into a pipeline per SMI.
 *
 * A request names its credential in its tracing context ({@link requestCredentialOptions}): the
 * SDK's per-operation key-value store, which core-client hands to the operation's pipeline request
 * as it is (the tracing policy starts its span from it without replacing it). The unit tests and
 * every cluster-mode integration test read through it, so an SDK that stopped passing it on would
 * fail them, loudly: a request without a credential is refused, never sent unauthenticated.
 * The policy here stands where the SDK's bearer token policy stands, under its name (so arm-msi does
 * not add one of its own to the shared pipeline), and does what it does: the credential's token on
 * each request (the credential caches it: sharedTokenCredential.ts), and after a 401 that carries a
 * continuous access evaluation challenge (`insufficient_claims` with `claims`), one new token with
 * those claims and one retry, as upstream's ARM bearer policy does.
 */
import type { TokenCredential } from "@azure/identity";
import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import type { UserAssignedIdentitiesGetOptionalParams as OperationOptions } from "@azure/arm-msi";
import { activeContextValue } from "../logging/spans";

const credentialKey = Symbol("aro-hcp-identity-status request credential");

/**
 * A tracing context that holds values, immutable as the SDK's contract asks. A key it does not
 * hold reads from the context active where the SDK asks (while tracing is on: the span of the
 * identity read, so the SDK's own spans nest beneath it; logging/spans.ts).
 */
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
  try {
    JSON.parse(decoded);
  } catch {
    return undefined;
  }
  return decoded;
}

/** The policy; `bearerTokenAuthenticationPolicyName` is the SDK's name for the role. */
export function requestCredentialPolicy(scope: string, bearerTokenAuthenticationPolicyName: string): PipelinePolicy {
  const authorize = async (request: PipelineRequest, credential: TokenCredential, claims?: string): Promise<void> => {
    const token = await credential.getToken(scope, {
      abortSignal: request.abortSignal,
      enableCae: true,
      ...(claims === undefined ? {} : { claims }),
    });
    if (token === null) throw Object.assign(new Error("the credential returned no token"), { name: "AuthenticationError" });
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
