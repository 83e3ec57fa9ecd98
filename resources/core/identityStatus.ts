/** The desired set of an operator → identity map, the lookup outcome of one identity, and the recheck time both halves write. */
import { formatTimestamp } from "./goJson";
import type { DesiredIdentity } from "./statusHalf";
import type { LookupErrorDetails } from "./retrievalError";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "./azureResourceId";

/** Upstream's recheck interval and jitter: the recheck lands uniformly in [12 h, 18 h). */
export const recheckIntervalInMs = 12 * 60 * 60 * 1000;
const recheckJitterFactor = 0.5;

export type { DesiredIdentity };

/** A per-field problem with the desired set, in the shape of a Pulumi check failure. */
export interface DesiredSetFailure {
  readonly property: string;
  readonly reason: string;
}

/** The desired set of an operator → identity ID map: validated, deduplicated case-insensitively (first operator's spelling), sorted by key. */
export function desiredIdentitySet(
  dataPlaneOperators: Readonly<Record<string, unknown>>,
  propertyPrefix = "dataPlaneOperators",
): { readonly identities: readonly DesiredIdentity[]; readonly failures: readonly DesiredSetFailure[] } {
  const byKey = new Map<string, DesiredIdentity>();
  const failures: DesiredSetFailure[] = [];
  for (const operatorName of Object.keys(dataPlaneOperators).sort()) {
    const value = dataPlaneOperators[operatorName];
    const parsed = value === null || value === undefined ? undefined : parseResourceIdOfType(value, userAssignedIdentityResourceType);
    const reason =
      operatorName.trim().length === 0
        ? "operator name must not be empty or whitespace"
        : parsed === undefined
          ? "identity resource ID is missing (null)"
          : parsed.ok
            ? undefined
            : `identity resource ID ${parsed.reason}`;
    if (reason !== undefined) failures.push({ property: `${propertyPrefix}.${operatorName}`, reason });
    else if (parsed?.ok === true && !byKey.has(parsed.resourceId.key))
      byKey.set(parsed.resourceId.key, { key: parsed.resourceId.key, resourceId: parsed.resourceId.canonical });
  }
  // Code-unit order (sort's default), independent of locale: the same on every machine.
  const identities = [...byKey.keys()].sort().map((key) => byKey.get(key) as DesiredIdentity);
  return { identities, failures };
}

export type IdentityLookupOutcome =
  | { readonly kind: "resolved"; readonly clientId: string | null; readonly principalId: string | null }
  | { readonly kind: "notFound"; readonly error: LookupErrorDetails }
  | { readonly kind: "failed"; readonly error: LookupErrorDetails }
  /** Not about this identity (credential, ARM 401, ARM unreachable): the pass must not write. */
  | { readonly kind: "global"; readonly error: LookupErrorDetails };

/** `now + 12 h + random × 0.5 × 12 h`, whole seconds. `random` returns a value in [0, 1). */
export function nextRecheckTime(now: Date, random: () => number): string {
  const jitter = Math.min(Math.max(random(), 0), 0.999999) * recheckJitterFactor * recheckIntervalInMs;
  return formatTimestamp(new Date(now.getTime() + recheckIntervalInMs + jitter));
}
