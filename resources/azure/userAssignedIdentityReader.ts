/**
 * Reads user-assigned managed identities from Azure Resource Manager with @azure/arm-msi.
 * The clients come from `clientFor` (provider/azureAdapters.ts), which requires the SDK at the
 * first lookup (docs/design.md, "Serialization"); this module only uses its types.
 */
import { goToLower } from "../core/goStrings";
import type { ManagedServiceIdentityClient, UserAssignedIdentitiesGetOptionalParams } from "@azure/arm-msi";
import type { ParsedResourceId } from "../core/azureResourceId";
import { describeType } from "../core/azureResourceId";

/** The identity values this hook records. */
export interface UserAssignedIdentityValues {
  readonly clientId: string | null;
  readonly principalId: string | null;
}

/** The narrow interface the sync pass uses. */
export interface UserAssignedIdentityReader {
  /**
   * GETs one identity. Resolves `undefined` when ARM answered 200 without `properties`.
   * @throws the SDK's RestError (code, statusCode), a {@link MalformedAnswerError} for a 200 whose
   * values are not strings, or an AbortError when `abortSignal` fires.
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
      let answer = { kind: "noProperties" } as IdentityAnswer;
      await client.userAssignedIdentities.get(asUpstreamAsks(resourceId.resourceGroupName), asUpstreamAsks(resourceId.name), {
        ...operationOptions,
        abortSignal: options.abortSignal,
        onResponse: (response) => {
          // The SDK flattens `properties` and keeps values of any type: the raw text is what ARM said.
          answer = readIdentityAnswer(response.bodyAsText);
        },
      });
      if (answer.kind === "malformed") throw new MalformedAnswerError(answer.problem);
      return answer.kind === "noProperties" ? undefined : answer.values;
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

/** What a 200 answer to an identity GET says, read from its raw text. */
export type IdentityAnswer =
  | { readonly kind: "values"; readonly values: { readonly clientId: string; readonly principalId: string } }
  | { readonly kind: "noProperties" }
  | { readonly kind: "malformed"; readonly problem: string };

/**
 * Reads the raw text of a 200 answer to an identity GET. `noProperties` when it is not JSON with an
 * object `properties`. The fields of `properties` that upstream's SDK decodes as strings (clientId,
 * principalId, tenantId, isolationScope) must be strings or null where present, as Go's decoder
 * requires; clientId and principalId must be strings: an identity that exists has both, so an
 * answer without one says nothing definitive about it (`malformed`, naming the field).
 */
export function readIdentityAnswer(bodyAsText: string | null | undefined): IdentityAnswer {
  let body: unknown;
  try {
    body = typeof bodyAsText === "string" ? JSON.parse(bodyAsText) : undefined;
  } catch {
    body = undefined;
  }
  const properties = (body as { properties?: unknown } | null | undefined)?.properties;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) {
    return { kind: "noProperties" };
  }
  const fields = properties as Record<string, unknown>;
  for (const name of ["clientId", "principalId", "tenantId", "isolationScope"]) {
    const value = fields[name];
    const required = name === "clientId" || name === "principalId";
    if (typeof value === "string" || (!required && (value === undefined || value === null))) continue;
    const found = value === undefined ? "missing" : describeType(value);
    return { kind: "malformed", problem: `properties.${name} is ${found}, expected a string` };
  }
  return { kind: "values", values: { clientId: fields.clientId as string, principalId: fields.principalId as string } };
}

/** A 200 answer whose values are not what an identity has (readIdentityAnswer): a failure of that identity, not an answer about it. */
export class MalformedAnswerError extends Error {
  readonly code = "MalformedAnswer";
  readonly statusCode = 200;
}
MalformedAnswerError.prototype.name = "MalformedAnswerError";
