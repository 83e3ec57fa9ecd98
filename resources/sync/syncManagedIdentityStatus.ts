/**
 * One sync pass over both halves of a cluster's identity status: upstream's two SyncOnce
 * controllers, FetchDataPlaneOperatorsManagedIdentitiesInfo (dataPlaneHalf.ts) and
 * FetchMSIIdentitiesInfo (msiHalf.ts), with their gaps closed. The halves read the same documents
 * and are written together, but decided on their own: one half's failure never keeps the other's
 * answer from being written.
 *
 * 1. Read the cluster's HCPOpenShiftCluster document on every pass (a point read, waiting a
 *    bounded time for it; absent or soft-deleted → fail naming it, nothing written). A cluster
 *    with a deletion timestamp is skipped: nothing is read from Azure and nothing is written.
 * 2. Read the ServiceProviderCluster document, waiting a bounded time for it; never create it.
 *    A document that is not a ServiceProviderCluster is refused (nothing written).
 *    Its first read starts together with step 1's (one Cosmos round trip per pass instead of
 *    two), yet step 1 decides first: its failure is the one reported, and a deleting cluster does
 *    not wait for this document. When step 1 had to wait, that early read is stale and is not used.
 * 3. Plan each half against its stored subtree (its gate); a half with no work makes no call.
 * 4. Resolve the halves that have work at the same time: the data plane operators' lookups
 *    through ARM, the MSI half's one answer.
 * 5. Write once, with If-Match, the halves whose decision differs semantically from what is
 *    stored; nothing at all when neither does. On 412, re-read both documents and decide each half
 *    again, a bounded number of times; when the cluster document changed meanwhile, the pass
 *    starts over from step 1 (the same bound counts the passes).
 * 6. After persisting, throw what failed: the data plane half's error first (a
 *    {@link UserAssignedIdentityReadError} for identities that failed), the MSI half's after it,
 *    with the pass's result attached when anything was written.
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import type { ClusterDesiredSet } from "../core/clusterDocument";
import { desiredFromClusterDocument } from "../core/clusterDocument";
import type { IdentityLookupFailure } from "../core/errors";
import { UserAssignedIdentityReadError } from "../core/errors";
import type { DesiredIdentity, WorkReason } from "../core/identityStatus";
import { isFailedRetrievalError } from "../core/identityStatus";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { readStoredStatus } from "../core/serviceProviderClusterDocument";
import type { MsiManagedIdentities } from "../core/msiManagedIdentities";
import { readStoredMsiStatus } from "../core/msiManagedIdentities";
import type { MsiWorkReason } from "../core/msiDecision";
import type { DocumentLocation } from "../core/documentLocation";
import { locate } from "../core/documentLocation";
import { clusterDocumentDescription, readLive, serviceProviderClusterDescription, startReadLive, waitForServiceProviderCluster } from "./documentReads";
import { waitForClusterDocument } from "./documentAbsence";
import { ClusterDocumentChangedError, writeStatus } from "./statusWrite";
import { log } from "../logging/logger";
import { refuseDisagreeingInputs } from "./clusterLookups";
import type { DataPlaneDecide } from "./dataPlaneHalf";
import { dataPlaneRefusal, planDataPlaneHalf, resolveDataPlaneHalf } from "./dataPlaneHalf";
import type { MsiDecide } from "./msiHalf";
import { msiPlanError, planMsiHalf, resolveMsiHalf } from "./msiHalf";
import { withMsiWritten } from "../core/clusterMessage";
import type { SyncDependencies } from "./syncDependencies";

/** What to reconcile. */
export interface SyncRequest {
  readonly cluster: ParsedResourceId;
  /** The desired set; `undefined` reads it from the cluster document, as upstream does. */
  readonly desired: readonly DesiredIdentity[] | undefined;
  /** Skip the data plane operators' recheck gate (drift was detected in that half, or the state is unknown). */
  readonly force: boolean;
  /** Skip the MSI half's recheck gate (drift was detected in that half, or the state is unknown). */
  readonly forceMsi?: boolean;
  /** The service managed identity and identity URL the inputs declare: they must agree with the cluster document's. */
  readonly serviceManagedIdentity?: string;
  readonly identityUrl?: string;
}

