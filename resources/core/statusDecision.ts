/**
 * The data plane operators' half's decisions (docs/design.md, "What may change a stored ID"):
 * stored IDs change only on a definitive answer (ResourceNotFound, other values, a 403 with the
 * cluster's own credential); any other failure keeps them beside a `retrievalError` (`clear` is
 * upstream's rule), and leaves the recheck time unset. After a conflict, an entry the other writer
 * changed since our read is theirs.
 */
import { goToLower } from "./goStrings";
import { sortedRecord } from "./json";
import type { DesiredIdentity, IdentityLookupOutcome } from "./identityStatus";
import type { LookupErrorDetails } from "./retrievalError";
import { entryFor, keepRecordedFailures, nextRecheckTime } from "./identityStatus";
import { isFailedRetrievalError } from "./retrievalError";
import { recheckDue } from "./statusHalf";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities, StoredStatus } from "./serviceProviderClusterDocument";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";
import { AzureAccessError } from "./errors";
import type { LiveClusterDesiredSet } from "./clusterDocument";
import { clusterDocumentLabel } from "./clusterMessage";
import { desiredSetDisagreement } from "./desiredSetDisagreement";
import type { DocumentLocation } from "./documentLocation";
import { nothingWrittenError } from "./errors";

/** What a failed lookup does to the stored IDs of its entry: `keep` (the default) or upstream's `clear`. */
export type IdsOnLookupFailure = "keep" | "clear";

export const idsOnLookupFailureValues: readonly IdsOnLookupFailure[] = ["keep", "clear"];

/** Whose credential read the identities: the cluster's own SMI (a 403 then says the identity is not the cluster's), or the hook's own. */
export type CredentialScope = "cluster" | "process";

/** A lookup outcome as the decision sees it: every kind but `global`, which ends a pass before any decision. */
export type DecidedOutcome = Exclude<IdentityLookupOutcome, { readonly kind: "global" }>;

/** True when a failed lookup is a definitive answer about the identity, so its stored IDs go: a 403 read with the cluster's own credential. */
function isDefinitiveFailure(error: LookupErrorDetails, credentialScope: CredentialScope): boolean {
  return error.statusCode === 403 && credentialScope === "cluster";
}

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
  if (options.idsOnLookupFailure !== "keep" || !options.shared || outcomes.length === 0) return undefined;
  const first = outcomes[0];
  const failureClass = first.kind === "failed" ? transientFailureClass(first.error) : undefined;
  const shared = failureClass !== undefined && outcomes.every((outcome) => outcome.kind === "failed" && transientFailureClass(outcome.error) === failureClass);
  return shared && first.kind === "failed"
    ? new AzureAccessError({ ...context, error: first.error, everyLookup: { failureClass, count: outcomes.length } })
    : undefined;
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
  readonly current: StoredStatus;
  readonly reread: boolean;
  readonly now: Date;
  readonly random: () => number;
  readonly idsOnLookupFailure: IdsOnLookupFailure;
  readonly credentialScope: CredentialScope;
}

/** The subtree to persist, or `undefined` when nothing should be written. */
export function decideStatus(options: StatusDecisionOptions): DataPlaneOperatorsManagedIdentities | undefined {
  const { current, basis, now } = options;
  return dataPlaneHalf.decideWrite({ desired: options.desired, current, reread: options.reread, now }, (stored) => {
    const currentIdentities = stored.identities ?? {};
    const basisIdentities = basis.identities ?? {};
    const ours: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
    const theirs: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
    options.desired.forEach((identity, index) => {
      const entry = currentIdentities[identity.key];
      if (options.reread && entry !== undefined && !dataPlaneHalf.entryEquals(entry, basisIdentities[identity.key])) {
        theirs[identity.key] = entry;
        return;
      }
      ours[identity.key] = entryAfter(identity, options.outcomes[index], entry, options);
    });
    // A failure the other writer already recorded in its own words is kept as stored.
    const identities = { ...keepRecordedFailures(ours, stored), ...theirs };
    return withRecheckTime(sortedRecord(identities), stored, options);
  });
}

/** The entry one outcome leaves, given what is stored for that identity (rule 1). */
function entryAfter(
  identity: DesiredIdentity,
  outcome: DecidedOutcome,
  stored: DataPlaneOperatorManagedIdentityEntry | undefined,
  options: Pick<StatusDecisionOptions, "idsOnLookupFailure" | "credentialScope">,
): DataPlaneOperatorManagedIdentityEntry {
  const entry = entryFor(identity, outcome);
  const keepsIds =
    outcome.kind === "failed" &&
    options.idsOnLookupFailure === "keep" &&
    !isDefinitiveFailure(outcome.error, options.credentialScope) &&
    stored !== undefined &&
    goToLower(stored.resourceID) === identity.key;
  if (!keepsIds) return entry;
  return {
    resourceID: entry.resourceID,
    ...(stored.clientId === undefined ? {} : { clientId: stored.clientId }),
    ...(stored.principalId === undefined ? {} : { principalId: stored.principalId }),
    ...(entry.retrievalError === undefined ? {} : { retrievalError: entry.retrievalError }),
  };
}

/** Rule 2: a recheck time only when no entry records a failure; a still-valid one is kept when the entries did not change. */
function withRecheckTime(
  identities: Record<string, DataPlaneOperatorManagedIdentityEntry>,
  stored: DataPlaneOperatorsManagedIdentities,
  options: Pick<StatusDecisionOptions, "now" | "random">,
): DataPlaneOperatorsManagedIdentities {
  if (Object.values(identities).some((entry) => isFailedRetrievalError(entry.retrievalError))) return { identities };
  if (!recheckDue(stored.earliestRecheckTime, options.now) && dataPlaneHalf.equals({ identities }, { identities: stored.identities })) {
    return { identities, earliestRecheckTime: stored.earliestRecheckTime };
  }
  return { identities, earliestRecheckTime: nextRecheckTime(options.now, options.random) };
}
