/**
 * What `pulumi refresh` does, writing nothing: read the ServiceProviderCluster document, report
 * drift against the last state, and ask Azure about what upstream's gate says is due (reading the
 * cluster document only when that needs it). A failure not about one identity fails the refresh.
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import { locate } from "../core/documentLocation";
import { CosmosDocumentError } from "../core/errors";
import { goToLower } from "../core/goStrings";
import { errorCodeLabel, isFailedRetrievalError } from "../core/retrievalError";
import type { MsiManagedIdentities } from "../core/msiManagedIdentities";
import { msiHalf, planMsiHalf } from "../core/msiManagedIdentities";
import type { MsiFingerprint } from "../core/msiOutputs";
import { fingerprintDifferences, msiFingerprintOf } from "../core/msiOutputs";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";
import type { DecidedOutcome } from "../core/statusDecision";
import type { StoredHalf } from "../core/goJson";
import { recheckDue } from "../core/statusHalf";
import { askAzure } from "./azureAnswers";
import { clusterDocumentDescription, readClusterDesiredSet, readRefreshDocument } from "./documents";
import type { SyncDependencies } from "./syncDependencies";
import { msiOverwriteGuard } from "./syncDependencies";

export interface RefreshResult {
  /** `deleted`: the documents are gone (the resource leaves state); `serviceProviderClusterMissing`: only that document is (a drift line). */
  readonly presence: "present" | "deleted" | "serviceProviderClusterMissing";
  readonly status: DataPlaneOperatorsManagedIdentities;
  /** The MSI half as stored (empty when the document is missing). */
  readonly msiStatus: MsiManagedIdentities;
  readonly drift: readonly string[];
  readonly lookups: number;
}

/** The last state's status, or how to get it from the keys found in Cosmos (the outputs name identities by key hash). */
export type KnownStatus = DataPlaneOperatorsManagedIdentities | ((persistedKeys: readonly string[]) => DataPlaneOperatorsManagedIdentities);

/** The MSI half as recorded in the last state, from the keys found in Cosmos: its identities, recheck time and fingerprint. */
export type KnownMsiStatus = (persistedKeys: readonly string[]) => { readonly status: MsiManagedIdentities; readonly fingerprint: MsiFingerprint };

/** Every drift line of the MSI half starts with it: an update forces that half's pass when one is there. */
export const msiDriftPrefix = "msiManagedIdentities: ";

export async function refreshManagedIdentityStatus(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  lastKnown: KnownStatus,
  lastKnownMsi?: KnownMsiStatus,
): Promise<RefreshResult> {
  // 1. Locate and read.
  const location = locate(cluster);
  const read = await readRefreshDocument(dependencies, location);
  if ("absence" in read) {
    const deleted = read.absence === "deleted";
    const line = deleted
      ? `ServiceProviderCluster document ${location.documentId} no longer exists`
      : `ServiceProviderCluster document ${location.documentId} does not exist, but the cluster's HCPOpenShiftCluster document ` +
        `${location.clusterDocumentId} does: the resource stays in state and \`pulumi up\` waits for the document`;
    return { presence: deleted ? "deleted" : "serviceProviderClusterMissing", status: {}, msiStatus: {}, drift: [line], lookups: 0 };
  }

  // 2. Drift against the last state.
  const { stored } = read;
  const persisted = dataPlaneHalf.read(stored.document);
  const persistedMsi = msiHalf.read(stored.document);
  const known = typeof lastKnown === "function" ? lastKnown(Object.keys(persisted.status.identities ?? {})) : lastKnown;
  const drift = cosmosDrift(known, persisted);
  const msiDrift = lastKnownMsi === undefined ? [] : msiCosmosDrift(lastKnownMsi, persistedMsi);

  // 3. What is due in Azure.
  const now = dependencies.now();
  const due = Object.entries(persisted.status.identities ?? {})
    .filter(([, entry]) => recheckDue(persisted.status.earliestRecheckTime, now) || isFailedRetrievalError(entry.retrievalError))
    .sort(([left], [right]) => (left < right ? -1 : 1));
  const msiDue = lastKnownMsi !== undefined && persistedMsi.problems.length === 0 && recheckDue(persistedMsi.status.earliestRecheckTime, now);

  // 4. The cluster document, once, when what is due needs it (a half the mode may not write is not asked about).
  const needsCredential = due.length > 0 && dependencies.clusterCredentials !== undefined;
  const fromCluster = msiDue || needsCredential ? await readClusterDesiredSet(dependencies, location) : undefined;
  if (needsCredential && fromCluster === undefined) {
    throw new CosmosDocumentError({
      documentId: location.clusterDocumentId,
      message: `${clusterDocumentDescription(location)} does not exist, so the credential of the cluster's service managed identity cannot be found; nothing was compared or written`,
    });
  }
  const msiPlan =
    msiDue && fromCluster !== undefined && fromCluster.kind !== "deleting"
      ? planMsiHalf(fromCluster, persistedMsi, now, true, msiOverwriteGuard(dependencies))
      : undefined;

  // 5. Ask Azure, both halves at once, and report what differs.
  const [dataPlaneAnswer, msiAnswer] = await askAzure(dependencies, location, cluster, fromCluster, {
    resourceIds: due.length === 0 ? undefined : due.map(([, entry]) => entry.resourceID),
    // Only where it would be reported as drift: entries that already record a failure stay quiet.
    shared: due.some(([, entry]) => entry.retrievalError === undefined),
    msi: msiPlan?.kind === "work" ? msiPlan.desired : undefined,
  });
  if (dataPlaneAnswer !== undefined && "error" in dataPlaneAnswer) throw dataPlaneAnswer.error;
  if (msiAnswer !== undefined && "error" in msiAnswer) throw msiAnswer.error;
  if (dataPlaneAnswer !== undefined) drift.push(...due.flatMap(([key, entry], index) => azureDriftOf(key, entry, dataPlaneAnswer.outcomes[index]) ?? []));
  if (msiAnswer !== undefined) msiDrift.push(...msiAzureDrift(persistedMsi.status, msiAnswer.answered));
  return { presence: "present", status: persisted.status, msiStatus: persistedMsi.status, drift: [...drift, ...msiDrift], lookups: due.length };
}

