/**
 * Which resource last took a cluster's status over: `claimedBy` beside `identities` in the owned
 * subtree, an opaque id each resource draws when it is created and keeps in its outputs.
 *
 * A delete resets the subtree only while it is what the deleted resource last recorded. When a
 * cluster's resource is replaced by another one (a new name in the same stack, a shard move to
 * another stack), the new one is created first and finds the status current, so without a claim it
 * would write nothing: the old one's delete would then still see its own last record and clear what
 * the new one stands on. A create therefore always writes its claim (with whatever else it writes, or alone),
 * and a delete keeps a subtree claimed by another resource. Updates keep the stored claim, so two
 * stacks that both declare a cluster do not take it from each other on every pass. Upstream's
 * typed Replace drops the field (it does not know it); its write changes the subtree anyway, so a
 * delete then keeps it by the content rule. Pure.
 */
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";
import type { PatchOperation } from "./serviceProviderClusterDocument";

/** The field of the owned subtree that holds the claim. */
export const claimField = "claimedBy";

/** What a write does to the claim: take it (a create), or drop it with the subtree (a delete that clears). */
export type ClaimChange = { readonly set: string } | "drop";

/** The claim stored in a ServiceProviderCluster document, when there is one. */
export function storedClaimOf(document: JsonObject): string | undefined {
  const subtree = subtreeOf(document);
  const claim = subtree?.[claimField];
  return typeof claim === "string" ? claim : undefined;
}

/** Whether writing `change` would change the document's claim. */
export function claimChanges(document: JsonObject, change: ClaimChange): boolean {
  const stored = storedClaimOf(document);
  return change === "drop" ? stored !== undefined : stored !== change.set;
}

/** The status patch with the claim set or dropped in the subtree it writes (statusPatchOperations). */
export function withClaim(operations: readonly PatchOperation[], change: ClaimChange): PatchOperation[] {
  return operations.map((operation) => {
    if (operation.op !== "set" || !isJsonObject(operation.value)) {
      return operation;
    }
    if (operation.path === "/properties/status/dataPlaneOperatorsManagedIdentities") {
      return { ...operation, value: claimed(operation.value, change) };
    }
    const nested = operation.value.dataPlaneOperatorsManagedIdentities;
    if (operation.path === "/properties/status" && isJsonObject(nested)) {
      return { ...operation, value: { ...operation.value, dataPlaneOperatorsManagedIdentities: claimed(nested, change) } };
    }
    return operation;
  });
}

function claimed(subtree: JsonObject, change: ClaimChange): JsonObject {
  const { [claimField]: _previous, ...rest } = subtree;
  return change === "drop" ? rest : { ...rest, [claimField]: change.set };
}

function subtreeOf(document: JsonObject): Readonly<Record<string, JsonValue>> | undefined {
  const properties = isJsonObject(document.properties) ? document.properties : undefined;
  const status = properties !== undefined && isJsonObject(properties.status) ? properties.status : undefined;
  const subtree = status?.dataPlaneOperatorsManagedIdentities;
  return isJsonObject(subtree) ? subtree : undefined;
}
