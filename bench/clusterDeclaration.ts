/** How the benchmark and the reliability runs declare a cluster they seeded. */
import type { ClusterDeclaration } from "../program/fleet";
import type { FleetClusterDescription } from "../sandbox/seed";

/** A seeded cluster (sandbox/seed.ts) as the program declares it: its operators and its service managed identity given. */
export function clusterDeclaration(cluster: FleetClusterDescription): ClusterDeclaration {
  return {
    clusterResourceId: cluster.clusterResourceId,
    dataPlaneOperators: cluster.dataPlaneOperators,
    serviceManagedIdentity: cluster.serviceManagedIdentity,
  };
}
