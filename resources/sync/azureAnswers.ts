/**
 * The only Azure calls of a pass or a refresh, made once a half has work: the data plane operators
 * through ARM, the MSI half's one answer from the credential mode (the data plane, the fixed
 * stand-in, or in `processCredential` mode ARM, where ResourceNotFound stands for null).
 */
import { isAbortError, withDeadline } from "../core/abort";
import { lookupErrorText } from "../core/retrievalError";
import type { DocumentLocation } from "../core/documentLocation";
import type { MsiDesired } from "../core/clusterDocument";
import type { MsiAnswerEntry } from "../core/msiManagedIdentities";
import { decideMsiStatus, msiRequestedIdentities } from "../core/msiManagedIdentities";
import { MsiIdentitiesError } from "../core/msiError";
import type { DecidedOutcome, IdentityLookupOutcome } from "../core/statusDecision";
import type { DataPlaneAnswer, MsiAnswer } from "../core/passDecision";
import { lookupsAccessError } from "../core/statusDecision";
import type { DeclaredCredential } from "./clusterLookups";
import { dataPlaneTimedOut, lookupDependenciesFor } from "./clusterLookups";
import type { ClusterCredentialRequest } from "../azure/clusterCredentials";
import { lookUpIdentity } from "./lookUpIdentity";
import type { SyncDependencies } from "./syncDependencies";

/** Reads each identity through ARM, asking for the credential only now; `shared`: whether one transient class failing every lookup ends the half. */
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
    const reason = isAbortError(error) ? dataPlaneTimedOut : error instanceof Error ? error.message : String(error);
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
