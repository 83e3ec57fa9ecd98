/**
 * The data plane operators' half's decisions (docs/design.md, "What may change a stored ID"): stored IDs change only on a
 * definitive answer (ResourceNotFound, other values, a 403 with the cluster's own credential); any other failure keeps them
 * beside a `retrievalError` (`clear` is upstream's rule) and leaves the recheck time unset. After a conflict, an entry the
 * other writer changed since our read is theirs.
 */
import { goToLower } from "./goStrings";
import { sortedRecord, withoutNil } from "./json";
import type { LookupErrorDetails } from "./retrievalError";
import { formatRetrievalError, isFailedRetrievalError, sameFailureKind } from "./retrievalError";
import type { DesiredIdentity } from "./statusHalf";
import { nextRecheckTime } from "./statusHalf";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities } from "./serviceProviderClusterDocument";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";
import type { LiveClusterDesiredSet } from "./clusterDocument";
import { clusterDocumentLabel } from "./clusterMessage";
import { desiredSetDisagreement } from "./errors";
import type { DocumentLocation } from "./documentLocation";
import { AzureAccessError, nothingWrittenError } from "./errors";

/** What a failed lookup does to the stored IDs of its entry: `keep` (the default) or upstream's `clear`. */
export const idsOnLookupFailureValues = ["keep", "clear"] as const;
export type IdsOnLookupFailure = (typeof idsOnLookupFailureValues)[number];

/** Whose credential read the identities: the cluster's own SMI (a 403 then says the identity is not the cluster's), or the hook's own. */
export type CredentialScope = "cluster" | "process";

export type IdentityLookupOutcome =
  | { readonly kind: "resolved"; readonly clientId: string | null; readonly principalId: string | null }
  | { readonly kind: "notFound"; readonly error: LookupErrorDetails }
  | { readonly kind: "failed"; readonly error: LookupErrorDetails }
  /** Not about this identity (credential, ARM 401, ARM unreachable): the pass must not write. */
  | { readonly kind: "global"; readonly error: LookupErrorDetails };

/** A lookup outcome as the decision sees it: every kind but `global`, which ends a pass before any decision. */
export type DecidedOutcome = Exclude<IdentityLookupOutcome, { readonly kind: "global" }>;

/** The class of a failure that says nothing about the identity and may pass on its own; undefined for any other. */
function transientFailureClass(error: LookupErrorDetails): "Timeout" | "Throttled" | "ServerError" | "ConnectionFailed" | undefined {
  if (error.code === "Timeout") return "Timeout";
  if (error.statusCode === 429) return "Throttled";
  if (error.statusCode !== undefined && (error.statusCode >= 500 || error.statusCode === 408)) return "ServerError";
  if (error.statusCode === undefined && (error.code === "ConnectionFailed" || /^E[A-Z]+$/.test(error.code))) return "ConnectionFailed";
  return undefined;
}

/** The error that ends the half before any write: a failure not about one identity, or (`keep`, `shared`) every lookup failing with one transient class. */
export function lookupsAccessError(
  location: Pick<DocumentLocation, "documentId" | "clusterName">,
  outcomes: readonly IdentityLookupOutcome[],
  options: { readonly credential: string | undefined; readonly idsOnLookupFailure: IdsOnLookupFailure; readonly shared: boolean },
): AzureAccessError | undefined {
  const context = { documentId: location.documentId, clusterName: location.clusterName, credential: options.credential };
  const global = outcomes.find((outcome) => outcome.kind === "global");
  if (global !== undefined) return new AzureAccessError({ ...context, error: global.error });
  const first = outcomes[0] as IdentityLookupOutcome | undefined;
  if (options.idsOnLookupFailure !== "keep" || !options.shared || first?.kind !== "failed") return undefined;
  const failureClass = transientFailureClass(first.error);
  const shared = failureClass !== undefined && outcomes.every((outcome) => outcome.kind === "failed" && transientFailureClass(outcome.error) === failureClass);
  return shared ? new AzureAccessError({ ...context, error: first.error, everyLookup: { failureClass, count: outcomes.length } }) : undefined;
}

