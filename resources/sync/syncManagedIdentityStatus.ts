/**
 * One sync pass over both halves, upstream's two SyncOnce controllers in one: locate, read the
 * documents, decide each half (core/), ask Azure what the decisions need, write once with If-Match
 * (starting over when the cluster document changed), report. The halves are decided on their own:
 * one half's failure never keeps the other's answer from being written.
 */
import { desiredFromClusterDocument } from "../core/clusterDocument";
import { locate } from "../core/documentLocation";
import { msiHalf, msiPlanError } from "../core/msiManagedIdentities";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";
import { dataPlaneRefusal } from "../core/statusDecision";
import type { PassDecisions, SyncRequest, SyncResult } from "../core/passDecision";
import { decideHalves, planHalves, reportPass } from "../core/passDecision";
import { log } from "../logging/logger";
import { askDataPlane, askMsi } from "./azureAnswers";
import { credentialRefusal, credentialRequestOf } from "./clusterLookups";
import { readPassDocuments } from "./documents";
import { ClusterDocumentChangedError, writeStatus } from "./statusWrite";
import type { SyncDependencies } from "./syncDependencies";

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
  // 1. Locate.
  const location = locate(request.cluster);
  const declared = { serviceManagedIdentity: request.serviceManagedIdentity, identityUrl: request.identityUrl };

  // 2. Read both documents.
  const read = await readPassDocuments(
    dependencies,
    location,
    (fromCluster) =>
      dataPlaneRefusal(fromCluster, request.desired, location) ?? credentialRefusal(dependencies, credentialRequestOf(request.cluster, fromCluster), declared),
  );
  const base = {
    documentId: location.documentId,
    partitionKey: location.partitionKey,
    serviceProviderClusterResourceId: location.serviceProviderClusterResourceId,
    desiredSource: request.desired === undefined ? ("clusterDocument" as const) : ("inputs" as const),
  };
  const idle = { skippedReason: undefined, workReason: undefined, msiWorkReason: undefined, wrote: false, writeAttempts: 0, lookups: 0, failures: [] };
  if (read.kind === "deleting") {
    const document = read.stored?.document;
    const status = document === undefined ? {} : dataPlaneHalf.read(document).status;
    const msiStatus = document === undefined ? {} : msiHalf.read(document).status;
    const serviceManagedIdentity = request.desired === undefined ? read.fromCluster.serviceManagedIdentity : undefined;
    return { ...base, ...idle, serviceManagedIdentity, status, msiStatus, skippedReason: "clusterDeleting", msiSkippedReason: undefined };
  }
  const { fromCluster, stored } = read;
  const serviceManagedIdentity = request.desired === undefined ? fromCluster.serviceManagedIdentity : undefined;

  // 3. Decide each half against what is stored.
  const { storedStatus, storedMsi, dataPlane, msi } = planHalves(fromCluster, request, stored.document, dependencies.now(), dependencies.msiAnswers?.standIn);
  const msiSkippedReason = msi.kind === "skipped" ? msi.reason : undefined;
  if (dataPlane.kind !== "work" && msi.kind !== "work") {
    if (msi.kind === "unreadable" || msi.kind === "refused") throw msiPlanError(location, msi);
    return { ...base, ...idle, serviceManagedIdentity, status: storedStatus.status, msiStatus: storedMsi.status, msiSkippedReason };
  }

  // 4. Ask Azure what the decisions need, both halves at once.
  const [dataPlaneAnswer, msiAnswer] = await Promise.all([
    dataPlane.kind === "work"
      ? askDataPlane(
          dependencies,
          dataPlane.desired.map((identity) => identity.resourceId),
          { request: credentialRequestOf(request.cluster, fromCluster), declared },
          location,
        )
      : undefined,
    msi.kind === "work" && fromCluster.identityUrl !== undefined ? askMsi(dependencies, msi.desired, fromCluster.identityUrl, location) : undefined,
  ]);

  // 5. Write once: each half decided again against every document the write reads.
  const decisions: PassDecisions = { dataPlane, dataPlaneAnswer, basis: storedStatus.status, msi, msiAnswer };
  const written = await writeStatus(
    dependencies,
    location,
    stored,
    (document, reread) =>
      decideHalves(decisions, document, reread, {
        now: dependencies.now(),
        random: dependencies.random,
        idsOnLookupFailure: dependencies.options.idsOnLookupFailure,
        standIn: dependencies.msiAnswers?.standIn,
      }),
    (clusterDocument) => clusterDocument !== undefined && JSON.stringify(desiredFromClusterDocument(clusterDocument)) === JSON.stringify(fromCluster),
  );

  // 6. Report.
  const result = {
    ...base,
    serviceManagedIdentity,
    status: written.written.dataPlane ?? dataPlaneHalf.read(written.document).status,
    msiStatus: written.written.msi ?? msiHalf.read(written.document).status,
    skippedReason: undefined,
    msiSkippedReason,
    workReason: dataPlane.kind === "work" ? dataPlane.reason : undefined,
    msiWorkReason: msi.kind === "work" ? msi.reason : undefined,
    wrote: written.wrote,
    halvesWritten: { dataPlane: written.written.dataPlane !== undefined, msi: written.written.msi !== undefined },
    writeAttempts: written.writeAttempts,
    lookups: dataPlane.kind === "work" ? dataPlane.desired.length : 0,
  };
  return reportPass(location, result, decisions, written.written);
}

/** The result attached to an error thrown by a pass after it wrote (or recorded failed identities). */
export function partialResultOf(error: unknown): SyncResult | undefined {
  const result = (error as { result?: SyncResult } | undefined)?.result;
  return typeof result === "object" && result !== null ? result : undefined;
}
