/** Where a cluster's documents live: item ids as upstream derives them (UUIDv5 of the lowercased ARM ID) and the partition key. */
import { createHash } from "node:crypto";
import { goToLower } from "./goStrings";
import { boundedMemo } from "./boundedMemo";
import type { ParsedResourceId } from "./azureResourceId";
import { serviceProviderClusterIdFor } from "./azureResourceId";
import { clusterNameOf } from "./clusterMessage";

/** Upstream's namespace UUID for resource item ids. */
export const resourceIdNamespace = "bf1ee0a1-0147-41ed-a083-d3cbbf7bea99";

/** The Cosmos `id` of the item holding the resource with this ARM ID (memoized: every operation on a cluster locates it again). */
export const cosmosItemIdFor: (armResourceId: string) => string = boundedMemo((armResourceId) => uuidVersion5(resourceIdNamespace, goToLower(armResourceId)));

/** RFC 4122 version 5 UUID, as Go's google/uuid `NewSHA1` computes it (the pure core loads only node:crypto). */
export function uuidVersion5(namespace: string, name: string): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ""), "hex");
  if (namespaceBytes.length !== 16) throw new RangeError(`namespace must be a UUID, got '${namespace}'`);
  const hash = createHash("sha1").update(namespaceBytes).update(Buffer.from(name, "utf8")).digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The ids and partition key of one cluster's two documents, and of its subscription's document. */
export interface DocumentLocation {
  readonly documentId: string;
  /** Both documents' partition key: the lowercased subscription ID. */
  readonly partitionKey: string;
  readonly serviceProviderClusterResourceId: string;
  readonly clusterDocumentId: string;
  /** The subscription's own document: it tells "this cluster's documents were deleted" from "the settings point elsewhere". */
  readonly subscriptionDocumentId: string;
  /** The cluster as messages name it (core/clusterMessage.ts). */
  readonly clusterName: string;
}

export function locate(cluster: ParsedResourceId): DocumentLocation {
  const serviceProviderClusterResourceId = serviceProviderClusterIdFor(cluster);
  return {
    documentId: cosmosItemIdFor(serviceProviderClusterResourceId),
    partitionKey: goToLower(cluster.subscriptionId),
    serviceProviderClusterResourceId,
    clusterDocumentId: cosmosItemIdFor(cluster.canonical),
    subscriptionDocumentId: cosmosItemIdFor(`/subscriptions/${cluster.subscriptionId}`),
    clusterName: clusterNameOf(cluster),
  };
}
