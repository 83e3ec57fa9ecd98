/**
 * What creating a cluster's resource would change, for a preview's run report (the engine does not
 * call a dynamic provider's create in a preview): the create's gates over one read of each
 * document, no Azure request, nothing written.
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import type { DesiredIdentity } from "../core/statusHalf";
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
