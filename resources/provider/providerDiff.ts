/**
 * `diff`: whether an update has anything to do, with no Azure call: each half's gate (upstream's
 * needsWork) on the last state. Inputs naming the operators need no Cosmos read; otherwise one read of
 * the cluster document names both desired sets, and one gone or unreadable is a change (the pass says why).
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import type { ClusterDesiredSet } from "../core/clusterDocument";
import { desiredFromClusterDocument, msiDesiredSet } from "../core/clusterDocument";
import type { DesiredIdentity } from "../core/statusHalf";
import { locate } from "../core/documentLocation";
import { decodeMsiOutputs } from "../core/msiOutputs";
import { decodeOutputsStatus } from "../core/outputsStatus";
import { recheckDue } from "../core/statusHalf";
import { readClusterDocument } from "../sync/documents";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { ProviderInputs } from "./providerInputs";
import { desiredFromInputs, parseCluster } from "./providerInputs";
import type { StoredOutputs } from "./providerOutputs";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";
import { msiHalf } from "../core/msiManagedIdentities";

/** Whether the last state's halves call for an update now. */
export async function hasWork(dependencies: () => SyncDependencies, old: StoredOutputs, news: ProviderInputs, now: Date): Promise<boolean> {
  const desired = desiredFromInputs(news);
  if (desired !== undefined) {
    // Same declared map (same digest): the operators' keys are the desired keys.
    if (dataPlaneHasWork(old, desired, now)) return true;
    return old.msiSkippedReason === null && recheckDue(old.msiStatus.earliestRecheckTime, now);
  }
  const fromCluster = await clusterDesiredSet(dependencies, parseCluster(news.clusterResourceId));
  if (fromCluster === undefined || fromCluster.kind === "unreadable") return true;
  if (fromCluster.kind === "deleting") return old.skippedReason !== "clusterDeleting";
  // The recorded service managed identity follows the document unless the inputs name one.
  const serviceManagedIdentityMoved = news.serviceManagedIdentity === undefined && (fromCluster.serviceManagedIdentity ?? null) !== old.serviceManagedIdentity;
  if (old.skippedReason !== null || serviceManagedIdentityMoved || dataPlaneHasWork(old, fromCluster.identities, now)) return true;
  if (fromCluster.identityUrl === undefined) return old.msiSkippedReason === null;
  const msi = msiDesiredSet(fromCluster.controlPlaneOperators, fromCluster.serviceManagedIdentity);
  if (!msi.ok) return true;
  const keys = [...msi.desired.controlPlaneOperators.map((identity) => identity.key), msi.desired.serviceManagedIdentity.key];
  return msiHalf.workReason(msi.desired, decodeMsiOutputs(old.msiStatus, keys).status, now) !== undefined;
}

/** What the cluster's live document names (no wait), or undefined when it is gone. */
export async function clusterDesiredSet(dependencies: () => SyncDependencies, cluster: ParsedResourceId): Promise<ClusterDesiredSet | undefined> {
  const stored = await readClusterDocument(dependencies(), locate(cluster));
  return stored === undefined ? undefined : desiredFromClusterDocument(stored.document);
}

function dataPlaneHasWork(old: StoredOutputs, desired: readonly DesiredIdentity[], now: Date): boolean {
  const keys = desired.map((identity) => identity.key);
  return dataPlaneHalf.workReason(desired, decodeOutputsStatus(old.status, keys), now) !== undefined;
}
