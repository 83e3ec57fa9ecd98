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
 *   about an identity (core/statusDecision.ts). Whose credential that is, the cluster document
 *   says: its service managed identity and identity URL are the authority, and a resource input
 *   naming others fails the cluster, naming both values, before anything is read or written
 *   (an input may only agree). Its failures end the pass before any write:
 *   {@link ClusterCredentialError} for this cluster alone, {@link AzureAccessError} when the
 *   first-party credential itself failed (every cluster would fail the same way).
 */
import type { ClusterCredentialRequest } from "../azure/clusterCredentials";
import { ClusterCredentialError } from "../azure/clusterCredentials";
import { DataPlaneError } from "../azure/managedIdentitiesDataPlane";
import { withDeadline } from "../core/abort";
import { AzureAccessError } from "../core/azureAccessError";
import type { SyncDependencies } from "./syncDependencies";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import { goToLower } from "../core/goStrings";
import type { DocumentLocation } from "../core/documentLocation";

/** The service managed identity and identity URL a resource's inputs (or its last state) declare. */
export interface DeclaredCredential {
  readonly serviceManagedIdentity?: string;
  readonly identityUrl?: string;
}

/**
 * The dependencies the lookups of one cluster's pass use.
 * @param request - The cluster and what its cluster document says (the authority).
 * @param declared - What the resource's inputs say; each must agree with the document.
 */
export async function lookupDependenciesFor(
  dependencies: SyncDependencies,
  request: ClusterCredentialRequest,
  declared: DeclaredCredential,
  location: Pick<DocumentLocation, "documentId" | "clusterName">,
): Promise<SyncDependencies> {
  const source = dependencies.clusterCredentials;
  if (source === undefined) {
    return dependencies;
  }
  const refusal = credentialRefusal(dependencies, request, declared);
  if (refusal !== undefined) throw refusal;
  try {
    const { reader, description } = await withDeadline(dependencies.options.lookupTimeoutInMs, (abortSignal) => source.readerFor(request, { abortSignal }));
    return { ...dependencies, userAssignedIdentityReader: reader, credentialDescription: description, credentialScope: "cluster" };
  } catch (error) {
    if (error instanceof DataPlaneError && error.firstParty) {
      throw new AzureAccessError({
        documentId: location.documentId,
        clusterName: location.clusterName,
        error: { code: "CredentialUnavailable", message: error.message },
        credential: dependencies.credentialDescription,
      });
    }
    const name = (error as { name?: unknown } | undefined)?.name;
    if (name === "AbortError" || name === "TimeoutError") {
      throw new ClusterCredentialError(
        "the Managed Identities data plane did not answer within 'aro-hcp-identity-status:lookupTimeoutSeconds' (or ARO_HCP_LOOKUP_TIMEOUT_SECONDS) " +
          "when asked for the credential of the cluster's service managed identity",
        { cluster: request.cluster, cause: error },
      );
    }
    throw error;
  }
}

/**
 * With cluster credentials, the error that fails the cluster when its inputs name another service
 * managed identity or identity URL than its document: a pass checks this before either half reads
 * anything, since the MSI half is asked about the document's SMI.
 */
export function credentialRefusal(
  dependencies: Pick<SyncDependencies, "clusterCredentials">,
  request: ClusterCredentialRequest,
  declared: DeclaredCredential,
): ClusterCredentialError | undefined {
  if (dependencies.clusterCredentials === undefined) return undefined;
  const disagreement = credentialDisagreement(request, declared);
  return disagreement === undefined ? undefined : new ClusterCredentialError(disagreement.message, { cluster: request.cluster, field: disagreement.field });
}

/** Where the declared values and the cluster document's part ways, named with both values. */
function credentialDisagreement(request: ClusterCredentialRequest, declared: DeclaredCredential): { message: string; field: string } | undefined {
  if (declared.serviceManagedIdentity !== undefined && !sameResourceId(declared.serviceManagedIdentity, request.serviceManagedIdentity)) {
    return {
      field: "serviceManagedIdentity",
      message:
        `the serviceManagedIdentity input names ${declared.serviceManagedIdentity}, but the cluster's HCPOpenShiftCluster document ` +
        `names ${request.serviceManagedIdentity ?? "none"}: remove the input or make it agree (the cluster document says whose credential reads the cluster)`,
    };
  }
  if (declared.identityUrl !== undefined && declared.identityUrl !== request.identityUrl) {
    return {
      field: "managedIdentitiesDataPlaneIdentityURL",
      message:
        `the managedIdentitiesDataPlaneIdentityURL input is ${declared.identityUrl}, but the cluster's HCPOpenShiftCluster document ` +
        `has ${request.identityUrl ?? "none"}: remove the input or make it agree (the cluster document says where its credential comes from)`,
    };
  }
  return undefined;
}

function sameResourceId(left: string, right: string | undefined): boolean {
  return right !== undefined && goToLower(canonicalOrSelf(left)) === goToLower(canonicalOrSelf(right));
}

function canonicalOrSelf(id: string): string {
  const parsed = parseResourceIdOfType(id, userAssignedIdentityResourceType);
  return parsed.ok ? parsed.resourceId.canonical : id;
}
