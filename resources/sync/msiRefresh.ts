/**
 * What `pulumi refresh` does to the MSI half of the status (msiHalf.ts).
 *
 * Refresh writes nothing. It reports as drift, each line starting with {@link msiDriftPrefix}:
 * - against the last state (which keeps fingerprints of the IDs, not the IDs: core/msiOutputs.ts):
 *   the subtree deleted or malformed in Cosmos, an identity added or removed, its IDs changed
 *   there by someone else;
 * - against Azure, only once the half's recheck time has passed (upstream's gate; a refresh inside
 *   the window asks nothing): an answer whose IDs differ from the stored ones. An answer that
 *   cannot be had is not drift: the refresh fails, saying why, as an update would.
 */
import { desiredFromClusterDocument } from "../core/clusterDocument";
import type { DocumentLocation } from "../core/documentLocation";
import type { JsonObject } from "../core/json";
import type { MsiManagedIdentities } from "../core/msiManagedIdentities";
import type { MsiFingerprint } from "../core/msiOutputs";
import { fingerprintDifferences, msiFingerprintOf } from "../core/msiOutputs";
import { parseTimestamp } from "../core/identityStatus";
import { goToLower } from "../core/goStrings";
import { clusterDocumentDescription, readLive } from "./documentReads";
import { planMsiHalf, resolveMsiHalf } from "./msiHalf";
import type { SyncDependencies } from "./syncDependencies";
import { msiHalf } from "../core/msiManagedIdentities";

/** Every drift line of this half starts with it: an update forces this half's pass when one is there. */
export const msiDriftPrefix = "msiManagedIdentities: ";

/** The half as recorded in the last state, from the keys found in Cosmos: its identities, recheck time and fingerprint (core/msiOutputs.ts). */
export type KnownMsiStatus = (persistedKeys: readonly string[]) => { readonly status: MsiManagedIdentities; readonly fingerprint: MsiFingerprint };

/** The keys a stored half holds: its control plane operators' and its service managed identity's. */
export function msiKeysOf(status: MsiManagedIdentities): string[] {
  const smi = status.serviceManagedIdentity?.resourceId;
  return [...Object.keys(status.controlPlaneOperatorsIdentities ?? {}), ...(smi === undefined ? [] : [goToLower(smi)])];
}

/** Compares the stored half with the last state and, when due, with Azure. */
export async function refreshMsiHalf(
  dependencies: SyncDependencies,
  location: DocumentLocation,
  document: JsonObject,
  lastKnown: KnownMsiStatus,
): Promise<{ readonly status: MsiManagedIdentities; readonly drift: readonly string[] }> {
  const persisted = msiHalf.read(document);
  const known = lastKnown(msiKeysOf(persisted.status)).fingerprint;
  const drift: string[] = [];
  if (!persisted.present && known.size > 0) drift.push(`${msiDriftPrefix}the subtree was deleted in Cosmos`);
  for (const problem of persisted.problems) drift.push(`${msiDriftPrefix}the subtree in Cosmos is malformed: ${problem}`);
  if (persisted.present) {
    for (const { key, change, serviceManagedIdentity } of fingerprintDifferences(known, msiFingerprintOf(persisted.status))) {
      const what = serviceManagedIdentity ? "the service managed identity" : `control plane operator identity ${key}`;
      drift.push(`${msiDriftPrefix}${what} ${change === "changed" ? "changed" : `was ${change}`} in Cosmos`);
    }
  }
  const recheck = parseTimestamp(persisted.status.earliestRecheckTime);
  if (persisted.problems.length > 0 || (recheck !== undefined && dependencies.now().getTime() < recheck.getTime())) {
    return { status: persisted.status, drift };
  }
  // Due (or never checked): what would a pass write now? Its answer needs the cluster document's identities and URL.
  const description = clusterDocumentDescription(location);
  const clusterDocument = await readLive(dependencies, location.partitionKey, location.clusterDocumentId, description);
  const fromCluster = clusterDocument === undefined ? undefined : desiredFromClusterDocument(clusterDocument.document);
  if (fromCluster === undefined || fromCluster.kind === "deleting") return { status: persisted.status, drift };
  const plan = planMsiHalf(fromCluster, persisted, dependencies.now(), true);
  if (plan.kind !== "work") return { status: persisted.status, drift };
  const resolved = await resolveMsiHalf(dependencies, plan, location);
  if ("error" in resolved) throw resolved.error;
  const answered = resolved.decide(document, false);
  if (answered !== undefined) drift.push(...azureDrift(persisted.status, answered));
  return { status: persisted.status, drift };
}

/** What differs between the stored half and what Azure answers now, entry by entry (recheck times aside). */
function azureDrift(before: MsiManagedIdentities, after: MsiManagedIdentities): string[] {
  return msiHalf.changes(before, after).flatMap(({ key, change, fields }) => {
    const what = key === undefined ? "the service managed identity" : `control plane operator identity ${key}`;
    if (change === "changed") return [`${msiDriftPrefix}${what}: ${fields.join(" and ")} changed in Azure`];
    // Every answer names the service managed identity: one the stored half lacks was never checked.
    if (change === "added" && key === undefined) return [];
    return [`${msiDriftPrefix}${what} was ${change} in Azure`];
  });
}
