/** The error that ends a pass meeting a failure not about one identity (errors.ts, LookupErrorKind `global`). */
import type { LookupErrorDetails } from "./retrievalError";
import { lookupErrorText } from "./retrievalError";
import { lookupTimeoutSetting } from "./settingsKeys";
import { clusterMessage, nothingWritten, serviceProviderClusterDocumentLabel } from "./clusterMessage";

/** Thrown before any write when a pass meets a failure not about one identity; the message names the credential in use and what to set. */
export class AzureAccessError extends Error {
  readonly documentId: string;
  readonly error: LookupErrorDetails;

  constructor(options: AzureAccessErrorOptions) {
    super(accessErrorMessage(options));
    this.documentId = options.documentId;
    this.error = options.error;
  }
}
AzureAccessError.prototype.name = "AzureAccessError";

export interface AzureAccessErrorOptions {
  readonly documentId: string;
  readonly clusterName?: string;
  readonly error: LookupErrorDetails;
  readonly credential: string | undefined;
  /** Set when every lookup of the pass failed with one transient class (a timeout, throttling, a 5xx, a reset). */
  readonly everyLookup?: { readonly failureClass: string; readonly count: number };
}

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
