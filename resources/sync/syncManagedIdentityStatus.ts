/**
 * One sync pass over both halves, upstream's two SyncOnce controllers in one: locate, read the
 * documents, decide each half (core/), ask Azure what the decisions need, write once with If-Match
 * (starting over when the cluster document changed), report. The halves are decided on their own:
 * one half's failure never keeps the other's answer from being written.
 */
import { ClusterCredentialError } from "../azure/clusterCredentials";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import type { ClusterCredentialFields } from "../core/clusterDocument";
import { locate } from "../core/documentLocation";
import { goToLower } from "../core/goStrings";
import { msiHalf, msiPlanError } from "../core/msiManagedIdentities";
import type { PassDecisions, SyncRequest, SyncResult } from "../core/passDecision";
import { planHalves, reportPass } from "../core/passDecision";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";
import { dataPlaneRefusal } from "../core/statusDecision";
import { log } from "../logging/logger";
import { askAzure } from "./azureAnswers";
import { ClusterDocumentChangedError, writeStatus } from "./writeStatus";
import { readPassDocuments } from "./documents";
import type { SyncDependencies } from "./syncDependencies";
import { msiOverwriteGuard } from "./syncDependencies";

export type { SyncRequest, SyncResult } from "../core/passDecision";

/** Runs one pass, started over when the cluster document changes under its write. */
export async function syncManagedIdentityStatus(dependencies: SyncDependencies, request: SyncRequest): Promise<SyncResult> {
  for (let pass = 1; ; pass += 1) {
    try {
      return await syncOnce(dependencies, request);
    } catch (error) {
      if (!(error instanceof ClusterDocumentChangedError) || pass >= dependencies.options.maxWriteAttempts) throw error;
      log("warning", "sync", error.documentId, `the cluster document changed during pass ${pass}; starting over`);
    }
  }
}

async function syncOnce(dependencies: SyncDependencies, request: SyncRequest): Promise<SyncResult> {
  // 1. Locate and read both documents.
  const location = locate(request.cluster);
  const read = await readPassDocuments(
    dependencies,
    location,
    (fromCluster) => dataPlaneRefusal(fromCluster, request.desired, location) ?? credentialRefusal(dependencies, request, fromCluster),
  );
  const idle = {
    documentId: location.documentId,
    partitionKey: location.partitionKey,
    serviceProviderClusterResourceId: location.serviceProviderClusterResourceId,
    desiredSource: request.desired === undefined ? ("clusterDocument" as const) : ("inputs" as const),
    serviceManagedIdentity: request.desired === undefined ? read.fromCluster.serviceManagedIdentity : undefined,
    skippedReason: undefined,
    msiSkippedReason: undefined,
    workReason: undefined,
    msiWorkReason: undefined,
    wrote: false,
    writeAttempts: 0,
    lookups: 0,
    failures: [],
  };
  if (read.kind === "deleting") {
    const document = read.stored?.document ?? {};
    return { ...idle, status: dataPlaneHalf.read(document).status, msiStatus: msiHalf.read(document).status, skippedReason: "clusterDeleting" };
  }
  const { fromCluster, stored } = read;

  // 2. Decide each half against what is stored.
  const { storedStatus, storedMsi, dataPlane, msi } = planHalves(fromCluster, request, stored.document, dependencies.now(), msiOverwriteGuard(dependencies));
  const msiSkippedReason = msi.kind === "skipped" ? msi.reason : undefined;
  if (dataPlane.kind !== "work" && msi.kind !== "work") {
    if (msi.kind === "unreadable" || msi.kind === "refused") throw msiPlanError(location, msi);
    return { ...idle, status: storedStatus.status, msiStatus: storedMsi.status, msiSkippedReason };
  }

  // 3. Ask Azure what the decisions need, both halves at once.
  const [dataPlaneAnswer, msiAnswer] = await askAzure(dependencies, location, request.cluster, fromCluster, {
    resourceIds: dataPlane.kind === "work" ? dataPlane.desired.map((identity) => identity.resourceId) : undefined,
    msi: msi.kind === "work" ? msi.desired : undefined,
  });

  // 4. Write once: each half decided again against every document the write reads.
  const decisions: PassDecisions = { dataPlane, dataPlaneAnswer, basis: storedStatus.status, msi, msiAnswer };
  const written = await writeStatus(dependencies, location, stored, decisions, fromCluster);

  // 5. Report.
  const result = {
    ...idle,
    status: written.halves.dataPlane ?? dataPlaneHalf.read(written.document).status,
    msiStatus: written.halves.msi ?? msiHalf.read(written.document).status,
    msiSkippedReason,
    workReason: dataPlane.kind === "work" ? dataPlane.reason : undefined,
    msiWorkReason: msi.kind === "work" ? msi.reason : undefined,
    wrote: written.wrote,
    halvesWritten: { dataPlane: written.halves.dataPlane !== undefined, msi: written.halves.msi !== undefined },
    writeAttempts: written.writeAttempts,
    lookups: dataPlane.kind === "work" ? dataPlane.desired.length : 0,
  };
  return reportPass(location, result, decisions, written.halves);
}

/** With cluster credentials: inputs naming another SMI or identity URL than the cluster document fail the cluster before any read. */
function credentialRefusal(
  dependencies: Pick<SyncDependencies, "clusterCredentials">,
  request: SyncRequest,
  fromCluster: ClusterCredentialFields,
): ClusterCredentialError | undefined {
  if (dependencies.clusterCredentials === undefined) return undefined;
  const { serviceManagedIdentity, identityUrl } = fromCluster;
  if (request.serviceManagedIdentity !== undefined && !sameIdentity(request.serviceManagedIdentity, serviceManagedIdentity)) {
    return new ClusterCredentialError(
      `the serviceManagedIdentity input names ${request.serviceManagedIdentity}, but the cluster's HCPOpenShiftCluster document ` +
        `names ${serviceManagedIdentity ?? "none"}: remove the input or make it agree (the cluster document says whose credential reads the cluster)`,
      { cluster: request.cluster, field: "serviceManagedIdentity" },
    );
  }
  if (request.identityUrl !== undefined && request.identityUrl !== identityUrl) {
    return new ClusterCredentialError(
      `the managedIdentitiesDataPlaneIdentityURL input is ${request.identityUrl}, but the cluster's HCPOpenShiftCluster document ` +
        `has ${identityUrl ?? "none"}: remove the input or make it agree (the cluster document says where its credential comes from)`,
      { cluster: request.cluster, field: "managedIdentitiesDataPlaneIdentityURL" },
    );
  }
  return undefined;
}

/** Two identity IDs name the same identity: canonical where they parse, compared as upstream's lowercasing does. */
function sameIdentity(left: string, right: string | undefined): boolean {
  const key = (id: string): string => {
    const parsed = parseResourceIdOfType(id, userAssignedIdentityResourceType);
    return parsed.ok ? parsed.resourceId.key : goToLower(id);
  };
  return right !== undefined && key(left) === key(right);
}

/** The result attached to an error thrown by a pass after it wrote (or recorded failed identities). */
export function partialResultOf(error: unknown): SyncResult | undefined {
  const result = (error as { result?: SyncResult } | undefined)?.result;
  return typeof result === "object" && result !== null ? result : undefined;
}
