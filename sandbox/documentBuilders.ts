import { createHash } from "node:crypto";
import { goLowerCase } from "./goLowerCase";

/** The UUID namespace upstream uses for Cosmos document ids. */
export const documentIdNamespace = "bf1ee0a1-0147-41ed-a083-d3cbbf7bea99";

/** The resource type of an HCPOpenShiftCluster document. */
export const clusterResourceType = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters";

/** The resource type of a ServiceProviderCluster document. */
export const serviceProviderClusterResourceType = "Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters";

/** A JSON object, as the builders produce it. */
export type JsonObject = Record<string, unknown>;

/** An entry of the MSI sibling controller (note its `resourceId` casing). */
export interface ManagedIdentityInfo {
  resourceId: string;
  clientId: string;
  principalId: string;
}

/**
 * A UUID version 5 (SHA-1) of a name in a namespace, per RFC 4122.
 *
 * @param name - The name, hashed as UTF-8.
 * @param namespace - The namespace UUID.
 * @returns The UUID in lowercase hex form.
 */
export function uuidVersion5(name: string, namespace: string): string {
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const hash = createHash("sha1").update(namespaceBytes).update(name, "utf8").digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The Cosmos `id` upstream gives the document of an ARM resource: UUIDv5 of the ID lowercased as
 * Go's `strings.ToLower` does it.
 *
 * @param armResourceId - The full ARM resource ID, any casing.
 * @returns The document id.
 */
export function documentIdFor(armResourceId: string): string {
  return uuidVersion5(goLowerCase(armResourceId), documentIdNamespace);
}

/**
 * @param subscriptionId - The subscription GUID.
 * @param resourceGroupName - The resource group.
 * @param clusterName - The cluster name.
 * @returns The HCPOpenShiftCluster ARM ID.
 */
export function clusterResourceIdFor(subscriptionId: string, resourceGroupName: string, clusterName: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroupName}/providers/${clusterResourceType}/${clusterName}`;
}

/**
 * @param clusterResourceId - The cluster ARM ID.
 * @returns The ARM ID of the cluster's ServiceProviderCluster singleton.
 */
export function serviceProviderClusterResourceIdFor(clusterResourceId: string): string {
  return `${clusterResourceId}/serviceProviderClusters/default`;
}

/**
 * @param resourceId - An ARM ID starting with `/subscriptions/<id>`.
 * @returns The lowercased subscription ID, which upstream uses as the partition key.
 * @throws TypeError when the ID has no subscription segment.
 */
export function partitionKeyFor(resourceId: string): string {
  const match = /^\/subscriptions\/([^/]+)/i.exec(resourceId);
  if (match?.[1] === undefined) {
    throw new TypeError(`not a subscription-scoped ARM ID: ${resourceId}`);
  }
  return goLowerCase(match[1]);
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Merges overrides into a built document: objects merge recursively, anything else replaces, and
 * an `undefined` value removes the member.
 *
 * @param base - The built document (not changed).
 * @param overrides - The values to apply.
 * @returns A new merged object.
 */
export function mergeOverrides(base: JsonObject, overrides: JsonObject = {}): JsonObject {
  const merged: JsonObject = structuredClone(base);
  for (const [key, value] of Object.entries(overrides)) {
    const current = merged[key];
    if (value === undefined) {
      delete merged[key];
    } else if (isPlainObject(value) && isPlainObject(current)) {
      merged[key] = mergeOverrides(current, value);
    } else {
      merged[key] = structuredClone(value);
    }
  }
  return merged;
}

function envelope(resourceId: string, resourceType: string, properties: JsonObject): JsonObject {
  const partitionKey = partitionKeyFor(resourceId);
  return {
    id: documentIdFor(resourceId),
    partitionKey,
    resourceID: resourceId,
    resourceType,
    properties: { cosmosMetadata: { resourceID: resourceId, instanceVersion: 1, partitionKey }, ...properties },
  };
}

/** The resource type upstream's frontend gives a subscription's document. */
export const subscriptionResourceType = "microsoft.resources/subscriptions";

/**
 * Builds a subscription's own document as upstream's frontend keeps it in the Resources container
 * (the envelope of upstream's `delete_orphaned_cosmos` fixtures): id uuid5 of the lowercased
 * `/subscriptions/<id>`, partition key the lowercased subscription ID. The frontend writes it when
 * ARM registers the subscription and keeps it, state `Deleted` included, beside the clusters'.
 *
 * @param subscriptionId - The subscription GUID.
 * @param state - The registration state ARM last sent.
 * @returns The document, without Cosmos system fields.
 */
export function buildSubscriptionDocument(subscriptionId: string, state: "Registered" | "Warned" | "Suspended" | "Deleted" = "Registered"): JsonObject {
  const resourceId = `/subscriptions/${subscriptionId}`;
  return {
    id: documentIdFor(resourceId),
    partitionKey: partitionKeyFor(resourceId),
    resourceID: resourceId,
    resourceType: subscriptionResourceType,
    properties: { properties: null, registrationDate: "2026-08-01T00:00:00+00:00", resourceId, state },
  };
}

/** Inputs of {@link buildClusterDocument}. */
export interface ClusterDocumentOptions {
  clusterResourceId: string;
  /** Operator name → identity ARM ID (null models an upstream nil value). Omitted when undefined. */
  dataPlaneOperators?: Record<string, string | null>;
  controlPlaneOperators?: Record<string, string>;
  /** The SMI ARM ID; every cluster has one: `<cluster>-service-managed-identity` in its resource group when undefined, omitted when null. */
  serviceManagedIdentity?: string | null;
  managedIdentitiesDataPlaneIdentityURL?: string;
  /** RFC 3339; marks the cluster as being deleted. */
  deletionTimestamp?: string;
  /** Deep-merged into the result (see {@link mergeOverrides}). */
  overrides?: JsonObject;
}

/**
 * Builds an HCPOpenShiftCluster document in the upstream Cosmos layout.
 *
 * @param options - The cluster ID, its identities, and overrides.
 * @returns The document, without Cosmos system fields.
 */
export function buildClusterDocument(options: ClusterDocumentOptions): JsonObject {
  const { clusterResourceId } = options;
  const name = clusterResourceId.split("/").pop() ?? "";
  const subscriptionId = partitionKeyFor(clusterResourceId);
  const userAssignedIdentities: JsonObject = {
    controlPlaneOperators: options.controlPlaneOperators ?? {},
    ...(options.dataPlaneOperators === undefined ? {} : { dataPlaneOperators: options.dataPlaneOperators }),
    ...(options.serviceManagedIdentity === null
      ? {}
      : { serviceManagedIdentity: options.serviceManagedIdentity ?? defaultServiceManagedIdentity(clusterResourceId) }),
  };
  const built = envelope(clusterResourceId, clusterResourceType, {
    id: clusterResourceId,
    name,
    type: clusterResourceType,
    location: "eastus",
    tags: { environment: "sandbox" },
    identity: { type: "UserAssigned" },
    customerProperties: {
      version: { id: "4.19", channelGroup: "stable" },
      network: { networkType: "OVNKubernetes", podCidr: "10.128.0.0/14", serviceCidr: "172.30.0.0/16", machineCidr: "10.0.0.0/16", hostPrefix: 23 },
      api: { visibility: "Public" },
      platform: {
        managedResourceGroup: `${name}-managed`,
        subnetId: `/subscriptions/${subscriptionId}/resourceGroups/${name}-network/providers/Microsoft.Network/virtualNetworks/${name}-vnet/subnets/default`,
        outboundType: "LoadBalancer",
        operatorsAuthentication: { userAssignedIdentities },
      },
    },
    serviceProviderProperties: {
      provisioningState: "Succeeded",
      clusterServiceID: `/api/aro_hcp/v1alpha1/clusters/${documentIdFor(clusterResourceId).slice(0, 8)}`,
      managedIdentitiesDataPlaneIdentityURL:
        options.managedIdentitiesDataPlaneIdentityURL ?? `https://sandbox.identity.azure.net/subscriptions/${subscriptionId}/credentials/${name}`,
      ...(options.deletionTimestamp === undefined ? {} : { deletionTimestamp: options.deletionTimestamp }),
    },
    status: {},
  });
  return mergeOverrides(built, options.overrides);
}

