/** The hook's error classes: each message has clusterMessage's shape and the error names the document it is about. */
import type { LookupErrorDetails } from "./retrievalError";
import { errorCodeLabel, lookupErrorText } from "./retrievalError";
import { goToLower } from "./goStrings";
import { lookupTimeoutSetting } from "./settingsKeys";
import { clusterDocumentLabel, clusterMessage, nothingWritten, serviceProviderClusterDocumentLabel } from "./clusterMessage";
import type { DesiredIdentity } from "./statusHalf";

/** What the hook's errors share: the document a failure is about, and the error that caused it. */
export class ClusterError extends Error {
  readonly documentId: string;

  constructor(message: string, documentId: string, cause?: unknown) {
    super(message);
    this.documentId = documentId;
    // Non-enumerable, as Error's options bag sets it (ES2022; consumers compile against ES2020).
    if (cause !== undefined) Object.defineProperty(this, "cause", { value: cause, writable: true, configurable: true, enumerable: false });
  }
}

export interface IdentityLookupFailure {
  readonly resourceId: string;
  readonly error: LookupErrorDetails;
}

/** Thrown after the status was persisted when identity lookups failed; the message names each identity and its error. */
export class UserAssignedIdentityReadError extends ClusterError {
  readonly failures: readonly IdentityLookupFailure[];

  constructor(options: {
    documentId: string;
    clusterName?: string;
    failures: readonly IdentityLookupFailure[];
    persisted: boolean;
    total?: number;
    status?: { readonly identities?: Readonly<Record<string, { readonly clientId?: string; readonly principalId?: string }>> };
  }) {
    const { failures, persisted, status } = options;
    const stored = (resourceId: string): string => {
      if (!persisted || status === undefined) return "";
      const entry = status.identities?.[goToLower(resourceId)];
      return entry?.clientId !== undefined || entry?.principalId !== undefined ? " [stored IDs kept]" : " [no IDs stored]";
    };
    const count = failures.length;
    const outcome = !persisted
      ? "nothing was written"
      : count === options.total
        ? "every entry carries a retrievalError"
        : "the other identities were written; the failed entries carry a retrievalError";
    const cause = `${count === 1 ? "a data plane operator managed identity" : `${count} data plane operator managed identities`} could not be read: ${failureCodes(failures)}`;
    const lines = failures.map(({ resourceId, error }) => `  - ${resourceId}: ${errorCodeLabel(error)}: ${error.message}${stored(resourceId)}`);
    const reference = serviceProviderClusterDocumentLabel(options.documentId);
    super(`${clusterMessage({ cause, clusterName: options.clusterName, outcome, reference })}\n${lines.join("\n")}`, options.documentId);
    this.failures = failures;
  }
}
// On the prototype, like Error's own `name`: not an enumerable field of every instance.
UserAssignedIdentityReadError.prototype.name = "UserAssignedIdentityReadError";

/** The distinct error codes of failed lookups, in order, joined by commas. */
export function failureCodes(failures: readonly IdentityLookupFailure[]): string {
  return [...new Set(failures.map(({ error }) => errorCodeLabel(error)))].join(", ");
}

/** Thrown when a Cosmos document cannot be read, waited for or written as required. */
export class CosmosDocumentError extends ClusterError {
  readonly statusCode: number | undefined;
  /** Set when the settings, not the document, are at fault; taken over from a `cause` that has one, so it never reads as "document absent". */
  readonly configurationProblem: string | undefined;

  constructor(options: { documentId: string; message: string; statusCode?: number; cause?: unknown; configurationProblem?: string }) {
    super(options.message, options.documentId, options.cause);
    this.configurationProblem = options.configurationProblem ?? (isCosmosConfigurationError(options.cause) ? options.cause.configurationProblem : undefined);
    this.statusCode = options.statusCode;
  }
}
CosmosDocumentError.prototype.name = "CosmosDocumentError";

/** The CosmosDocumentError of a pass that ends with nothing written: the cause, the cluster and the document (`reference`). */
export function nothingWrittenError(
  documentId: string,
  message: { readonly cause: string; readonly clusterName: string; readonly reference: string; readonly details?: readonly string[] },
  options: { readonly statusCode?: number; readonly cause?: unknown } = {},
): CosmosDocumentError {
  return new CosmosDocumentError({ documentId, ...options, message: clusterMessage({ ...message, outcome: "nothing was written" }) });
}

/** Guards by name, so errors revived from another module instance still match. */
export function isCosmosDocumentError(error: unknown): error is CosmosDocumentError {
  return error instanceof Error && error.name === "CosmosDocumentError";
}

export function isCosmosConfigurationError(error: unknown): error is CosmosDocumentError & { readonly configurationProblem: string } {
  return isCosmosDocumentError(error) && typeof error.configurationProblem === "string";
}

/** Thrown when the MSI half got no complete answer (after the other half was written, when it had anything to write). */
export class MsiIdentitiesError extends ClusterError {
  constructor(options: {
    readonly reason: string;
    readonly documentId: string;
    readonly clusterName?: string;
    readonly details?: readonly string[];
    readonly cause?: unknown;
  }) {
    const { reason, documentId, clusterName, details } = options;
    const outcome = "nothing of status.msiManagedIdentities was written (stored clientId/principalId values are unchanged)";
    const reference = serviceProviderClusterDocumentLabel(documentId);
    super(clusterMessage({ cause: reason, clusterName, outcome, reference, details }), documentId, options.cause);
  }
}
MsiIdentitiesError.prototype.name = "MsiIdentitiesError";

