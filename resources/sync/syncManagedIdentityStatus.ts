/**
 * One sync pass: the TypeScript counterpart of upstream's SyncOnce, with its gaps closed.
 *
 * 1. Read the cluster's HCPOpenShiftCluster document on every pass (a point read, waiting a
 *    bounded time for it; absent or soft-deleted → fail naming it, nothing written). A cluster
 *    with a deletion timestamp is skipped: nothing is read from Azure and nothing is written.
 *    Desired set: that document's (an absent map is the empty set, as upstream reads it); a
 *    request naming another set, or a set the document cannot name, fails here, nothing written.
 * 2. Read the ServiceProviderCluster document, waiting a bounded time for it; never create it.
 *    A document that is not a ServiceProviderCluster is refused (nothing written).
 *    Its first read starts together with step 1's (one Cosmos round trip per pass instead of
 *    two), yet step 1 decides first: its failure is the one reported, and a deleting cluster does
 *    not wait for this document. When step 1 had to wait, that early read is stale and is not used.
 * 3. Gate: unless forced, skip Azure when the stored key set equals the desired set, the recheck
 *    time is in the future and no entry records a real failure (NotFound is data and waits for
 *    the recheck time, see workReason).
 * 4. Look up every desired identity with bounded concurrency, in key order, each with a timeout
 *    that starts when its first attempt gets a slot.
 *    A failure not about one identity (credential, ARM 401, ARM unreachable: errors.ts) ends the
 *    pass here with {@link AzureAccessError}: nothing is written, stored IDs stay as they were.
 *    NotFound → entry without IDs plus retrievalError (not a failure). Any other error → entry
 *    without IDs plus retrievalError, collected as a failure. 200 without properties → a failure
 *    for that identity only. An empty desired set makes no Azure call.
 * 5. Recheck time = now + 12 h (+ up to 50 % jitter) when nothing failed; unset otherwise.
 * 6. Write only when the subtree differs semantically, as a patch of the owned subtree plus
 *    upstream's bookkeeping, with If-Match. On 412, re-read and retry a bounded number of times.
 *    A create also writes its claim (core/statusClaim.ts), alone when nothing else changes.
 * 7. After persisting, throw {@link UserAssignedIdentityReadError} if any lookup failed.
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import type { ClusterDesiredSet } from "../core/clusterDocument";
import { desiredFromClusterDocument } from "../core/clusterDocument";
import type { IdentityLookupFailure } from "../core/errors";
import { AzureAccessError } from "../core/azureAccessError";
import { CosmosDocumentError, UserAssignedIdentityReadError } from "../core/errors";
import type { DesiredIdentity, IdentityLookupOutcome, WorkReason } from "../core/identityStatus";
import { isFailedRetrievalError, workReason } from "../core/identityStatus";
import type { DecidedOutcome } from "../core/statusDecision";
import { decideStatus, sharedTransientFailure } from "../core/statusDecision";
import { lookUpIdentity } from "./lookUpIdentity";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { readStoredStatus } from "../core/serviceProviderClusterDocument";
import type { DocumentLocation } from "../core/documentLocation";
import { locate } from "../core/documentLocation";
import { readLive, serviceProviderClusterDescription, startReadLive, waitForServiceProviderCluster } from "./documentReads";
import { waitForClusterDocument } from "./documentAbsence";
import { writeStatus } from "./statusWrite";
import { lookupDependenciesFor } from "./clusterLookups";
import { desiredSetDisagreement } from "../core/desiredSetDisagreement";
import type { SyncDependencies } from "./syncDependencies";

/** What to reconcile. */
export interface SyncRequest {
  readonly cluster: ParsedResourceId;
  /** The desired set; `undefined` reads it from the cluster document, as upstream does. */
  readonly desired: readonly DesiredIdentity[] | undefined;
  /** Skip the recheck gate (drift was detected). */
  readonly force: boolean;
  /** The service managed identity and identity URL the inputs declare; the cluster document's otherwise. */
  readonly serviceManagedIdentity?: string;
  readonly identityUrl?: string;
  /** A create's claim (core/statusClaim.ts): written even when nothing else is, so an older resource's delete keeps the subtree. */
  readonly claim?: string;
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
}

