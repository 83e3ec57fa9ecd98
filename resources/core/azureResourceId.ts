/**
 * Azure resource IDs as the SDK parser upstream relies on reads them: `subscriptions`,
 * `resourceGroups` and `providers` case-insensitive and printed canonically, other segments as
 * written; keys are the lowercased canonical form.
 */
import { goToLower } from "./goStrings";
import { boundedMemo } from "./boundedMemo";

export const clusterResourceType = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters";
/** Resource type of the ServiceProviderCluster child resource (the document this hook writes). */
export const serviceProviderClusterResourceType = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters";
export const userAssignedIdentityResourceType = "Microsoft.ManagedIdentity/userAssignedIdentities";

export const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// ARM resource group names: 1-90 characters of letters, digits, underscores, parentheses, hyphens,
// periods (not ending in a period) and Unicode letters/digits.
const resourceGroupPattern = /^[-\w._()\p{L}\p{N}]{1,90}$/u;
// Resource names: no slashes, no control characters, no surrounding whitespace.
const resourceNamePattern = /^[^/\\?#%\s\p{Cc}][^/\\?#%\p{Cc}]{0,258}$/u;

export interface ParsedResourceId {
  /** Canonical string: canonical segment names, every other segment as given. */
  readonly canonical: string;
  /** Canonical string lowercased as Go does (goStrings.ts): the key used for maps, ids and comparisons. */
  readonly key: string;
  readonly subscriptionId: string;
  readonly resourceGroupName: string;
  /** `<namespace>/<type>[/<childType>…]` as given. */
  readonly resourceType: string;
  readonly name: string;
}

export type ResourceIdParseResult = { readonly ok: true; readonly resourceId: ParsedResourceId } | { readonly ok: false; readonly reason: string };

/** Parses `/subscriptions/<guid>/resourceGroups/<rg>/providers/<ns>/<type>/<name>…`; whitespace is refused, results memoized and frozen. */
export function parseResourceId(value: unknown): ResourceIdParseResult {
  return typeof value === "string" ? parsedStrings(value) : { ok: false, reason: `must be a string, got ${describeType(value)}` };
}

const parsedStrings = boundedMemo((value: string): ResourceIdParseResult => {
  const result = parseUncached(value);
  return Object.freeze(result.ok ? { ok: true, resourceId: Object.freeze(result.resourceId) } : result);
});

function parseUncached(value: string): ResourceIdParseResult {
  if (value.length === 0) return { ok: false, reason: "must not be empty" };
  if (value.trim() !== value) return { ok: false, reason: "must not have leading or trailing whitespace" };
  if (value.length > 1024) return { ok: false, reason: `is ${value.length} characters long; an ARM ID has at most 1024` };
  if (!value.startsWith("/")) return { ok: false, reason: "must start with '/subscriptions/'" };
  const segments = value.slice(1).split("/");
  if (segments.some((segment) => segment.length === 0)) return { ok: false, reason: "has an empty segment (double or trailing '/')" };
  if (goToLower(segments[0]) !== "subscriptions" || segments.length < 2) return { ok: false, reason: "must start with '/subscriptions/<subscription ID>'" };
  const subscriptionId = segments[1];
  if (!guidPattern.test(subscriptionId)) return { ok: false, reason: `has subscription '${subscriptionId}', which is not a GUID` };
  if (segments.length < 4 || goToLower(segments[2]) !== "resourcegroups") {
    return { ok: false, reason: "must continue with '/resourceGroups/<name>' after the subscription" };
  }
  const resourceGroupName = segments[3];
  if (!resourceGroupPattern.test(resourceGroupName) || resourceGroupName.endsWith(".")) {
    return { ok: false, reason: `has resource group '${resourceGroupName}', which is not a valid name` };
  }
  if (segments.length < 5 || goToLower(segments[4]) !== "providers") return { ok: false, reason: "must continue with '/providers/<namespace>/<type>/<name>'" };
  const providerSegments = segments.slice(5);
  if (providerSegments.length < 3 || providerSegments.length % 2 === 0) {
    return { ok: false, reason: "must name a resource as '/providers/<namespace>/<type>/<name>[/<type>/<name>…]'" };
  }
  const [namespace, ...typeAndNames] = providerSegments;
  const types: string[] = [];
  for (let index = 0; index < typeAndNames.length; index += 2) {
    types.push(typeAndNames[index]);
    const name = typeAndNames[index + 1];
    if (!resourceNamePattern.test(name) || name.trim() !== name) return { ok: false, reason: `has resource name '${name}', which is not a valid name` };
  }
  const joined = ["", "subscriptions", subscriptionId, "resourceGroups", resourceGroupName, "providers", ...providerSegments].join("/");
  // The given string when it is canonical already (the usual case): one copy fewer in the memo.
  const canonical = joined === value ? value : joined;
  return {
    ok: true,
    resourceId: {
      canonical,
      key: goToLower(canonical),
      subscriptionId,
      resourceGroupName,
      resourceType: [namespace, ...types].join("/"),
      name: typeAndNames[typeAndNames.length - 1],
    },
  };
}

/** Parses and additionally requires the given resource type (compared case-insensitively). */
export function parseResourceIdOfType(value: unknown, expectedType: string): ResourceIdParseResult {
  const result = parseResourceId(value);
  if (!result.ok) return result;
  if (goToLower(result.resourceId.resourceType) !== goToLower(expectedType)) {
    return { ok: false, reason: `must be a ${expectedType} ID, but names a ${result.resourceId.resourceType}` };
  }
  return result;
}

export function serviceProviderClusterIdFor(cluster: ParsedResourceId): string {
  return `${cluster.canonical}/serviceProviderClusters/default`;
}

/** A short description of a value's type for error messages (never the value itself). */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