/** The SMI a built cluster document names when none is given: `<cluster>-service-managed-identity` in the cluster's resource group. */
export function defaultServiceManagedIdentity(clusterResourceId: string): string {
  const [, , subscriptionId, , resourceGroup] = clusterResourceId.split("/");
  const name = clusterResourceId.split("/").pop() ?? "";
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}-service-managed-identity`;
}

/** Inputs of {@link buildServiceProviderClusterDocument}. */
export interface ServiceProviderClusterDocumentOptions {
  clusterResourceId: string;
  /** MSI sibling entries, keyed by lowercased identity ID. */
  controlPlaneOperatorsIdentities?: Record<string, ManagedIdentityInfo>;
  serviceManagedIdentity?: ManagedIdentityInfo;
  /** The section our provider owns; `{}` (as Go always emits it) when undefined. */
  dataPlaneOperatorsManagedIdentities?: JsonObject;
  /** Deep-merged into the result (see {@link mergeOverrides}). */
  overrides?: JsonObject;
}

/** Foreign data another (future) controller wrote; writers must keep it exactly as it is. */
export const foreignPropertiesField: JsonObject = {
  writtenBy: "a controller this provider does not know",
  nested: { list: [1, 2.5, "three", { deep: null }], emptyObject: {}, emptyList: [], flag: false },
  text: 'unicode ✓ – "quoted" \\ backslash',
};

/**
 * Builds a ServiceProviderCluster document in the upstream Cosmos layout, with sibling sections
 * and foreign fields (`properties.futureField`, `futureEnvelopeField`) the provider must preserve.
 *
 * @param options - The cluster ID, sibling data, and overrides.
 * @returns The document, without Cosmos system fields.
 */
export function buildServiceProviderClusterDocument(options: ServiceProviderClusterDocumentOptions): JsonObject {
  const resourceId = serviceProviderClusterResourceIdFor(options.clusterResourceId);
  const name = options.clusterResourceId.split("/").pop() ?? "";
  const subscriptionId = partitionKeyFor(options.clusterResourceId);
  const built = envelope(resourceId, serviceProviderClusterResourceType, {
    loadBalancerResourceID: `/subscriptions/${subscriptionId}/resourceGroups/${name}-managed/providers/Microsoft.Network/loadBalancers/kube-apiserver`,
    spec: { controlPlaneAvailability: "HighlyAvailable", backupSchedule: { paused: false, cron: "0 */6 * * *" } },
    status: {
      managementClusterResourceID: "/providers/microsoft.redhatopenshift/stamps/1/managementclusters/default",
      msiManagedIdentities: {
        earliestRecheckTime: "2026-08-14T12:00:00Z",
        controlPlaneOperatorsIdentities: options.controlPlaneOperatorsIdentities ?? {},
        ...(options.serviceManagedIdentity === undefined ? {} : { serviceManagedIdentity: options.serviceManagedIdentity }),
      },
      dataPlaneOperatorsManagedIdentities: options.dataPlaneOperatorsManagedIdentities ?? {},
    },
    futureField: foreignPropertiesField,
  });
  built.futureEnvelopeField = { note: "envelope-level field written by another controller" };
  return mergeOverrides(built, options.overrides);
}
