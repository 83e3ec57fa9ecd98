/** The data plane operators' half: the desired set, one entry per lookup outcome, the recheck time. */
import { formatTimestamp } from "./goJson";
import { goToLower } from "./goStrings";
import type { KeyedIdentity } from "./statusHalf";
import type { LookupErrorDetails } from "./retrievalError";
import { formatRetrievalError, sameFailureKind } from "./retrievalError";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "./azureResourceId";
import type { DataPlaneOperatorsManagedIdentities, DataPlaneOperatorManagedIdentityEntry } from "./serviceProviderClusterDocument";

/** Upstream's recheck interval and jitter: the recheck lands uniformly in [12 h, 18 h). */
export const recheckIntervalInMs = 12 * 60 * 60 * 1000;
const recheckJitterFactor = 0.5;

export type DesiredIdentity = KeyedIdentity;

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
    const property = `${propertyPrefix}.${operatorName}`;
    if (operatorName.trim().length === 0) {
      failures.push({ property, reason: "operator name must not be empty or whitespace" });
      continue;
    }
    const value = dataPlaneOperators[operatorName];
    if (value === null || value === undefined) {
      failures.push({ property, reason: "identity resource ID is missing (null)" });
      continue;
    }
    const parsed = parseResourceIdOfType(value, userAssignedIdentityResourceType);
    if (!parsed.ok) {
      failures.push({ property, reason: `identity resource ID ${parsed.reason}` });
      continue;
    }
    if (!byKey.has(parsed.resourceId.key)) {
      byKey.set(parsed.resourceId.key, { key: parsed.resourceId.key, resourceId: parsed.resourceId.canonical });
    }
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

/** The persisted entry for one identity from its lookup outcome. Errors never keep IDs. */
export function entryFor(identity: DesiredIdentity, outcome: IdentityLookupOutcome): DataPlaneOperatorManagedIdentityEntry {
  if (outcome.kind !== "resolved") return { resourceID: identity.resourceId, retrievalError: formatRetrievalError(outcome.error) };
  // Upstream stores the values as Azure returned them: null stays absent, "" stays "".
  return {
    resourceID: identity.resourceId,
    ...(outcome.clientId === null ? {} : { clientId: outcome.clientId }),
    ...(outcome.principalId === null ? {} : { principalId: outcome.principalId }),
  };
}

/** `now + 12 h + random × 0.5 × 12 h`, whole seconds. `random` returns a value in [0, 1). */
export function nextRecheckTime(now: Date, random: () => number): string {
  const jitter = Math.min(Math.max(random(), 0), 0.999999) * recheckJitterFactor * recheckIntervalInMs;
  return formatTimestamp(new Date(now.getTime() + recheckIntervalInMs + jitter));
}

/** Keeps a stored failed entry when the new one records the same kind of failure with the same IDs: the writers word errors differently. */
export function keepRecordedFailures(
  identities: Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>>,
  stored: DataPlaneOperatorsManagedIdentities,
): Record<string, DataPlaneOperatorManagedIdentityEntry> {
  const kept: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
  for (const [key, entry] of Object.entries(identities)) {
    const previous = stored.identities?.[key];
    const sameFailure =
      previous !== undefined &&
      entry.retrievalError !== undefined &&
      previous.retrievalError !== undefined &&
      entry.clientId === previous.clientId &&
      entry.principalId === previous.principalId &&
      goToLower(entry.resourceID) === goToLower(previous.resourceID) &&
      sameFailureKind(entry.retrievalError, previous.retrievalError);
    kept[key] = sameFailure ? previous : entry;
  }
  return kept;
}