/** Why the pass cannot go on: a cluster document whose set cannot be read, or inputs naming another set. */
export function dataPlaneRefusal(
  fromCluster: LiveClusterDesiredSet,
  requested: readonly DesiredIdentity[] | undefined,
  location: DocumentLocation,
): Error | undefined {
  if (fromCluster.kind === "unreadable") {
    return nothingWrittenError(location.clusterDocumentId, {
      cause: "the cluster's HCPOpenShiftCluster document does not name its data plane operator identities in a form upstream writes",
      clusterName: location.clusterName,
      reference: clusterDocumentLabel(location.clusterDocumentId),
      details: fromCluster.problems,
    });
  }
  return requested === undefined ? undefined : desiredSetDisagreement(requested, fromCluster.identities, location.clusterDocumentId, location.clusterName);
}

export interface StatusDecisionOptions {
  readonly desired: readonly DesiredIdentity[];
  /** One per desired identity, in the same order. */
  readonly outcomes: readonly DecidedOutcome[];
  /** The subtree as read before the lookups: what "changed since our read" is measured against. */
  readonly basis: DataPlaneOperatorsManagedIdentities;
  readonly reread: boolean;
  readonly now: Date;
  readonly random: () => number;
  readonly idsOnLookupFailure: IdsOnLookupFailure;
  readonly credentialScope: CredentialScope;
}

/** The subtree the outcomes leave in `stored` (the half as the write read it). */
export function decideStatus(stored: DataPlaneOperatorsManagedIdentities, options: StatusDecisionOptions): DataPlaneOperatorsManagedIdentities {
  const decided: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
  options.desired.forEach((identity, index) => {
    const entry = stored.identities?.[identity.key];
    const theirs = options.reread && entry !== undefined && !dataPlaneHalf.entryEquals(entry, options.basis.identities?.[identity.key]);
    decided[identity.key] = theirs ? entry : entryAfter(identity, options.outcomes[index], entry, options);
  });
  const identities = sortedRecord(decided);
  // Rule 2: a recheck time only when no entry records a failure (a still-valid one is kept by the half's write rule).
  if (Object.values(identities).some((entry) => isFailedRetrievalError(entry.retrievalError))) return { identities };
  return { identities, earliestRecheckTime: nextRecheckTime(options.now, options.random) };
}

/** The persisted entry for one identity from its lookup outcome. Errors never keep IDs. */
export function entryFor(identity: DesiredIdentity, outcome: IdentityLookupOutcome): DataPlaneOperatorManagedIdentityEntry {
  if (outcome.kind !== "resolved") return { resourceID: identity.resourceId, retrievalError: formatRetrievalError(outcome.error) };
  // Upstream stores the values as Azure returned them: null stays absent, "" stays "".
  return { resourceID: identity.resourceId, ...withoutNil({ clientId: outcome.clientId, principalId: outcome.principalId }) };
}

/** The entry one outcome leaves, given what is stored for that identity (rule 1). */
function entryAfter(
  identity: DesiredIdentity,
  outcome: DecidedOutcome,
  stored: DataPlaneOperatorManagedIdentityEntry | undefined,
  options: Pick<StatusDecisionOptions, "idsOnLookupFailure" | "credentialScope">,
): DataPlaneOperatorManagedIdentityEntry {
  const entry = entryFor(identity, outcome);
  // A 403 read with the cluster's own credential is a definitive answer (the identity is not the cluster's): its IDs go.
  const definitive = outcome.kind === "failed" && outcome.error.statusCode === 403 && options.credentialScope === "cluster";
  const keepsIds =
    outcome.kind === "failed" && options.idsOnLookupFailure === "keep" && !definitive && stored !== undefined && goToLower(stored.resourceID) === identity.key;
  const next = keepsIds
    ? { resourceID: entry.resourceID, ...withoutNil({ clientId: stored.clientId, principalId: stored.principalId, retrievalError: entry.retrievalError }) }
    : entry;
  // The writers word errors differently: a failure of the kind already recorded, with the same IDs, stays as recorded.
  const recorded =
    stored?.retrievalError !== undefined &&
    next.retrievalError !== undefined &&
    next.clientId === stored.clientId &&
    next.principalId === stored.principalId &&
    goToLower(next.resourceID) === goToLower(stored.resourceID) &&
    sameFailureKind(next.retrievalError, stored.retrievalError);
  return recorded ? stored : next;
}