/** The data plane operators' half in Cosmos against the last state. */
function cosmosDrift(known: DataPlaneOperatorsManagedIdentities, persisted: StoredHalf<DataPlaneOperatorsManagedIdentities>): string[] {
  const drift = subtreeDrift("the status subtree", persisted, Object.keys(known.identities ?? {}).length > 0);
  for (const { key, change, fields } of dataPlaneHalf.changes(known, persisted.status)) {
    if (change === "changed") drift.push(...fields.map((field) => `identity ${key}: ${field} was changed in Cosmos`));
    // A subtree deleted whole is the one line above.
    else if (change === "added" || persisted.present) drift.push(`identity ${key} was ${change} ${change === "added" ? "to" : "from"} the status in Cosmos`);
  }
  return drift;
}

/** A half's subtree deleted in Cosmos (when the last state recorded anything) or malformed there. */
function subtreeDrift(subtree: string, persisted: StoredHalf<object>, recorded: boolean): string[] {
  return [
    ...(!persisted.present && recorded ? [`${subtree} was deleted in Cosmos`] : []),
    ...persisted.problems.map((problem) => `${subtree} in Cosmos is malformed: ${problem}`),
  ];
}

/** The MSI half in Cosmos against the fingerprints of the last state. */
function msiCosmosDrift(lastKnown: KnownMsiStatus, persisted: StoredHalf<MsiManagedIdentities>): string[] {
  const smi = persisted.status.serviceManagedIdentity?.resourceId;
  const keys = [...Object.keys(persisted.status.controlPlaneOperatorsIdentities ?? {}), ...(smi === undefined ? [] : [goToLower(smi)])];
  const known = lastKnown(keys).fingerprint;
  const drift = subtreeDrift(`${msiDriftPrefix}the subtree`, persisted, known.size > 0);
  if (!persisted.present) return drift;
  for (const { key, change, serviceManagedIdentity } of fingerprintDifferences(known, msiFingerprintOf(persisted.status))) {
    const what = serviceManagedIdentity ? "the service managed identity" : `control plane operator identity ${key}`;
    drift.push(`${msiDriftPrefix}${what} ${change === "changed" ? "changed" : `was ${change}`} in Cosmos`);
  }
  return drift;
}

/** What differs between the stored MSI half and what Azure answers now, entry by entry (recheck times aside). */
function msiAzureDrift(before: MsiManagedIdentities, after: MsiManagedIdentities): string[] {
  return msiHalf.changes(before, after).flatMap(({ key, change, fields }) => {
    const what = key === undefined ? "the service managed identity" : `control plane operator identity ${key}`;
    if (change === "changed") return [`${msiDriftPrefix}${what}: ${fields.join(" and ")} changed in Azure`];
    // Every answer names the service managed identity: one the stored half lacks was never checked.
    if (change === "added" && key === undefined) return [];
    return [`${msiDriftPrefix}${what} was ${change} in Azure`];
  });
}

/** What one lookup outcome says about a stored entry, as a drift line; undefined when nothing. */
function azureDriftOf(key: string, entry: DataPlaneOperatorManagedIdentityEntry, outcome: DecidedOutcome): string | undefined {
  if (outcome.kind !== "resolved") {
    if (entry.retrievalError !== undefined) return undefined;
    return outcome.error.code === "InvalidResourceId"
      ? `identity ${key}: the stored resourceID is not a valid identity ID`
      : `identity ${key}: lookup now fails in Azure with ${errorCodeLabel(outcome.error)}`;
  }
  if (entry.retrievalError !== undefined) return `identity ${key}: now resolves in Azure (was: ${entry.retrievalError.split(":")[0]})`;
  const changed = (["clientId", "principalId"] as const).filter((field) => (outcome[field] ?? undefined) !== entry[field]);
  return changed.length > 0 ? `identity ${key}: ${changed.join(" and ")} changed in Azure` : undefined;
}
