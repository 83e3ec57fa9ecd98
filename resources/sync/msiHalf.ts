/**
 * The MSI half of a pass: the clientId and principalId of the cluster's control plane operator
 * identities and of its service managed identity (core/msiManagedIdentities.ts), as upstream's
 * FetchMSIIdentitiesInfo keeps them, with this hook's rules where they differ:
 *
 * 1. Nothing happens for a cluster whose `managedIdentitiesDataPlaneIdentityURL` is not set yet
 *    (upstream skips it too), nor inside the recheck window while the stored identities are the
 *    desired ones (the gate: no call at all).
 * 2. One answer names every identity at once, in whichever way the credential mode gets it
 *    (syncDependencies.ts `msiAnswers`): the Managed Identities data plane asked as the first
 *    party at the cluster's identity URL (`clusterServiceManagedIdentity`), the fixed identity's
 *    IDs for every identity as upstream's stand-in answers (`fixedIdentity`), or ARM read with the
 *    process credential (`processCredential`, a trial mode: ARM's ResourceNotFound stands for the
 *    data plane's null, any other failure is no answer).
 * 3. Only a complete, well-formed answer is written (its nulls included: the data plane answers
 *    null for both IDs of an identity that no longer exists). Anything short of it (a data plane
 *    failure, a timeout, throttling, an answer upstream's client refuses for a field of another
 *    type, an entry missing a field, an answer missing an identity or naming one not asked for)
 *    writes nothing of this half: the stored IDs stay, and the error names what was wrong. The
 *    other half of the status is decided on its own.
 * 4. After a conflict (HTTP 412) the half is decided again on the document as it is now: when the
 *    other writer left it current, nothing is written.
 * 5. Upstream's stand-in (`fixedIdentity`) answers its own IDs for every identity: over stored IDs
 *    that are not its own (a fleet whose status a real data plane recorded) it refuses the half,
 *    naming them, with nothing asked or written, unless `allowFixedIdentityOverwrite` is true.
 */
import { withDeadline } from "../core/abort";
import type { WorkReason } from "../core/statusHalf";
import type { ClusterDesiredSet } from "../core/clusterDocument";
import type { JsonObject } from "../core/json";
import type { MsiAnswerEntry, MsiDesired } from "../core/msiDecision";
import { decideMsiStatus, msiDesiredSet, msiRequestedIdentities, realIdsUnderStandIn } from "../core/msiDecision";
import type { StandInIdentity } from "../azure/msiAnswers";
import { MsiIdentitiesError } from "../core/msiError";
import type { MsiManagedIdentities, StoredMsiStatus } from "../core/msiManagedIdentities";
import { lookUpIdentity } from "./lookUpIdentity";
import type { SyncDependencies } from "./syncDependencies";
import type { DocumentLocation } from "../core/documentLocation";
import { msiHalf } from "../core/msiManagedIdentities";

/** What the MSI half has to do in a pass. */
export type MsiPlan =
  | { readonly kind: "skipped"; readonly reason: "identityUrlNotSet" }
  | { readonly kind: "current" }
  | { readonly kind: "unreadable"; readonly problems: readonly string[] }
  | { readonly kind: "refused"; readonly reason: string; readonly details: readonly string[] }
  | {
      readonly kind: "work";
      readonly reason: WorkReason | "forced" | "storedStatusMalformed";
      readonly desired: MsiDesired;
      readonly identityUrl: string;
    };

/** Plans the half from the cluster document's verdict and the stored subtree (rules 1 and 5). */
export function planMsiHalf(
  fromCluster: Exclude<ClusterDesiredSet, { kind: "deleting" }>,
  stored: StoredMsiStatus,
  now: Date,
  force: boolean,
  standIn?: StandInIdentity,
): MsiPlan {
  if (fromCluster.identityUrl === undefined) return { kind: "skipped", reason: "identityUrlNotSet" };
  const desired = msiDesiredSet(fromCluster.controlPlaneOperators, fromCluster.serviceManagedIdentity);
  if (!desired.ok) return { kind: "unreadable", problems: desired.problems };
  const reason = force ? "forced" : stored.problems.length > 0 ? "storedStatusMalformed" : msiHalf.workReason(desired.desired, stored.status, now);
  if (reason === undefined) return { kind: "current" };
  const overwritten = standIn === undefined || standIn.overwriteAllowed ? [] : realIdsUnderStandIn(stored.status, standIn);
  if (overwritten.length > 0) {
    return {
      kind: "refused",
      reason:
        `credentialMode fixedIdentity would write the fixed identity's IDs over ${overwritten.length} stored identit${overwritten.length === 1 ? "y" : "ies"} ` +
        "whose IDs are not its own (a real data plane recorded them); set 'aro-hcp-identity-status:allowFixedIdentityOverwrite' " +
        "(or ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE) to true for the one update that means it",
      details: overwritten,
    };
  }
  return { kind: "work", reason, desired: desired.desired, identityUrl: fromCluster.identityUrl };
}