interface AzureAccessErrorOptions {
  readonly documentId: string;
  readonly clusterName?: string;
  readonly error: LookupErrorDetails;
  readonly credential: string | undefined;
  /** Set when every lookup of the pass failed with one transient class (a timeout, throttling, a 5xx, a reset). */
  readonly everyLookup?: { readonly failureClass: string; readonly count: number };
}

/** Thrown before any write when a pass meets a failure not about one identity (LookupErrorKind `global`); the message names the credential in use and what to set. */
export class AzureAccessError extends ClusterError {
  readonly error: LookupErrorDetails;

  constructor(options: AzureAccessErrorOptions) {
    super(accessErrorMessage(options), options.documentId);
    this.error = options.error;
  }
}
AzureAccessError.prototype.name = "AzureAccessError";

const armEndpointAdvice =
  "check 'aro-hcp-identity-status:armEndpoint' (or ARO_HCP_ARM_ENDPOINT) and 'aro-hcp-identity-status:azureCloud', DNS and proxy; " +
  "for a certificate error set 'aro-hcp-identity-status:tlsCaFile' (or ARO_HCP_TLS_CA_FILE) to the CA bundle";
const refusedTokenAdvice =
  "check that the credential belongs to the subscription's tenant and that 'aro-hcp-identity-status:azureCloud' (or ARO_HCP_AZURE_CLOUD) matches it; " +
  "set 'aro-hcp-identity-status:managedIdentityClientId' (or ARO_HCP_MANAGED_IDENTITY_CLIENT_ID) to the cluster's service managed identity";

/** True when the cause names the credential already, or a file the credential's description names: no second copy. */
function alreadyNamed(cause: string, credential: string): boolean {
  return cause.includes(credential) || (credential.match(/\/[\w.@+-]+(?:\/[\w.@+-]+)+/g) ?? []).some((path) => cause.includes(path));
}

function accessErrorMessage(options: AzureAccessErrorOptions): string {
  const { error, everyLookup } = options;
  const detail = lookupErrorText(error);
  const tail = { clusterName: options.clusterName, reference: serviceProviderClusterDocumentLabel(options.documentId) };
  if (everyLookup !== undefined) {
    const lookups = everyLookup.count === 1 ? "the one identity lookup" : `all ${everyLookup.count} identity lookups`;
    return clusterMessage({
      cause:
        `${lookups} failed the same transient way (${everyLookup.failureClass}: ${detail}), which says nothing about any one identity; ` +
        `check Azure Resource Manager's health, the network path to it and ${lookupTimeoutSetting}`,
      outcome: `${nothingWritten}; the next pass tries again`,
      ...tail,
    });
  }
  // The credential's own message (azure/credentials.ts, the first party's, a certificate file's)
  // already says what is wrong and what to set, and names the credential: it is the cause, alone.
  const cause =
    error.code === "CredentialUnavailable"
      ? error.message
      : error.statusCode === 401
        ? `Azure Resource Manager refused the credential's token (${detail}); ${refusedTokenAdvice}`
        : `the Azure Resource Manager endpoint cannot be reached (${detail}); ${armEndpointAdvice}`;
  const credential = options.credential === undefined || alreadyNamed(cause, options.credential) ? "" : ` Credential in use: ${options.credential}.`;
  return clusterMessage({ cause, outcome: `no identity was checked; ${nothingWritten}`, ...tail }) + credential;
}

/** Thrown by a pass whose inputs name another desired set than the cluster document. */
export class DesiredSetDisagreementError extends ClusterError {}
DesiredSetDisagreementError.prototype.name = "DesiredSetDisagreementError";

/** Identities each list of the disagreement's message names before it counts the rest. */
export const listedIdentities = 10;

/**
 * The error for inputs whose desired set differs from the cluster document's (a document without the
 * map declares the empty set), or undefined. The document is the authority: a hook writing another set
 * would undo upstream's entries and be undone by them, so the cluster fails first.
 */
export function desiredSetDisagreement(
  inputs: readonly DesiredIdentity[],
  document: readonly DesiredIdentity[],
  clusterDocumentId: string,
  clusterName: string,
): DesiredSetDisagreementError | undefined {
  const documentKeys = new Set(document.map((identity) => identity.key));
  const inputKeys = new Set(inputs.map((identity) => identity.key));
  const onlyInputs = inputs.filter((identity) => !documentKeys.has(identity.key));
  const onlyDocument = document.filter((identity) => !inputKeys.has(identity.key));
  if (onlyInputs.length === 0 && onlyDocument.length === 0) return undefined;
  const list = (identities: readonly DesiredIdentity[]): string => {
    const ids = identities.map((identity) => identity.resourceId);
    return ids.length === 0
      ? "none"
      : ids.length <= listedIdentities
        ? ids.join(", ")
        : `${ids.slice(0, listedIdentities).join(", ")} and ${ids.length - listedIdentities} more`;
  };
  return new DesiredSetDisagreementError(
    clusterMessage({
      cause:
        "the dataPlaneOperators input names other identities than the cluster's HCPOpenShiftCluster document, the authority upstream's controller reads: " +
        "declare the document's set in dataPlaneOperators, or leave dataPlaneOperators out to follow the document",
      clusterName,
      outcome: "nothing was read from Azure or written",
      reference: clusterDocumentLabel(clusterDocumentId),
      details: [
        `The inputs name: ${list(inputs)}. The document names: ${list(document)}`,
        `only in the inputs: ${list(onlyInputs)}; only in the document: ${list(onlyDocument)}`,
      ],
    }),
    clusterDocumentId,
  );
}

/** Sets `cause` as Error's ES2022 options bag would; the sources also compile under ES2020 libs. */
export function withCause<E extends Error>(error: E, cause: unknown): E {
  if (cause !== undefined) Object.defineProperty(error, "cause", { value: cause, writable: true, configurable: true, enumerable: false });
  return error;
}
