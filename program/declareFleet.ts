/**
 * Declares one ServiceProviderClusterIdentityStatus per cluster and the stack outputs a user
 * reads at a glance.
 */
import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import { ServiceProviderClusterIdentityStatus } from "../resources";
import type { ClusterDeclaration } from "./fleet";

/** Per cluster: counts and the next recheck time. */
export interface ClusterSummary {
  readonly documentId: string;
  readonly identities: number;
  readonly resolved: number;
  readonly notFound: number;
  readonly failed: number;
  readonly earliestRecheckTime: string | null;
  readonly skippedReason: string | null;
}

/** A stable, unique resource name: the cluster name plus a short hash of its full ID. */
export function resourceNameFor(clusterResourceId: string): string {
  const name = clusterResourceId.split("/").pop() ?? "cluster";
  const hash = createHash("sha256").update(clusterResourceId.toLowerCase()).digest("hex").slice(0, 8);
  return `${name.toLowerCase()}-${hash}`;
}

/** Declares the fleet; returns the resources and the stack outputs. */
export function declareFleet(clusters: readonly ClusterDeclaration[]): {
  resources: ServiceProviderClusterIdentityStatus[];
  outputs: pulumi.Output<Record<string, ClusterSummary>>;
} {
  const names = new Set<string>();
  const resources = clusters.map((cluster) => {
    const name = resourceNameFor(cluster.clusterResourceId);
    if (names.has(name)) {
      throw new Error(`cluster ${cluster.clusterResourceId} is listed twice in the clusters config`);
    }
    names.add(name);
    return new ServiceProviderClusterIdentityStatus(name, cluster);
  });
  const summaries = resources.map((resource) =>
    pulumi
      .all([resource.clusterResourceId, resource.documentId, resource.identityCount, resource.resolvedCount, resource.notFoundCount, resource.failedCount, resource.status, resource.skippedReason])
      .apply(([clusterResourceId, documentId, identities, resolved, notFound, failed, status, skippedReason]) => ({
        clusterResourceId,
        summary: { documentId, identities, resolved, notFound, failed, earliestRecheckTime: status?.earliestRecheckTime ?? null, skippedReason } as ClusterSummary,
      })),
  );
  const outputs = pulumi.all(summaries).apply((entries) => Object.fromEntries(entries.map((entry) => [entry.clusterResourceId, entry.summary])));
  return { resources, outputs };
}