/** Why the half cannot be decided at all: the cluster document cannot name its identities, or the stand-in refuses (rule 5). */
export function msiPlanError(
  location: Pick<DocumentLocation, "documentId" | "clusterName" | "clusterDocumentId">,
  plan: Extract<MsiPlan, { kind: "unreadable" | "refused" }>,
): MsiIdentitiesError {
  const { documentId, clusterName } = location;
  if (plan.kind === "refused") return new MsiIdentitiesError({ documentId, clusterName, reason: plan.reason, details: plan.details });
  return new MsiIdentitiesError({
    documentId,
    clusterName,
    reason: `the cluster's HCPOpenShiftCluster document ${location.clusterDocumentId} does not name its control plane operator identities in a form upstream writes`,
    details: plan.problems,
  });
}

/** The decision of a half with an answer, made again against each document the write reads (rule 4). */
export type MsiDecide = (document: JsonObject, reread: boolean) => MsiManagedIdentities | undefined;

/**
 * Gets the answer (rule 2) and turns it into the decision, or into the error that says why this
 * half writes nothing (rule 3).
 */
export async function resolveMsiHalf(
  dependencies: SyncDependencies,
  plan: Extract<MsiPlan, { kind: "work" }>,
  location: Pick<DocumentLocation, "documentId" | "clusterName">,
): Promise<{ readonly decide: MsiDecide } | { readonly error: Error }> {
  const { documentId, clusterName } = location;
  let answer: readonly MsiAnswerEntry[];
  try {
    answer = await answerFor(dependencies, plan);
  } catch (error) {
    const reason = error instanceof MsiIdentitiesError ? error.message : error instanceof Error ? error.message : String(error);
    return {
      error: new MsiIdentitiesError({
        documentId,
        clusterName,
        reason: timedOut(error)
          ? "the Managed Identities data plane did not answer within 'aro-hcp-identity-status:lookupTimeoutSeconds' (or ARO_HCP_LOOKUP_TIMEOUT_SECONDS)"
          : reason,
        cause: error,
      }),
    };
  }
  const decided = decideMsiStatus(plan.desired, answer, dependencies.now(), dependencies.random);
  if (!decided.ok) {
    return {
      error: new MsiIdentitiesError({ documentId, clusterName, reason: `the Managed Identities data plane's answer is incomplete: ${decided.problem}` }),
    };
  }
  return {
    decide: (document, reread) =>
      msiHalf.decideWrite({ desired: plan.desired, current: msiHalf.read(document), reread, now: dependencies.now() }, (current) => {
        // Rule 5 again on what another writer left meanwhile.
        const standIn = dependencies.msiAnswers?.standIn;
        const refused = reread && standIn !== undefined && !standIn.overwriteAllowed && realIdsUnderStandIn(current, standIn).length > 0;
        return refused ? undefined : decided.status;
      }),
  };
}

async function answerFor(dependencies: SyncDependencies, plan: Extract<MsiPlan, { kind: "work" }>): Promise<readonly MsiAnswerEntry[]> {
  const requested = msiRequestedIdentities(plan.desired);
  if (dependencies.msiAnswers !== undefined) {
    const answers = dependencies.msiAnswers;
    return withDeadline(dependencies.options.lookupTimeoutInMs, (abortSignal) => answers.answer(plan.identityUrl, requested, { abortSignal }));
  }
  // processCredential: ARM, read with the process credential, stands in for the data plane.
  const outcomes = await Promise.all(requested.map((resourceId) => lookUpIdentity(dependencies, resourceId)));
  return outcomes.map((outcome, index): MsiAnswerEntry => {
    const resourceId = requested[index];
    if (outcome.kind === "resolved") return { resourceId, clientId: outcome.clientId, objectId: outcome.principalId };
    if (outcome.kind === "notFound") return { resourceId, clientId: null, objectId: null };
    const status = outcome.error.statusCode === undefined ? "" : ` (HTTP ${outcome.error.statusCode})`;
    throw new Error(`${outcome.error.code}${status}: ${outcome.error.message.replace(/[.\s]+$/, "")}, reading ${resourceId} through Azure Resource Manager`);
  });
}

function timedOut(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === "AbortError" || name === "TimeoutError";
}
