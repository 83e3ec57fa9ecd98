/**
 * The only Azure calls of a pass or a refresh, made once a half has work: the data plane operators
 * through ARM, with the process's reader or in `clusterServiceManagedIdentity` mode the cluster's own
 * (scope `cluster`: a 403 is then a definitive answer); the MSI half's one answer from the data
 * plane, the fixed stand-in, or in `processCredential` mode ARM, where ResourceNotFound stands for null.
 */
import type { ClusterCredentialRequest } from "../azure/clusterCredentials";
import { ClusterCredentialError } from "../azure/clusterCredentials";
import { DataPlaneError } from "../azure/dataPlaneAnswer";
import { isAbortError, withDeadline } from "../core/abort";
import type { ParsedResourceId } from "../core/azureResourceId";
import type { ClusterCredentialFields, MsiDesired } from "../core/clusterDocument";
import type { DocumentLocation } from "../core/documentLocation";
import type { MsiAnswerEntry } from "../core/msiManagedIdentities";
import { decideMsiStatus, msiRequestedIdentities } from "../core/msiManagedIdentities";
import { AzureAccessError, MsiIdentitiesError } from "../core/errors";
import type { DecidedOutcome, IdentityLookupOutcome } from "../core/statusDecision";
import type { DataPlaneAnswer, MsiAnswer } from "../core/passDecision";
import { lookupErrorText } from "../core/retrievalError";
import { lookupTimeoutSetting } from "../core/settingsKeys";
import { lookupsAccessError } from "../core/statusDecision";
import { lookUpIdentity } from "./lookUpIdentity";
import type { SyncDependencies } from "./syncDependencies";
import { messageOf } from "../core/clusterMessage";

type Location = Pick<DocumentLocation, "documentId" | "clusterName">;

const dataPlaneTimedOut = `the Managed Identities data plane did not answer within ${lookupTimeoutSetting}`;

/** What a pass or a refresh asks: the data plane operators' resource IDs; the MSI half's desired set (asked only with an identity URL). */
export interface AzureQuestions {
  readonly resourceIds?: readonly string[];
  /** Whether one transient class failing every lookup ends the data plane half. */
  readonly shared?: boolean;
  readonly msi?: MsiDesired;
}

/** Asks both halves' questions at once; the cluster document (`fromCluster`) names the cluster's credential and identity URL. */
export function askAzure(
  dependencies: SyncDependencies,
  location: Location,
  cluster: ParsedResourceId,
  fromCluster: ClusterCredentialFields | undefined,
  questions: AzureQuestions,
): Promise<[DataPlaneAnswer | undefined, MsiAnswer | undefined]> {
  const identityUrl = fromCluster?.identityUrl;
  const credential: ClusterCredentialRequest = { cluster, serviceManagedIdentity: fromCluster?.serviceManagedIdentity, identityUrl };
  return Promise.all([
    questions.resourceIds === undefined ? undefined : askDataPlane(dependencies, questions.resourceIds, credential, location, questions.shared ?? true),
    questions.msi === undefined || identityUrl === undefined ? undefined : askMsi(dependencies, questions.msi, identityUrl, location),
  ]);
}

/** Reads each identity through ARM, asking for the cluster's credential only now. */
async function askDataPlane(
  dependencies: SyncDependencies,
  resourceIds: readonly string[],
  credential: ClusterCredentialRequest,
  location: Location,
  shared: boolean,
): Promise<DataPlaneAnswer> {
  let lookups = dependencies;
  const source = dependencies.clusterCredentials;
  if (source !== undefined) {
    try {
      const { reader, description } = await withDeadline(dependencies.options.lookupTimeoutInMs, (abortSignal) =>
        source.readerFor(credential, { abortSignal }),
      );
      lookups = { ...dependencies, userAssignedIdentityReader: reader, credentialDescription: description, credentialScope: "cluster" };
    } catch (error) {
      return { error: credentialFailure(dependencies, credential.cluster, location, error) };
    }
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

/** Why the cluster's credential could not be had: the first party refused (a credential failure of the pass), the data plane timed out, or the error itself. */
function credentialFailure(dependencies: SyncDependencies, cluster: ParsedResourceId, location: Location, error: unknown): Error {
  if (error instanceof DataPlaneError && error.firstParty) {
    return new AzureAccessError({
      documentId: location.documentId,
      clusterName: location.clusterName,
      error: { code: "CredentialUnavailable", message: error.message },
      credential: dependencies.credentialDescription,
    });
  }
  if (isAbortError(error)) {
    const message = `${dataPlaneTimedOut} when asked for the credential of the cluster's service managed identity`;
    return new ClusterCredentialError(message, { cluster, cause: error });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Gets the MSI half's one answer and reads it: the half it leaves, or why it writes nothing. */
async function askMsi(dependencies: SyncDependencies, desired: MsiDesired, identityUrl: string, location: Location): Promise<MsiAnswer> {
  const { documentId, clusterName } = location;
  let answer: readonly MsiAnswerEntry[];
  try {
    answer = await msiAnswer(dependencies, msiRequestedIdentities(desired), identityUrl);
  } catch (error) {
    const reason = isAbortError(error) ? dataPlaneTimedOut : messageOf(error);
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
