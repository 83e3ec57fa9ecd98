/**
 * What a benchmark reads back from a sandbox's documents, directly (no HTTP, uncounted), with the
 * product's own reader of the status subtree.
 */
import { isJsonObject } from "../../resources/core/json";
import type { DataPlaneOperatorManagedIdentityEntry } from "../../resources/core/serviceProviderClusterDocument";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet, seedNamedCluster } from "../../sandbox/seed";
import { dataPlaneHalf } from "../../resources/core/serviceProviderClusterDocument";

/** The identity entries of a stored ServiceProviderCluster document, read with the product's own reader. */
export function storedIdentities(document: unknown): Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>> {
  const properties = isJsonObject(document) ? document.properties : undefined;
  const status = isJsonObject(properties) ? properties.status : undefined;
  return dataPlaneHalf.readSubtree(isJsonObject(status) ? status.dataPlaneOperatorsManagedIdentities : undefined).status.identities ?? {};
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

/**
 * Seeds one cluster per identity count, each in a subscription the sandbox knows, its documents
 * declaring exactly that many identities (the cluster document is the authority on the set the
 * inputs may name). `name` tells the clusters apart: `<prefix>-rg-<name>`, `<prefix>-cluster-<name>`.
 */
export function seedClustersByIdentities(
  sandbox: Sandbox,
  prefix: string,
  clusters: ReadonlyArray<{ readonly name: string; readonly identities: number }>,
): FleetClusterDescription[] {
  // A one-cluster fleet registers a subscription (its own document and tenant) for all of them.
  const subscriptionId = seedFleet(sandbox, { clusters: 1, identitiesPerCluster: 0, subscriptions: 1 })[0].clusterResourceId.split("/")[2];
  return clusters.map(({ name, identities }) =>
    seedNamedCluster(sandbox, {
      subscriptionId,
      resourceGroupName: `${prefix}-rg-${name}`,
      clusterName: `${prefix}-cluster-${name}`,
      identitiesPerCluster: identities,
    }),
  );
}
