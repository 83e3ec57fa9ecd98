/**
 * The seam between a pass and the credential its lookups use. A pass (and a refresh) calls
 * {@link lookupDependenciesFor} once, after the recheck gate said the cluster needs work and before
 * its first lookup: no data plane call, token request or ARM call happens for a cluster that
 * needs none.
 *
 * - Without a cluster credential source (modes `processCredential` and `fixedIdentity`) the
 *   process's one reader serves every cluster.
 * - With one (`clusterServiceManagedIdentity`), the cluster's own reader replaces it for this
 *   pass, and the pass's credential scope becomes `cluster`: a 403 is then a definitive answer
 *   about an identity (core/statusDecision.ts). Its failures end the pass before any write:
 *   {@link ClusterCredentialError} for this cluster alone, {@link AzureAccessError} when the
 *   first-party credential itself failed (every cluster would fail the same way).
 */
import type { ClusterCredentialRequest } from "../azure/clusterCredentials";
import { ClusterCredentialError } from "../azure/clusterCredentials";
import { DataPlaneError } from "../azure/managedIdentitiesDataPlane";
import { AzureAccessError } from "../core/azureAccessError";
import type { SyncDependencies } from "./syncDependencies";
import type { ParsedResourceId } from "../core/azureResourceId";
import { readClusterDocument } from "../core/clusterDocument";
import type { DocumentLocation } from "../core/documentLocation";
import { CosmosDocumentError } from "../core/errors";
import { readLive } from "./documentReads";

/** The dependencies the lookups of one cluster's pass use. */
export async function lookupDependenciesFor(dependencies: SyncDependencies, request: ClusterCredentialRequest, documentId: string): Promise<SyncDependencies> {
  const source = dependencies.clusterCredentials;
  if (source === undefined) {
    return dependencies;
  }
  try {
    const { reader, description } = await source.readerFor(request, { abortSignal: AbortSignal.timeout(dependencies.options.lookupTimeoutInMs) });
    return { ...dependencies, userAssignedIdentityReader: reader, credentialDescription: description, credentialScope: "cluster" };
  } catch (error) {
    if (error instanceof DataPlaneError && error.firstParty) {
      throw new AzureAccessError({
        documentId,
        error: { code: "CredentialUnavailable", message: error.message },
        credential: dependencies.credentialDescription,
      });
    }
    const name = (error as { name?: unknown } | undefined)?.name;
    if (name === "AbortError" || name === "TimeoutError") {
      throw new ClusterCredentialError(
        `cannot get the credential of cluster ${request.cluster.canonical}'s service managed identity: the Managed Identities data plane did not answer within ` +
          "'aro-hcp-identity-status:lookupTimeoutSeconds' (or ARO_HCP_LOOKUP_TIMEOUT_SECONDS)",
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * The lookup dependencies of a refresh that asks Azure: with cluster credentials, the service
 * managed identity and identity URL the inputs declared, else the cluster document's (read only
 * now, and only in that mode). A missing cluster document fails the refresh: state stays as it was.
 */
export async function refreshLookupDependencies(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  declared: { readonly serviceManagedIdentity?: string; readonly identityUrl?: string },
  location: DocumentLocation,
): Promise<SyncDependencies> {
  if (dependencies.clusterCredentials === undefined) {
    return dependencies;
  }
  let fromDocument: { serviceManagedIdentity: string | undefined; identityUrl: string | undefined } = {
    serviceManagedIdentity: undefined,
    identityUrl: undefined,
  };
  if (declared.serviceManagedIdentity === undefined || declared.identityUrl === undefined) {
    const description = `HCPOpenShiftCluster document ${location.clusterDocumentId} (${cluster.canonical})`;
    const clusterDocument = await readLive(dependencies, location.partitionKey, location.clusterDocumentId, description);
    if (clusterDocument === undefined) {
      throw new CosmosDocumentError({
        documentId: location.clusterDocumentId,
        message: `${description} does not exist, so the credential of the cluster's service managed identity cannot be found; nothing was compared or changed`,
      });
    }
    fromDocument = readClusterDocument(clusterDocument.document);
  }
  return lookupDependenciesFor(
    dependencies,
    {
      cluster,
      serviceManagedIdentity: declared.serviceManagedIdentity ?? fromDocument.serviceManagedIdentity,
      identityUrl: declared.identityUrl ?? fromDocument.identityUrl,
    },
    location.documentId,
  );
}