/** Runs one pass. See the module comment for the steps and their outcomes. */
export async function syncManagedIdentityStatus(dependencies: SyncDependencies, request: SyncRequest): Promise<SyncResult> {
  const location = locate(request.cluster);
  // Both point reads go out at once (step 2 of the module comment); each is awaited only when its
  // step comes, so the cluster document's verdict still comes first.
  const serviceProviderClusterRead = startReadLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location));
  // Every pass reads the cluster document (one point read, no Azure call): it gates the pass even
  // when the desired set comes from the inputs.
  const { fromCluster, waited } = await readClusterDocumentOf(dependencies, request.cluster, location);
  // Read again after a wait for the cluster document: the early read predates that wait.
  const firstServiceProviderClusterRead = waited ? undefined : serviceProviderClusterRead;
  const base = {
    documentId: location.documentId,
    partitionKey: location.partitionKey,
    serviceProviderClusterResourceId: location.serviceProviderClusterResourceId,
    desiredSource: request.desired === undefined ? ("clusterDocument" as const) : ("inputs" as const),
    serviceManagedIdentity: request.desired === undefined ? fromCluster.serviceManagedIdentity : undefined,
  };

  if (fromCluster.kind === "deleting") {
    // A soft-deleted ServiceProviderCluster reads as absent, as upstream's listers treat it.
    const existing = await (firstServiceProviderClusterRead ??
      readLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location)));
    const status = existing === undefined ? {} : readStoredStatus(existing.document).status;
    return { ...base, status, skippedReason: "clusterDeleting", workReason: undefined, wrote: false, writeAttempts: 0, lookups: 0, failures: [] };
  }
  if (fromCluster.kind === "unreadable") {
    // The document is the authority on the set, also when the inputs name one: nothing to check them against.
    throw new CosmosDocumentError({
      documentId: location.clusterDocumentId,
      message: `cannot read the desired identities from HCPOpenShiftCluster document ${location.clusterDocumentId}; nothing was written:\n  - ${fromCluster.problems.join("\n  - ")}`,
    });
  }
  // Inputs that name another set than the document fail here, before any Azure call or write
  // (core/desiredSetDisagreement.ts); the document's own set is the one upstream's controller writes.
  const disagreement =
    request.desired === undefined
      ? undefined
      : desiredSetDisagreement(request.desired, fromCluster.identities, location.clusterDocumentId, clusterDocumentDescription(request.cluster, location));
  if (disagreement !== undefined) {
    throw disagreement;
  }
  const desired = request.desired ?? fromCluster.identities;

  const stored = await waitForServiceProviderCluster(dependencies, location, firstServiceProviderClusterRead);
  const storedStatus = readStoredStatus(stored.document);
  const reason = request.force
    ? ("forced" as const)
    : storedStatus.problems.length > 0
      ? ("storedStatusMalformed" as const)
      : workReason(desired, storedStatus.status, dependencies.now());
  const claim = request.claim === undefined ? undefined : { set: request.claim };
  if (reason === undefined) {
    // No Azure call; a create still takes the subtree over (its claim alone).
    const unwritten = { status: storedStatus.status, wrote: false, writeAttempts: 0 };
    const { status, wrote, writeAttempts } = claim === undefined ? unwritten : await writeStatus(dependencies, location, stored, () => undefined, claim);
    return { ...base, status, skippedReason: undefined, workReason: undefined, wrote, writeAttempts, lookups: 0, failures: [] };
  }

  // The credential of this cluster's lookups (sync/clusterLookups.ts): the process's own, or the
  // cluster's service managed identity's, asked for only now that the gate says there is work.
  const lookups = await lookupDependenciesFor(
    dependencies,
    {
      cluster: request.cluster,
      serviceManagedIdentity: request.serviceManagedIdentity ?? fromCluster.serviceManagedIdentity,
      identityUrl: request.identityUrl ?? fromCluster.identityUrl,
    },
    location.documentId,
  );
  const outcomes = await lookUpAll(lookups, desired);
  const globalFailure = outcomes.find((outcome): outcome is Extract<IdentityLookupOutcome, { kind: "global" }> => outcome.kind === "global");
  if (globalFailure !== undefined) {
    // Before any write: one expired credential must not blank every cluster of the fleet.
    throw new AzureAccessError({ documentId: location.documentId, error: globalFailure.error, credential: lookups.credentialDescription });
  }
  const decided = outcomes as DecidedOutcome[];
  const idsOnLookupFailure = dependencies.options.idsOnLookupFailure;
  const shared = idsOnLookupFailure === "keep" ? sharedTransientFailure(decided) : undefined;
  if (shared !== undefined) {
    // Every lookup failed the same transient way (an ARM brownout, a hanging proxy): that says
    // nothing about any one identity, so nothing is written and the next pass tries again.
    throw new AzureAccessError({
      documentId: location.documentId,
      error: shared.error,
      credential: lookups.credentialDescription,
      everyLookup: { failureClass: shared.failureClass, count: decided.length },
    });
  }
  const failed = desired.flatMap((identity, index) => {
    const outcome = decided[index];
    return outcome.kind === "failed" ? [{ key: identity.key, failure: { resourceId: identity.resourceId, error: outcome.error } }] : [];
  });

  const basis = storedStatus.status;
  const { status, wrote, writeAttempts } = await writeStatus(
    dependencies,
    location,
    stored,
    (storedNow, reread) =>
      decideStatus({
        desired,
        outcomes: decided,
        basis,
        current: storedNow,
        reread,
        now: dependencies.now(),
        random: dependencies.random,
        idsOnLookupFailure,
        credentialScope: lookups.credentialScope ?? "process",
      }),
    claim,
  );
  // A failure is reported only while the persisted status still records one for that identity:
  // after a conflict, the other writer may have just recorded a fresh answer for it.
  const failures: IdentityLookupFailure[] = failed
    .filter(({ key }) => isFailedRetrievalError(status.identities?.[key]?.retrievalError))
    .map(({ failure }) => failure);
  const result: SyncResult = {
    ...base,
    status,
    skippedReason: undefined,
    workReason: reason,
    wrote,
    writeAttempts,
    lookups: desired.length,
    failures,
  };
  if (failures.length > 0) {
    const error = new UserAssignedIdentityReadError({ documentId: location.documentId, failures, persisted: true, total: desired.length, status });
    throw Object.assign(error, { result });
  }
  return result;
}

