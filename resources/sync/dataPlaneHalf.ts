/**
 * The data plane operators' half of a pass: upstream's FetchDataPlaneOperatorsManagedIdentitiesInfo
 * with its gaps closed (core/statusDecision.ts has the rules on stored IDs).
 *
 * - Desired set: the cluster document's (an absent map is the empty set, as upstream reads it); a
 *   request that names another set fails this half, naming both, with nothing read from Azure or
 *   written. A document whose set cannot be read fails this half as well.
 * - Gate: unless forced, no Azure call while the stored key set equals the desired set, the
 *   recheck time is in the future and no entry records a real failure (NotFound is data and waits
 *   for the recheck time, see workReason).
 * - Lookups: every desired identity, with bounded concurrency, in key order, each with a timeout
 *   that starts when its first attempt gets a slot, as the cluster's own credential where the mode
 *   says so (clusterLookups.ts). A failure not about one identity (credential, ARM 401, ARM
 *   unreachable: errors.ts), or every lookup failing the same transient way, is
 *   {@link AzureAccessError}: this half writes nothing. NotFound → an entry without IDs plus
 *   retrievalError (not a failure); any other error → a failure recorded beside the kept IDs.
 */
import type { ClusterDesiredSet } from "../core/clusterDocument";
import { AzureAccessError } from "../core/azureAccessError";
import { clusterMessage } from "../core/clusterMessage";
import type { IdentityLookupFailure } from "../core/errors";
import { CosmosDocumentError } from "../core/errors";
import type { DesiredIdentity, IdentityLookupOutcome, WorkReason } from "../core/identityStatus";
import type { JsonObject } from "../core/json";
import type { DataPlaneOperatorsManagedIdentities, StoredStatus } from "../core/serviceProviderClusterDocument";
import type { DecidedOutcome } from "../core/statusDecision";
import { decideStatus, sharedTransientFailure } from "../core/statusDecision";
import type { DocumentLocation } from "../core/documentLocation";
import { desiredSetDisagreement } from "../core/desiredSetDisagreement";
import type { DeclaredCredential } from "./clusterLookups";
import { lookupDependenciesFor } from "./clusterLookups";
import { lookUpIdentity } from "./lookUpIdentity";
import type { ParsedResourceId } from "../core/azureResourceId";
import type { SyncDependencies } from "./syncDependencies";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";

/** What the data plane operators' half has to do in a pass. */
export type DataPlanePlan =
  | { readonly kind: "current"; readonly desired: readonly DesiredIdentity[] }
  | { readonly kind: "work"; readonly reason: WorkReason | "forced" | "storedStatusMalformed"; readonly desired: readonly DesiredIdentity[] };

/**
 * Why the pass cannot go on at all: a cluster document whose set cannot be read (the document is
 * the authority on the set, also when the inputs name one: nothing to check them against), or
 * inputs that name another set than the document (core/desiredSetDisagreement.ts; the document's
 * own set is the one upstream's controller writes). Undefined when neither.
 */
export function dataPlaneRefusal(
  fromCluster: Exclude<ClusterDesiredSet, { kind: "deleting" }>,
  requested: readonly DesiredIdentity[] | undefined,
  location: DocumentLocation,
): Error | undefined {
  if (fromCluster.kind === "unreadable") {
    return new CosmosDocumentError({
      documentId: location.clusterDocumentId,
      message: clusterMessage({
        cause: "the cluster's HCPOpenShiftCluster document does not name its data plane operator identities in a form upstream writes",
        clusterName: location.clusterName,
        outcome: "nothing was written",
        reference: `HCPOpenShiftCluster document ${location.clusterDocumentId}`,
        details: fromCluster.problems,
      }),
    });
  }
  return requested === undefined ? undefined : desiredSetDisagreement(requested, fromCluster.identities, location.clusterDocumentId, location.clusterName);
}

