/**
 * What a benchmark reads back from a sandbox's documents, directly (no HTTP, uncounted), with the
 * product's own reader of the status subtree.
 */
import { isJsonObject } from "../../resources/core/json";
import type { DataPlaneOperatorManagedIdentityEntry } from "../../resources/core/serviceProviderClusterDocument";
import { readStatusSubtree } from "../../resources/core/serviceProviderClusterDocument";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";

/** The identity entries of a stored ServiceProviderCluster document, read with the product's own reader. */
export function storedIdentities(document: unknown): Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>> {
  const properties = isJsonObject(document) ? document.properties : undefined;
  const status = isJsonObject(properties) ? properties.status : undefined;
  return readStatusSubtree(isJsonObject(status) ? status.dataPlaneOperatorsManagedIdentities : undefined).status.identities ?? {};
}

/** Identities whose clientId/principalId in Cosmos match ARM (read directly, uncounted). */
export function countResolvedInCosmos(sandbox: Sandbox, fleet: readonly FleetClusterDescription[]): number {
  let resolved = 0;
  for (const cluster of fleet) {
    const identities = storedIdentities(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId));
    for (const resourceId of Object.values(cluster.dataPlaneOperators)) {
      const entry = identities[resourceId.toLowerCase()];
      const identity = sandbox.identities.get(resourceId);
      if (entry !== undefined && identity !== undefined && entry.clientId === identity.clientId && entry.principalId === identity.principalId) {
        resolved += 1;
      }
    }
  }
  return resolved;
}
