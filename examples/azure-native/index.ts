/**
 * One `pulumi up` that provisions each cluster's data plane operator identities with
 * @pulumi/azure-native and records their clientId/principalId with
 * ServiceProviderClusterIdentityStatus. The status resource takes the identities' `.id` outputs,
 * so the engine creates the identities first, and a replaced identity updates the record.
 *
 * Config (this project's namespace, `aro-hcp-identity-status-azure-native:`):
 *   clusters: [{ clusterResourceId, resourceGroupName, location, operators: [name, …] }]
 * The provider's own keys stay in the `aro-hcp-identity-status:` namespace (cosmosEndpoint,
 * cosmosDatabase, managedIdentityClientId, azureCloud…); see examples/Pulumi.prod-eastus.yaml.
 *
 * The root package is imported by relative path (it is not published); `npm run build` at the root
 * first, because the provider host loads dist/resources/providerEntry.js.
 */
import * as azureNative from "@pulumi/azure-native";
import * as pulumi from "@pulumi/pulumi";
import { ServiceProviderClusterIdentityStatus } from "../../resources/serviceProviderClusterIdentityStatus";
import { hashedResourceNameFor } from "../../program/declareFleet";

/** One cluster of this example's config. */
interface ClusterIdentities {
  readonly clusterResourceId: string;
  /** Resource group the identities are created in. */
  readonly resourceGroupName: string;
  readonly location: string;
  /** Data plane operator names; one identity each, named `<cluster>-<operator>`. */
  readonly operators: readonly string[];
}

const config = new pulumi.Config();
const clusters = config.requireObject<ClusterIdentities[]>("clusters");

export const clusterStatus = clusters.map((cluster) => {
  const clusterName = cluster.clusterResourceId.split("/").pop() ?? "cluster";
  const baseName = hashedResourceNameFor(cluster.clusterResourceId);
  const dataPlaneOperators: Record<string, pulumi.Output<string>> = {};
  for (const operator of cluster.operators) {
    const identity = new azureNative.managedidentity.UserAssignedIdentity(`${baseName}-${operator}`, {
      resourceGroupName: cluster.resourceGroupName,
      location: cluster.location,
      resourceName: `${clusterName}-${operator}`,
      tags: { "aro-hcp-cluster": cluster.clusterResourceId, "aro-hcp-operator": operator },
    });
    dataPlaneOperators[operator] = identity.id;
  }
  const status = new ServiceProviderClusterIdentityStatus(baseName, { clusterResourceId: cluster.clusterResourceId, dataPlaneOperators });
  return pulumi
    .all([status.clusterResourceId, status.resolvedCount, status.notFoundCount, status.failedCount, status.status])
    .apply(([clusterResourceId, resolved, notFound, failed, recorded]) => ({
      clusterResourceId,
      resolved,
      notFound,
      failed,
      earliestRecheckTime: recorded?.earliestRecheckTime ?? null,
    }));
});