/** Plans the half from the cluster document's set (or the agreeing request's) and the stored subtree. */
export function planDataPlaneHalf(
  fromCluster: Extract<ClusterDesiredSet, { kind: "desired" }>,
  requested: readonly DesiredIdentity[] | undefined,
  stored: StoredStatus,
  now: Date,
  force: boolean,
): DataPlanePlan {
  const desired = requested ?? fromCluster.identities;
  const reason = force
    ? ("forced" as const)
    : stored.problems.length > 0
      ? ("storedStatusMalformed" as const)
      : dataPlaneHalf.workReason(desired, stored.status, now);
  return reason === undefined ? { kind: "current", desired } : { kind: "work", reason, desired };
}

/** The decision of a half with outcomes, made again against each document the write reads. */
export type DataPlaneDecide = (document: JsonObject, reread: boolean) => DataPlaneOperatorsManagedIdentities | undefined;

/** Looks every desired identity up and turns the outcomes into the decision, or into the error that says why this half writes nothing. */
export async function resolveDataPlaneHalf(
  dependencies: SyncDependencies,
  plan: Extract<DataPlanePlan, { kind: "work" }>,
  context: {
    readonly cluster: ParsedResourceId;
    readonly fromCluster: Exclude<ClusterDesiredSet, { kind: "deleting" }>;
    readonly declared: DeclaredCredential;
    readonly location: DocumentLocation;
    readonly basis: DataPlaneOperatorsManagedIdentities;
  },
): Promise<
  | { readonly decide: DataPlaneDecide; readonly failed: readonly { readonly key: string; readonly failure: IdentityLookupFailure }[] }
  | { readonly error: Error }
> {
  const { location, fromCluster, desired } = { ...context, desired: plan.desired };
  let lookups: SyncDependencies;
  try {
    // The credential of this cluster's lookups (sync/clusterLookups.ts): the process's own, or the
    // cluster's service managed identity's, asked for only now that the gate says there is work.
    lookups = await lookupDependenciesFor(
      dependencies,
      { cluster: context.cluster, serviceManagedIdentity: fromCluster.serviceManagedIdentity, identityUrl: fromCluster.identityUrl },
      context.declared,
      location,
    );
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
  // Started in key order; the limiter is first-in, first-out, so requests go out in that order.
  const outcomes: IdentityLookupOutcome[] = await Promise.all(desired.map((identity) => lookUpIdentity(lookups, identity.resourceId)));
  const globalFailure = outcomes.find((outcome): outcome is Extract<IdentityLookupOutcome, { kind: "global" }> => outcome.kind === "global");
  if (globalFailure !== undefined) {
    // Before any write: one expired credential must not blank every cluster of the fleet.
    return {
      error: new AzureAccessError({
        documentId: location.documentId,
        clusterName: location.clusterName,
        error: globalFailure.error,
        credential: lookups.credentialDescription,
      }),
    };
  }
  const decided = outcomes as DecidedOutcome[];
  const idsOnLookupFailure = dependencies.options.idsOnLookupFailure;
  const shared = idsOnLookupFailure === "keep" ? sharedTransientFailure(decided) : undefined;
  if (shared !== undefined) {
    // Every lookup failed the same transient way (an ARM brownout, a hanging proxy): that says
    // nothing about any one identity, so nothing is written and the next pass tries again.
    return {
      error: new AzureAccessError({
        documentId: location.documentId,
        clusterName: location.clusterName,
        error: shared.error,
        credential: lookups.credentialDescription,
        everyLookup: { failureClass: shared.failureClass, count: decided.length },
      }),
    };
  }
  const failed = desired.flatMap((identity, index) => {
    const outcome = decided[index];
    return outcome.kind === "failed" ? [{ key: identity.key, failure: { resourceId: identity.resourceId, error: outcome.error } }] : [];
  });
  return {
    failed,
    decide: (document, reread) =>
      decideStatus({
        desired,
        outcomes: decided,
        basis: context.basis,
        current: dataPlaneHalf.read(document),
        reread,
        now: dependencies.now(),
        random: dependencies.random,
        idsOnLookupFailure,
        credentialScope: lookups.credentialScope ?? "process",
      }),
  };
}
