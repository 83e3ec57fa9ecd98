/**
 * What creating a cluster's resource would change in Cosmos, for the run report of a preview.
 * The engine does not call a dynamic provider's create during a preview, so `pulumi preview` of a
 * fleet upstream already keeps says only "+ create". The provider's check of a resource new to
 * the stack (no old inputs) calls this when the run is recorded (ARO_HCP_RUN_RECORDS): one read of
 * each of the cluster's two documents and the same gates the create's pass runs, no Azure request,
 * nothing written. A half that needs no work is `current` (the create writes nothing of it); one
 * whose recheck is due or whose status is missing is `wouldAsk` (the create asks Azure and writes
 * only what changed).
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import type { DesiredIdentity } from "../core/identityStatus";
import { desiredFromClusterDocument } from "../core/clusterDocument";
import { locate } from "../core/documentLocation";
import { planHalves } from "../core/passDecision";
import { clusterDocumentDescription, readClusterDocument, readServiceProviderCluster, serviceProviderClusterDescription } from "../sync/documents";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { RunRecord } from "./runRecord";
import { appendRunRecord, recordOfFailedPass } from "./runRecord";

/** The halves' outcomes a create would have, and why when it cannot be told. */
export async function adoptionPreview(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  desired: readonly DesiredIdentity[] | undefined,
  force: boolean,
): Promise<Pick<RunRecord, "dataPlane" | "msi" | "message">> {
  const location = locate(cluster);
  const [clusterDocument, serviceProviderCluster] = await Promise.all([
    readClusterDocument(dependencies, location),
    readServiceProviderCluster(dependencies, location),
  ]);
  if (clusterDocument === undefined || serviceProviderCluster === undefined) {
    const missing = clusterDocument === undefined ? clusterDocumentDescription(location) : serviceProviderClusterDescription(location);
    return { dataPlane: "wouldAsk", msi: "wouldAsk", message: `${missing} is not there yet: the create waits for it (documentWaitSeconds)` };
  }
  const fromCluster = desiredFromClusterDocument(clusterDocument.document);
  if (fromCluster.kind === "deleting") return { dataPlane: "skipped", msi: "skipped" };
  if (fromCluster.kind === "unreadable")
    return { dataPlane: "failed", msi: "failed", message: `the cluster document cannot be read: ${fromCluster.problems.join("; ")}` };
  const { dataPlane, msi } = planHalves(
    fromCluster,
    { desired, force, forceMsi: force },
    serviceProviderCluster.document,
    dependencies.now(),
    dependencies.msiAnswers?.standIn,
  );
  return {
    dataPlane: dataPlane.kind === "work" ? "wouldAsk" : "current",
    msi: msi.kind === "work" ? "wouldAsk" : msi.kind === "skipped" ? "skipped" : msi.kind === "current" ? "current" : "failed",
  };
}

/** Appends the preview's record of a cluster new to the stack; a failure to tell is recorded as its own, never thrown. */
export async function recordAdoptionPreview(
  dependencies: () => SyncDependencies,
  header: Pick<RunRecord, "cluster" | "clusterResourceId" | "operation" | "at">,
  cluster: ParsedResourceId,
  desired: readonly DesiredIdentity[] | undefined,
  force: boolean,
): Promise<void> {
  try {
    appendRunRecord({ ...header, ...(await adoptionPreview(dependencies(), cluster, desired, force)) });
  } catch (error) {
    appendRunRecord(recordOfFailedPass(header, error));
  }
}
