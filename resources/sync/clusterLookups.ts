/**
 * The credential a pass's lookups use, asked for only once a half has work: the process's reader,
 * or in `clusterServiceManagedIdentity` mode the cluster's own (scope `cluster`: a 403 is then a
 * definitive answer). Its failures end the pass before any write.
 */
import type { ClusterCredentialRequest } from "../azure/clusterCredentials";
import { ClusterCredentialError } from "../azure/clusterCredentials";
import { DataPlaneError } from "../azure/dataPlaneAnswer";
import { isAbortError, withDeadline } from "../core/abort";
import { AzureAccessError } from "../core/azureAccessError";
import type { SyncDependencies } from "./syncDependencies";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import { goToLower } from "../core/goStrings";
import { lookupTimeoutSetting } from "../core/settingsKeys";
import type { DocumentLocation } from "../core/documentLocation";
import type { ParsedResourceId } from "../core/azureResourceId";
import type { ClusterCredentialFields } from "../core/clusterDocument";

export const dataPlaneTimedOut = `the Managed Identities data plane did not answer within ${lookupTimeoutSetting}`;

/** What the cluster's credential is asked by: the SMI and identity URL its cluster document names. */
export function credentialRequestOf(cluster: ParsedResourceId, fromCluster: ClusterCredentialFields | undefined): ClusterCredentialRequest {
  return { cluster, serviceManagedIdentity: fromCluster?.serviceManagedIdentity, identityUrl: fromCluster?.identityUrl };
}

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
  if (source === undefined) return dependencies;
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
    if (isAbortError(error)) {
      const message = `${dataPlaneTimedOut} when asked for the credential of the cluster's service managed identity`;
      throw new ClusterCredentialError(message, { cluster: request.cluster, cause: error });
    }
    throw error;
  }
}

/** With cluster credentials: inputs naming another SMI or identity URL than the document fail the cluster before any read. */
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
