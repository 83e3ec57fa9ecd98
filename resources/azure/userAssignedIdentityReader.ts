/** Reads user-assigned managed identities from ARM with @azure/arm-msi. */
import { goToLower } from "../core/goStrings";
import type { ManagedServiceIdentityClient, UserAssignedIdentitiesGetOptionalParams } from "@azure/arm-msi";
import type { ParsedResourceId } from "../core/azureResourceId";
import { describeType } from "../core/azureResourceId";
import { isJsonObject, parsedJsonText } from "../core/json";

export interface UserAssignedIdentityValues {
  readonly clientId: string | null;
  readonly principalId: string | null;
}

export interface UserAssignedIdentityReader {
  /** GETs one identity; `undefined` for a 200 without `properties`. */
  getUserAssignedIdentity(resourceId: ParsedResourceId, options: { readonly abortSignal: AbortSignal }): Promise<UserAssignedIdentityValues | undefined>;
  /** Gets the ARM token the next GET sends, so that a token endpoint that hangs fails the credential, never one identity. */
  acquireToken?(options: { readonly abortSignal: AbortSignal }): Promise<unknown>;
}

/** A reader over per-subscription arm-msi clients; `operationOptions` go with every GET. */
export function createUserAssignedIdentityReader(
  clientFor: (subscriptionId: string) => ManagedServiceIdentityClient,
  acquireToken?: (options: { readonly abortSignal: AbortSignal }) => Promise<unknown>,
  operationOptions: Pick<UserAssignedIdentitiesGetOptionalParams, "tracingOptions"> = {},
): UserAssignedIdentityReader {
  return {
    ...(acquireToken === undefined ? {} : { acquireToken }),
    async getUserAssignedIdentity(resourceId, options) {
      // The identity's own subscription, which need not be the cluster's.
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
 * A path segment as upstream asks ARM for it: lowercased, as upstream reads each identity by its
 * lowercased map key. Only for ASCII: ARM compares by upper-casing, under which a lowercased
 * non-ASCII letter need not find its original (`İ` → `i` → `I`), and a 404 there would read as a
 * deleted identity; such a name is asked for as declared.
 */
export function asUpstreamAsks(segment: string): string {
  return /[\u0080-\uffff]/.test(segment) ? segment : segment.toLowerCase();
}

type IdentityAnswer =
  | { readonly kind: "values"; readonly values: { readonly clientId: string; readonly principalId: string } }
  | { readonly kind: "noProperties" }
  | { readonly kind: "malformed"; readonly problem: string };

/**
 * A 200 answer's raw text: `noProperties` unless JSON with an object `properties`, whose string
 * fields must be strings or null as Go's decoder requires; an existing identity has both IDs.
 */
export function readIdentityAnswer(bodyAsText: string | null | undefined): IdentityAnswer {
  const body = parsedJsonText(bodyAsText ?? "");
  const fields: unknown = isJsonObject(body) ? body.properties : undefined;
  if (!isJsonObject(fields)) return { kind: "noProperties" };
  for (const name of ["clientId", "principalId", "tenantId", "isolationScope"]) {
    const value = fields[name];
    const required = name === "clientId" || name === "principalId";
    if (typeof value === "string" || (!required && (value === undefined || value === null))) continue;
    const found = value === undefined ? "missing" : describeType(value);
    return { kind: "malformed", problem: `properties.${name} is ${found}, expected a string` };
  }
  return { kind: "values", values: { clientId: fields.clientId as string, principalId: fields.principalId as string } };
}

/** A 200 answer whose values are not what an identity has: a failure of that identity, not an answer about it. */
export class MalformedAnswerError extends Error {
  readonly code = "MalformedAnswer";
  readonly statusCode = 200;
}
MalformedAnswerError.prototype.name = "MalformedAnswerError";
