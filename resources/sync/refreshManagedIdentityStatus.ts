/**
 * What `pulumi refresh` does.
 *
 * Refresh reads the persisted subtree and reports drift, writing nothing:
 * - against the last known state: a deleted or malformed subtree, or entries removed, added or
 *   changed in Cosmos by someone else;
 * - against Azure, only for entries whose recheck is due or that record a real failure (upstream's
 *   gate; a NotFound entry waits for the recheck time like a resolved one):
 *   a clientId/principalId that changed, an identity that now resolves, or one that now fails.
 * The next `pulumi up` sees the drift in state and rewrites the subtree. A failure not about one
 * identity (credential, ARM 401, ARM unreachable) is not drift: the refresh fails with
 * AzureAccessError and reports nothing.
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import { AzureAccessError } from "../core/azureAccessError";
import type { IdentityLookupOutcome } from "../core/identityStatus";
import type { DecidedOutcome } from "../core/statusDecision";
import { sharedTransientFailure } from "../core/statusDecision";
import { isFailedRetrievalError, parseTimestamp } from "../core/identityStatus";
import { lookUpIdentity } from "./lookUpIdentity";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import type { SyncDependencies } from "./syncDependencies";
import { locate } from "../core/documentLocation";
import { readLive, serviceProviderClusterDescription } from "./documentReads";
import type { MsiManagedIdentities } from "../core/msiManagedIdentities";
import type { KnownMsiStatus } from "./msiRefresh";
import { refreshMsiHalf } from "./msiRefresh";
import { refreshLookupDependencies } from "./clusterLookups";
import { explainMissingServiceProviderCluster } from "./documentAbsence";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";

/** The outcome of a refresh. */
export interface RefreshResult {
  /**
   * `deleted`: the cluster's documents are gone from where the fleet's documents are (the resource
   * leaves state); `serviceProviderClusterMissing`: only the ServiceProviderCluster document is
   * missing while the cluster document exists (the resource stays, with a drift line); `present`
   * otherwise. Documents that cannot be proved gone fail the refresh (sync/documentAbsence.ts).
   */
  readonly presence: "present" | "deleted" | "serviceProviderClusterMissing";
  readonly status: DataPlaneOperatorsManagedIdentities;
  /** The MSI half as stored (empty when the document is missing, or no last state of it was given). */
  readonly msiStatus: MsiManagedIdentities;
  readonly drift: readonly string[];
  readonly lookups: number;
}

/**
 * The last state's status, or how to get it from the keys found in Cosmos: the provider's outputs
 * name an operator's identity by a hash of its key (core/outputsStatus.ts).
 */
export type KnownStatus = DataPlaneOperatorsManagedIdentities | ((persistedKeys: readonly string[]) => DataPlaneOperatorsManagedIdentities);