/** The partial result attached to a {@link UserAssignedIdentityReadError} thrown by a pass. */
export function partialResultOf(error: unknown): SyncResult | undefined {
  const result = (error as { result?: SyncResult } | undefined)?.result;
  return typeof result === "object" && result !== null ? result : undefined;
}

async function lookUpAll(dependencies: SyncDependencies, desired: readonly DesiredIdentity[]): Promise<IdentityLookupOutcome[]> {
  // Started in key order; the limiter is first-in, first-out, so requests go out in that order.
  return Promise.all(desired.map((identity) => lookUpIdentity(dependencies, identity.resourceId)));
}

/**
 * Waits (bounded) for the cluster's HCPOpenShiftCluster document and reads what it asks for;
 * `waited` says whether it was missing at the first read.
 */
async function readClusterDocumentOf(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  location: DocumentLocation,
): Promise<{ fromCluster: ClusterDesiredSet; waited: boolean }> {
  const description = clusterDocumentDescription(cluster, location);
  const firstRead = startReadLive(dependencies, location.partitionKey, location.clusterDocumentId, description);
  const stored = await waitForClusterDocument(dependencies, location, description, firstRead);
  // Settled by now: waitForDocument awaited it as its first poll (and threw had it failed).
  const waited = (await firstRead) === undefined;
  return { fromCluster: desiredFromClusterDocument(stored.document), waited };
}

/** How messages name the cluster's HCPOpenShiftCluster document. */
function clusterDocumentDescription(cluster: ParsedResourceId, location: DocumentLocation): string {
  return `HCPOpenShiftCluster document ${location.clusterDocumentId} (${cluster.canonical})`;
}
