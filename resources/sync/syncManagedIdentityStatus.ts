/**
 * One sync pass over both halves, upstream's two SyncOnce controllers in one: locate, read the
 * documents, decide each half (core/), ask Azure what the decisions need, write once with If-Match
 * (starting over when the cluster document changed), report. The halves are decided on their own:
 * one half's failure never keeps the other's answer from being written.
 */
import { ClusterCredentialError } from "../azure/clusterCredentials";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import type { ClusterCredentialFields, LiveClusterDesiredSet } from "../core/clusterDocument";
import { clusterDocumentLabel, clusterMessage, serviceProviderClusterDocumentLabel } from "../core/clusterMessage";
import type { DocumentLocation } from "../core/documentLocation";
import { locate } from "../core/documentLocation";
import { CosmosDocumentError, nothingWrittenError } from "../core/errors";
import { cosmosStatusCode, describeCosmosError } from "../core/errorClassification";
import { goToLower } from "../core/goStrings";
import type { JsonObject } from "../core/json";
import { msiHalf, msiPlanError } from "../core/msiManagedIdentities";
import type { PassDecisions, SyncRequest, SyncResult } from "../core/passDecision";
import { decideHalves, planHalves, reportPass } from "../core/passDecision";
import { withoutFinalPeriod } from "../core/retrievalError";
import type { StatusHalves } from "../core/serviceProviderClusterDocument";
import { dataPlaneHalf, identityStatusPatchOperations } from "../core/serviceProviderClusterDocument";
import { dataPlaneRefusal } from "../core/statusDecision";
import type { StoredDocument } from "../cosmos/documentStore";
import { log } from "../logging/logger";
import { askAzure } from "./azureAnswers";
import { readClusterDesiredSet, readPassDocuments, readServiceProviderCluster } from "./documents";
import type { SyncDependencies } from "./syncDependencies";
import { msiOverwriteGuard } from "./syncDependencies";

export type { SyncRequest, SyncResult } from "../core/passDecision";

/** The cluster document changed between the pass's read and a conflict on its write: the pass starts over. */
class ClusterDocumentChangedError extends CosmosDocumentError {}

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

/**
 * The one write: a status patch, always with If-Match (never a whole-document replace), of the halves
 * decided against the document; on 412 both documents are read again and, while the cluster document
 * still says what the pass read (`fromCluster`), the halves decided again.
 */
async function writeStatus(
  dependencies: SyncDependencies,
  location: DocumentLocation,
  initial: StoredDocument,
  decisions: PassDecisions,
  fromCluster: LiveClusterDesiredSet,
): Promise<{ readonly document: JsonObject; readonly halves: StatusHalves; readonly wrote: boolean; readonly writeAttempts: number }> {
  let current = initial;
  for (let attempt = 1; ; attempt += 1) {
    const halves = decideHalves(decisions, current.document, attempt > 1, {
      now: dependencies.now(),
      random: dependencies.random,
      idsOnLookupFailure: dependencies.options.idsOnLookupFailure,
      guard: msiOverwriteGuard(dependencies),
    });
    if (halves.dataPlane === undefined && halves.msi === undefined) return { document: current.document, halves: {}, wrote: false, writeAttempts: attempt - 1 };
    const operations = identityStatusPatchOperations(current.document, halves, current.etag);
    try {
      await dependencies.documentStore.patchDocument(location.partitionKey, location.documentId, operations, current.etag);
      log("info", "write", location.documentId, `status written (attempt ${attempt})`);
      return { document: current.document, halves, wrote: true, writeAttempts: attempt };
    } catch (error) {
      const statusCode = cosmosStatusCode(error);
      if (statusCode !== 412 || attempt >= dependencies.options.maxWriteAttempts) {
        const exhausted = statusCode === 412 ? ` after ${attempt} attempts (the document kept changing between read and write)` : "";
        // A 404: deleted between our read and our write (Cosmos answers the patch with an empty 404 body).
        const cause =
          statusCode === 404
            ? "the ServiceProviderCluster document was deleted while the status was being written (NotFound, HTTP 404)"
            : `${withoutFinalPeriod(describeCosmosError(error))}${exhausted}, writing the ServiceProviderCluster document`;
        throw writeFailure(location, cause, statusCode, error);
      }
      // Another writer changed the document: back off briefly, re-read and merge onto the new version.
      log("warning", "write", location.documentId, `HTTP 412 on attempt ${attempt}: another writer changed the document; re-reading`);
      await dependencies.sleep(Math.round((10 + dependencies.random() * 40) * attempt));
      const [reread, nowFromCluster] = await Promise.all([readServiceProviderCluster(dependencies, location), readClusterDesiredSet(dependencies, location)]);
      if (nowFromCluster === undefined || JSON.stringify(nowFromCluster) !== JSON.stringify(fromCluster)) {
        throw new ClusterDocumentChangedError({
          documentId: location.clusterDocumentId,
          statusCode: 412,
          message: clusterMessage({
            cause: "the cluster's HCPOpenShiftCluster document changed while the status was being written",
            clusterName: location.clusterName,
            outcome: "nothing was written",
            reference: clusterDocumentLabel(location.clusterDocumentId),
          }),
        });
      }
      if (reread === undefined) throw writeFailure(location, "the ServiceProviderCluster document was deleted while the status was being written", 404);
      current = reread;
    }
  }
}

function writeFailure(location: DocumentLocation, cause: string, statusCode: number | undefined, error?: unknown): CosmosDocumentError {
  const reference = serviceProviderClusterDocumentLabel(location.documentId);
  return nothingWrittenError(location.documentId, { cause, clusterName: location.clusterName, reference }, { statusCode, cause: error });
}

/** The result attached to an error thrown by a pass after it wrote (or recorded failed identities). */
export function partialResultOf(error: unknown): SyncResult | undefined {
  const result = (error as { result?: SyncResult } | undefined)?.result;
  return typeof result === "object" && result !== null ? result : undefined;
}