/** Reads the persisted status and compares it with `known` (the last state) and with Azure. */
export async function refreshManagedIdentityStatus(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  lastKnown: KnownStatus,
  lastKnownMsi?: KnownMsiStatus,
): Promise<RefreshResult> {
  const location = locate(cluster);
  const stored = await readLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location));
  if (stored === undefined) {
    const absence = await explainMissingServiceProviderCluster(dependencies, location, "refresh");
    return absence === "deleted"
      ? { presence: "deleted", status: {}, msiStatus: {}, drift: [`ServiceProviderCluster document ${location.documentId} no longer exists`], lookups: 0 }
      : {
          presence: "serviceProviderClusterMissing",
          status: {},
          msiStatus: {},
          drift: [
            `ServiceProviderCluster document ${location.documentId} does not exist, but the cluster's HCPOpenShiftCluster document ` +
              `${location.clusterDocumentId} does: the resource stays in state and \`pulumi up\` waits for the document`,
          ],
          lookups: 0,
        };
  }
  const persisted = dataPlaneHalf.read(stored.document);
  const drift: string[] = [];
  const known = typeof lastKnown === "function" ? lastKnown(Object.keys(persisted.status.identities ?? {})) : lastKnown;
  const knownIdentities = known.identities ?? {};
  if (!persisted.present && Object.keys(knownIdentities).length > 0) {
    drift.push("the status subtree was deleted in Cosmos");
  }
  for (const problem of persisted.problems) {
    drift.push(`the status subtree in Cosmos is malformed: ${problem}`);
  }
  for (const { key, change, fields } of dataPlaneHalf.changes(known, persisted.status)) {
    if (change === "changed") drift.push(...fields.map((field) => `identity ${key}: ${field} was changed in Cosmos`));
    // A subtree deleted whole is the one line above.
    else if (change === "added" || persisted.present) drift.push(`identity ${key} was ${change} ${change === "added" ? "to" : "from"} the status in Cosmos`);
  }

  // The MSI half at the same time: its own gate, its own answer.
  const msiRefresh = lastKnownMsi === undefined ? Promise.resolve(undefined) : refreshMsiHalf(dependencies, location, stored.document, lastKnownMsi);
  // Never left unobserved: a rejection is met by the await below (a DP failure that throws first leaves it settled quietly).
  msiRefresh.catch(() => undefined);
  const due = dueEntries(persisted.status, dependencies.now());
  const lookups = due.length === 0 ? dependencies : await refreshLookupDependencies(dependencies, cluster, {}, location);
  const outcomes = await Promise.all(due.map(([, entry]) => lookUpIdentity(lookups, entry.resourceID)));
  const globalFailure = outcomes.find((outcome): outcome is Extract<IdentityLookupOutcome, { kind: "global" }> => outcome.kind === "global");
  if (globalFailure !== undefined) {
    throw new AzureAccessError({
      documentId: location.documentId,
      clusterName: location.clusterName,
      error: globalFailure.error,
      credential: lookups.credentialDescription,
    });
  }
  const decided = outcomes as DecidedOutcome[];
  // Only where it would be reported as drift: entries that already record a failure stay quiet.
  const wouldReport = due.some(([, entry]) => entry.retrievalError === undefined);
  const shared = dependencies.options.idsOnLookupFailure === "keep" && wouldReport ? sharedTransientFailure(decided) : undefined;
  if (shared !== undefined) {
    // As in a pass: an ARM brownout says nothing about any identity, so it is not drift either.
    throw new AzureAccessError({
      documentId: location.documentId,
      clusterName: location.clusterName,
      error: shared.error,
      credential: lookups.credentialDescription,
      everyLookup: { failureClass: shared.failureClass, count: decided.length },
    });
  }
  due.forEach(([key, entry], index) => {
    const line = azureDriftOf(key, entry, decided[index]);
    if (line !== undefined) drift.push(line);
  });
  const msi = await msiRefresh;
  return { presence: "present", status: persisted.status, msiStatus: msi?.status ?? {}, drift: [...drift, ...(msi?.drift ?? [])], lookups: due.length };
}

/** Entries worth asking Azure about: all of them once the recheck is due, else those recording a real failure. */
function dueEntries(status: DataPlaneOperatorsManagedIdentities, now: Date): Array<[string, DataPlaneOperatorManagedIdentityEntry]> {
  const recheck = parseTimestamp(status.earliestRecheckTime);
  const recheckDue = recheck === undefined || now.getTime() >= recheck.getTime();
  return Object.entries(status.identities ?? {})
    .filter(([, entry]) => recheckDue || isFailedRetrievalError(entry.retrievalError))
    .sort(([left], [right]) => (left < right ? -1 : 1));
}

/** What one lookup outcome says about a stored entry, as a drift line; undefined when nothing. */
function azureDriftOf(key: string, entry: DataPlaneOperatorManagedIdentityEntry, outcome: DecidedOutcome): string | undefined {
  if (outcome.kind !== "resolved") {
    if (entry.retrievalError !== undefined) {
      return undefined;
    }
    const status = outcome.error.statusCode === undefined ? "" : ` (HTTP ${outcome.error.statusCode})`;
    return outcome.error.code === "InvalidResourceId"
      ? `identity ${key}: the stored resourceID is not a valid identity ID`
      : `identity ${key}: lookup now fails in Azure with ${outcome.error.code}${status}`;
  }
  if (entry.retrievalError !== undefined) {
    return `identity ${key}: now resolves in Azure (was: ${entry.retrievalError.split(":")[0]})`;
  }
  const changed = [
    (outcome.clientId ?? undefined) !== entry.clientId ? "clientId" : undefined,
    (outcome.principalId ?? undefined) !== entry.principalId ? "principalId" : undefined,
  ].filter((field): field is string => field !== undefined);
  return changed.length > 0 ? `identity ${key}: ${changed.join(" and ")} changed in Azure` : undefined;
}
