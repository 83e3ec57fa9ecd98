/**
 * Reads user-assigned managed identities from Azure Resource Manager with @azure/arm-msi.
 * The clients come from `clientFor` (provider/azureAdapters.ts), which requires the SDK at the
 * first lookup (docs/design.md, "Serialization"); this module only uses its types.
 */
import { goToLower } from "../core/goStrings";
import type { ManagedServiceIdentityClient, UserAssignedIdentitiesGetOptionalParams } from "@azure/arm-msi";
import type { ParsedResourceId } from "../core/azureResourceId";

/** The identity values this hook records. */
export interface UserAssignedIdentityValues {
  readonly clientId: string | null;
  readonly principalId: string | null;
}

/** The narrow interface the sync pass uses. */
export interface UserAssignedIdentityReader {
  /**
   * GETs one identity. Resolves `undefined` when ARM answered 200 without `properties`.
   * @throws the SDK's RestError (code, statusCode) or an AbortError when `abortSignal` fires.
   */
  getUserAssignedIdentity(resourceId: ParsedResourceId, options: { readonly abortSignal: AbortSignal }): Promise<UserAssignedIdentityValues | undefined>;
  /**
   * Gets (or finds cached) the ARM token the next GET will send, so that the lookup can tell time
   * spent waiting for the credential from time spent on the identity: a token endpoint that hangs
   * is a failure of the credential, never of one identity (lookUpIdentity.ts). Optional: a reader
   * without it (a test fake) is looked up without that split.
   */
  acquireToken?(options: { readonly abortSignal: AbortSignal }): Promise<unknown>;
}

/**
 * Builds a reader over per-subscription arm-msi clients supplied by `clientFor`. `operationOptions`
 * go with every GET (a cluster's credential on the shared pipeline: requestCredentialPolicy.ts).
 */
export function createUserAssignedIdentityReader(
  clientFor: (subscriptionId: string) => ManagedServiceIdentityClient,
  acquireToken?: (options: { readonly abortSignal: AbortSignal }) => Promise<unknown>,
  operationOptions: Pick<UserAssignedIdentitiesGetOptionalParams, "tracingOptions"> = {},
): UserAssignedIdentityReader {
  return {
    ...(acquireToken === undefined ? {} : { acquireToken }),
    async getUserAssignedIdentity(resourceId, options) {
      // The identity's own subscription, not the cluster's (upstream gap §5.7).
      const client = clientFor(goToLower(resourceId.subscriptionId));
      let hasProperties = true;
      const identity = await client.userAssignedIdentities.get(asUpstreamAsks(resourceId.resourceGroupName), asUpstreamAsks(resourceId.name), {
        ...operationOptions,
        abortSignal: options.abortSignal,
        onResponse: (response) => {
          // parsedBody is already flattened by the SDK; the raw text says whether `properties` came.
          hasProperties = responseHasProperties(response.bodyAsText);
        },
      });
      if (!hasProperties) {
        return undefined;
      }
      return { clientId: identity.clientId ?? null, principalId: identity.principalId ?? null };
    },
  };
}

/**
 * A path segment as upstream asks ARM for it: lowercased (upstream reads each identity by its map
 * key, the lowercased ID, parsed again), so the request is the one upstream's client sends. Only
 * for ASCII: ARM compares names case-insensitively by upper-casing, under which a Go-lowercased
 * non-ASCII letter need not find its original (`İ` lowercases to `i`, which upper-cases to `I`), and
 * such a name is asked for as declared rather than risk a 404 that upstream would take for a
 * deleted identity.
 */
export function asUpstreamAsks(segment: string): string {
  return [...segment].every((character) => character.charCodeAt(0) < 0x80) ? segment.toLowerCase() : segment;
}

/** True when an ARM response body is JSON with an object `properties`. */
export function responseHasProperties(bodyAsText: string | null | undefined): boolean {
  if (typeof bodyAsText !== "string") {
    return false;
  }
  try {
    const body = JSON.parse(bodyAsText) as { properties?: unknown };
    return typeof body.properties === "object" && body.properties !== null && !Array.isArray(body.properties);
  } catch {
    return false;
  }
}