/** What a pass found and did. */
export interface SyncResult {
  readonly documentId: string;
  readonly partitionKey: string;
  readonly serviceProviderClusterResourceId: string;
  readonly desiredSource: "inputs" | "clusterDocument";
  readonly serviceManagedIdentity: string | undefined;
  /** The subtree as persisted after the pass. */
  readonly status: DataPlaneOperatorsManagedIdentities;
  readonly skippedReason: "clusterDeleting" | undefined;
  /** Why Azure was consulted; undefined when the gate skipped it. */
  readonly workReason: WorkReason | "forced" | "storedStatusMalformed" | undefined;
  readonly wrote: boolean;
  readonly writeAttempts: number;
  readonly lookups: number;
  readonly failures: readonly IdentityLookupFailure[];
  /** `status.msiManagedIdentities` as persisted after the pass. */
  readonly msiStatus: MsiManagedIdentities;
  /** Why the MSI half was not looked at: its cluster has no identity URL yet (upstream skips it too). */
  readonly msiSkippedReason: "identityUrlNotSet" | undefined;
  /** Why the MSI half asked for an answer; undefined when its gate skipped it. */
  readonly msiWorkReason: MsiWorkReason | "forced" | "storedStatusMalformed" | undefined;
  /** Which halves the pass wrote (the run report's per-half outcome); absent when it wrote nothing. */
  readonly halvesWritten?: { readonly dataPlane: boolean; readonly msi: boolean };
}

/** Runs one pass, started over when the cluster document changes under its write. See the module comment for the steps and their outcomes. */
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
  const location = locate(request.cluster);
  // Both point reads go out at once (step 2 of the module comment); each is awaited only when its
  // step comes, so the cluster document's verdict still comes first.
  const serviceProviderClusterRead = startReadLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location));
  const { fromCluster, waited } = await readClusterDocumentOf(dependencies, location);
  // Read again after a wait for the cluster document: the early read predates that wait.
  const firstServiceProviderClusterRead = waited ? undefined : serviceProviderClusterRead;
  const base = {
    documentId: location.documentId,
    partitionKey: location.partitionKey,
    serviceProviderClusterResourceId: location.serviceProviderClusterResourceId,
    desiredSource: request.desired === undefined ? ("clusterDocument" as const) : ("inputs" as const),
    serviceManagedIdentity: request.desired === undefined ? fromCluster.serviceManagedIdentity : undefined,
  };
  const idle = { workReason: undefined, msiWorkReason: undefined, wrote: false, writeAttempts: 0, lookups: 0, failures: [] };

  if (fromCluster.kind === "deleting") {
    // A soft-deleted ServiceProviderCluster reads as absent, as upstream's listers treat it.
    const existing = await (firstServiceProviderClusterRead ??
      readLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location)));
    const status = existing === undefined ? {} : readStoredStatus(existing.document).status;
    const msiStatus = existing === undefined ? {} : readStoredMsiStatus(existing.document).status;
    return { ...base, ...idle, status, msiStatus, skippedReason: "clusterDeleting", msiSkippedReason: undefined };
  }

  // A cluster document that cannot name its data plane operators, or inputs that name another set,
  // fail the whole pass here, before the ServiceProviderCluster document is waited for.
  const refusal = dataPlaneRefusal(fromCluster, request.desired, location);
  if (refusal !== undefined) throw refusal;
  refuseDisagreeingInputs(
    dependencies,
    { cluster: request.cluster, serviceManagedIdentity: fromCluster.serviceManagedIdentity, identityUrl: fromCluster.identityUrl },
    { serviceManagedIdentity: request.serviceManagedIdentity, identityUrl: request.identityUrl },
  );
  const stored = await waitForServiceProviderCluster(dependencies, location, firstServiceProviderClusterRead);
  const storedStatus = readStoredStatus(stored.document);
  const storedMsi = readStoredMsiStatus(stored.document);
  const now = dependencies.now();
  const dataPlane = planDataPlaneHalf(fromCluster as Extract<ClusterDesiredSet, { kind: "desired" }>, request.desired, storedStatus, now, request.force);
  const msi = planMsiHalf(fromCluster, storedMsi, now, request.forceMsi === true, dependencies.msiAnswers?.standIn);
  const msiSkippedReason = msi.kind === "skipped" ? msi.reason : undefined;
  if (dataPlane.kind !== "work" && msi.kind !== "work") {
    if (msi.kind === "unreadable" || msi.kind === "refused") throw msiPlanError(location, msi);
    // No Azure call and nothing written.
    return { ...base, ...idle, status: storedStatus.status, msiStatus: storedMsi.status, skippedReason: undefined, msiSkippedReason };
  }

  // Both halves at once: the data plane operators' lookups and the MSI half's one answer.
  const [dataPlaneResolved, msiResolved] = await Promise.all([
    dataPlane.kind === "work"
      ? resolveDataPlaneHalf(dependencies, dataPlane, {
          cluster: request.cluster,
          fromCluster,
          declared: { serviceManagedIdentity: request.serviceManagedIdentity, identityUrl: request.identityUrl },
          location,
          basis: storedStatus.status,
        })
      : undefined,
    msi.kind === "work" ? resolveMsiHalf(dependencies, msi, location) : undefined,
  ]);
  const decideDataPlane: DataPlaneDecide | undefined = dataPlaneResolved !== undefined && "decide" in dataPlaneResolved ? dataPlaneResolved.decide : undefined;
  const decideMsi: MsiDecide | undefined = msiResolved !== undefined && "decide" in msiResolved ? msiResolved.decide : undefined;
  const written = await writeStatus(
    dependencies,
    location,
    stored,
    (document, reread) => ({ dataPlane: decideDataPlane?.(document, reread), msi: decideMsi?.(document, reread) }),
    (clusterDocument) => clusterDocument !== undefined && sameRequest(desiredFromClusterDocument(clusterDocument), fromCluster),
  );
  const status = written.written.dataPlane ?? readStoredStatus(written.document).status;
  const msiStatus = written.written.msi ?? readStoredMsiStatus(written.document).status;
  // A failure is reported only while the persisted status still records one for that identity:
  // after a conflict, the other writer may have just recorded a fresh answer for it.
  const failures: IdentityLookupFailure[] = (dataPlaneResolved !== undefined && "failed" in dataPlaneResolved ? dataPlaneResolved.failed : [])
    .filter(({ key }) => isFailedRetrievalError(status.identities?.[key]?.retrievalError))
    .map(({ failure }) => failure);
  const result: SyncResult = {
    ...base,
    status,
    msiStatus,
    skippedReason: undefined,
    msiSkippedReason,
    workReason: dataPlane.kind === "work" ? dataPlane.reason : undefined,
    msiWorkReason: msi.kind === "work" ? msi.reason : undefined,
    wrote: written.wrote,
    halvesWritten: { dataPlane: written.written.dataPlane !== undefined, msi: written.written.msi !== undefined },
    writeAttempts: written.writeAttempts,
    lookups: dataPlane.kind === "work" ? dataPlane.desired.length : 0,
    failures,
  };
  const dataPlaneError =
    dataPlaneResolved !== undefined && "error" in dataPlaneResolved
      ? dataPlaneResolved.error
      : failures.length > 0
        ? new UserAssignedIdentityReadError({
            documentId: location.documentId,
            clusterName: location.clusterName,
            failures,
            persisted: true,
            total: result.lookups,
            status,
          })
        : undefined;
  const msiError =
    msi.kind === "unreadable" || msi.kind === "refused"
      ? msiPlanError(location, msi)
      : msiResolved !== undefined && "error" in msiResolved
        ? msiResolved.error
        : undefined;
  const error = dataPlaneError ?? msiError;
  if (error === undefined) return result;
  if (dataPlaneError !== undefined && msiError !== undefined) error.message += `\nand: ${msiError.message}`;
  else if (dataPlaneError !== undefined && written.written.msi !== undefined) error.message = withMsiWritten(error.message);
  else if (msiError !== undefined && written.written.dataPlane !== undefined) error.message += " (status.dataPlaneOperatorsManagedIdentities was written)";
  // The provider records the result in state when anything was written, or when identities failed.
  throw written.wrote || failures.length > 0 ? Object.assign(error, { result }) : error;
}

