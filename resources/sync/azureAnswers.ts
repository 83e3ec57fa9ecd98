/**
 * The only Azure calls of a pass (or a refresh), made once its decisions say a half has work. Each
 * returns the answer, or the error that says why the half writes nothing.
 *
 * - Data plane operators (upstream's FetchDataPlaneOperatorsManagedIdentitiesInfo): every identity
 *   read through ARM (lookUpIdentity.ts), as the cluster's own credential where the mode says so
 *   (clusterLookups.ts).
 * - MSI identities (upstream's FetchMSIIdentitiesInfo): one answer naming every identity, from the
 *   credential mode's `msiAnswers` (the data plane, or the fixed-identity stand-in), or in
 *   `processCredential` mode from ARM, where ResourceNotFound stands for the data plane's null and
 *   any other failure is no answer.
 */
import { withDeadline } from "../core/abort";
import { lookupErrorText } from "../core/retrievalError";
import type { DocumentLocation } from "../core/documentLocation";
import type { IdentityLookupOutcome } from "../core/identityStatus";
import type { MsiAnswerEntry } from "../core/msiDecision";
import type { MsiDesired } from "../core/msiManagedIdentities";
import { decideMsiStatus, msiRequestedIdentities } from "../core/msiDecision";
import { MsiIdentitiesError } from "../core/msiError";
import type { DecidedOutcome } from "../core/statusDecision";
import type { DataPlaneAnswer, MsiAnswer } from "../core/passDecision";
import { lookupsAccessError } from "../core/statusDecision";
import type { DeclaredCredential } from "./clusterLookups";
import { lookupDependenciesFor } from "./clusterLookups";
import type { ClusterCredentialRequest } from "../azure/clusterCredentials";
import { lookUpIdentity } from "./lookUpIdentity";
import type { SyncDependencies } from "./syncDependencies";

/**
 * Reads each identity through ARM; the credential is asked for only now that there is work.
 * @param shared - Whether every lookup failing the same transient way ends the half (a refresh only counts lookups it would report).
 */
export async function askDataPlane(
  dependencies: SyncDependencies,
  resourceIds: readonly string[],
  credential: { readonly request: ClusterCredentialRequest; readonly declared: DeclaredCredential },
  location: Pick<DocumentLocation, "documentId" | "clusterName">,
  shared = true,
): Promise<DataPlaneAnswer> {
  let lookups: SyncDependencies;
  try {
    lookups = await lookupDependenciesFor(dependencies, credential.request, credential.declared, location);
  } catch (error) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }
  // Started in key order; the limiter is first-in, first-out, so requests go out in that order.
  const outcomes: IdentityLookupOutcome[] = await Promise.all(resourceIds.map((resourceId) => lookUpIdentity(lookups, resourceId)));
  const error = lookupsAccessError(location, outcomes, {
    credential: lookups.credentialDescription,
    idsOnLookupFailure: dependencies.options.idsOnLookupFailure,
    shared,
  });
  return error !== undefined ? { error } : { outcomes: outcomes as DecidedOutcome[], credentialScope: lookups.credentialScope ?? "process" };
}

/** Gets the MSI half's one answer and reads it: the half it leaves, or why it writes nothing. */
export async function askMsi(
  dependencies: SyncDependencies,
  desired: MsiDesired,
  identityUrl: string,
  location: Pick<DocumentLocation, "documentId" | "clusterName">,
): Promise<MsiAnswer> {
  const { documentId, clusterName } = location;
  let answer: readonly MsiAnswerEntry[];
  try {
    answer = await msiAnswer(dependencies, msiRequestedIdentities(desired), identityUrl);
  } catch (error) {
    const name = (error as { name?: unknown } | undefined)?.name;
    const reason =
      name === "AbortError" || name === "TimeoutError"
        ? "the Managed Identities data plane did not answer within 'aro-hcp-identity-status:lookupTimeoutSeconds' (or ARO_HCP_LOOKUP_TIMEOUT_SECONDS)"
        : error instanceof Error
          ? error.message
          : String(error);
    return { error: new MsiIdentitiesError({ documentId, clusterName, reason, cause: error }) };
  }
  const decided = decideMsiStatus(desired, answer, dependencies.now(), dependencies.random);
  if (decided.ok) return { answered: decided.status };
  return { error: new MsiIdentitiesError({ documentId, clusterName, reason: `the Managed Identities data plane's answer is incomplete: ${decided.problem}` }) };
}

async function msiAnswer(dependencies: SyncDependencies, requested: readonly string[], identityUrl: string): Promise<readonly MsiAnswerEntry[]> {
  if (dependencies.msiAnswers !== undefined) {
    const answers = dependencies.msiAnswers;
    return withDeadline(dependencies.options.lookupTimeoutInMs, (abortSignal) => answers.answer(identityUrl, requested, { abortSignal }));
  }
  // processCredential: ARM, read with the process credential, stands in for the data plane.
  const outcomes = await Promise.all(requested.map((resourceId) => lookUpIdentity(dependencies, resourceId)));
  return outcomes.map((outcome, index): MsiAnswerEntry => {
    const resourceId = requested[index];
    if (outcome.kind === "resolved") return { resourceId, clientId: outcome.clientId, objectId: outcome.principalId };
    if (outcome.kind === "notFound") return { resourceId, clientId: null, objectId: null };
    throw new Error(`${lookupErrorText(outcome.error)}, reading ${resourceId} through Azure Resource Manager`);
  });
}
