/**
 * Reads user-assigned managed identities from Azure Resource Manager with @azure/arm-msi.
 * The SDK is required inside the function (see docs/design.md, "Serialization"), never imported
 * at module level.
 */
import type { ManagedServiceIdentityClient } from "@azure/arm-msi";
import type { ParsedResourceId } from "../azureResourceId";

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
  getUserAssignedIdentity(
    resourceId: ParsedResourceId,
    options: { readonly abortSignal: AbortSignal },
  ): Promise<UserAssignedIdentityValues | undefined>;
}

/** Builds a reader over per-subscription arm-msi clients supplied by `clientFor`. */
export function createUserAssignedIdentityReader(
  clientFor: (subscriptionId: string) => ManagedServiceIdentityClient,
): UserAssignedIdentityReader {
  return {
    async getUserAssignedIdentity(resourceId, options) {
      // The identity's own subscription, not the cluster's (upstream gap §5.7).
      const client = clientFor(resourceId.subscriptionId.toLowerCase());
      let hasProperties = true;
      const identity = await client.userAssignedIdentities.get(resourceId.resourceGroupName, resourceId.name, {
        abortSignal: options.abortSignal,
        onResponse: (response) => {
          const body = response.parsedBody as { properties?: unknown } | undefined;
          hasProperties = typeof body?.properties === "object" && body.properties !== null;
        },
      });
      if (!hasProperties) {
        return undefined;
      }
      return { clientId: identity.clientId ?? null, principalId: identity.principalId ?? null };
    },
  };
}