/** Whether a cluster document read again asks what the pass answered: the same verdict, set, credential and identity URL. */
function sameRequest(now: ClusterDesiredSet, asRead: ClusterDesiredSet): boolean {
  return JSON.stringify(now) === JSON.stringify(asRead);
}

/** The result attached to an error thrown by a pass after it wrote (or recorded failed identities). */
export function partialResultOf(error: unknown): SyncResult | undefined {
  const result = (error as { result?: SyncResult } | undefined)?.result;
  return typeof result === "object" && result !== null ? result : undefined;
}

/**
 * Waits (bounded) for the cluster's HCPOpenShiftCluster document and reads what it asks for;
 * `waited` says whether it was missing at the first read.
 */
async function readClusterDocumentOf(dependencies: SyncDependencies, location: DocumentLocation): Promise<{ fromCluster: ClusterDesiredSet; waited: boolean }> {
  const description = clusterDocumentDescription(location);
  const firstRead = startReadLive(dependencies, location.partitionKey, location.clusterDocumentId, description);
  const stored = await waitForClusterDocument(dependencies, location, description, firstRead);
  // Settled by now: waitForDocument awaited it as its first poll (and threw had it failed).
  const waited = (await firstRead) === undefined;
  return { fromCluster: desiredFromClusterDocument(stored.document), waited };
}
