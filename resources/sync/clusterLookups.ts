/**
 * The seam between a pass and the credential its lookups use, asked for once the gate said the
 * cluster needs work, so no token request or data plane call happens for a cluster that needs none.
 *
 * - Modes `processCredential` and `fixedIdentity`: the process's one reader serves every cluster.
 * - `clusterServiceManagedIdentity`: the cluster's own reader, and the credential scope `cluster`
 *   (a 403 is then a definitive answer about an identity, core/statusDecision.ts). The cluster
 *   document says whose credential that is; inputs may only agree with it. Its failures end the
 *   pass before any write: {@link ClusterCredentialError} for this cluster alone,
 *   {@link AzureAccessError} when the first-party credential itself failed.
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

/** The dependencies the lookups of one cluster's pass use: the cluster's own reader where the mode says so. */
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
 * managed identity or identity URL than its document, named with both values: a pass checks this
 * before either half reads anything, since the MSI half is asked about the document's SMI.
 */
export function credentialRefusal(
  dependencies: Pick<SyncDependencies, "clusterCredentials">,
  request: ClusterCredentialRequest,
  declared: DeclaredCredential,
): ClusterCredentialError | undefined {
  if (dependencies.clusterCredentials === undefined) return undefined;
  if (declared.serviceManagedIdentity !== undefined && !sameResourceId(declared.serviceManagedIdentity, request.serviceManagedIdentity)) {
    return new ClusterCredentialError(
      `the serviceManagedIdentity input names ${declared.serviceManagedIdentity}, but the cluster's HCPOpenShiftCluster document ` +
        `names ${request.serviceManagedIdentity ?? "none"}: remove the input or make it agree (the cluster document says whose credential reads the cluster)`,
      { cluster: request.cluster, field: "serviceManagedIdentity" },
    );
  }
  if (declared.identityUrl !== undefined && declared.identityUrl !== request.identityUrl) {
    return new ClusterCredentialError(
      `the managedIdentitiesDataPlaneIdentityURL input is ${declared.identityUrl}, but the cluster's HCPOpenShiftCluster document ` +
        `has ${request.identityUrl ?? "none"}: remove the input or make it agree (the cluster document says where its credential comes from)`,
      { cluster: request.cluster, field: "managedIdentitiesDataPlaneIdentityURL" },
    );
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
