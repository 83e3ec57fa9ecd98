import type { CosmosDocumentStore } from "./cosmosDocumentStore";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  buildSubscriptionDocument,
  clusterResourceIdFor,
  documentIdFor,
  type JsonObject,
  type ManagedIdentityInfo,
  serviceProviderClusterResourceIdFor,
  uuidVersion5,
} from "./documentBuilders";
import { goLowerCase } from "./goLowerCase";
import { identityResourceId, type IdentityStore, sandboxTenantId } from "./identityStore";
import type { SandboxCredentials } from "./sandboxCredentials";

/** The in-process parts of a sandbox that seeding writes to. */
export interface SeedTarget {
  identities: IdentityStore;
  documents: CosmosDocumentStore;
  /**
   * When given (a sandbox always gives it), each cluster is registered with the Managed Identities
   * data plane (its document gets the real identity URL, its SMI becomes a principal of the
   * cluster's tenant) and its SMI gets a role assignment over each of its data plane operator
   * identities.
   */
  credentials?: SandboxCredentials;
}

/** One seeded cluster, as tests and tools need to find it. */
export interface FleetClusterDescription {
  clusterResourceId: string;
  clusterDocumentId: string;
  serviceProviderClusterResourceId: string;
  serviceProviderClusterDocumentId: string;
  /** The lowercased subscription ID, partition key of both documents. */
  partitionKey: string;
  /** Operator name → identity ARM ID, as written in the cluster document. */
  dataPlaneOperators: Record<string, string>;
  /** Control plane operator name → identity ARM ID, as written in the cluster document (assigned to the cluster at the data plane). */
  controlPlaneOperators?: Record<string, string>;
  serviceManagedIdentity: string;
  /** Identity IDs referenced by the cluster that were deliberately not created in ARM. */
  missingIdentities: string[];
  /** The cluster's tenant: its SMI's and its identities' (the sandbox tenant unless seeded per tenant). */
  tenantId?: string;
  /** The data plane identity URL written into the cluster document (when the target has credentials). */
  identityUrl?: string;
  /** The SMI's client ID and principal (object) ID. */
  serviceManagedIdentityClientId?: string;
  serviceManagedIdentityPrincipalId?: string;
}

/** The demo subscriptions' tenants (fixed, like the subscriptions). */
export const demoTenantIds = ["4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7a9b11", "9e1c3a5b-7d9f-4b1d-a3c5-e7f9a1b3c522"] as const;

/** Demo subscriptions (fixed, so demos and docs can name them). */
export const demoSubscriptionIds = ["1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20", "8c2e4f6a-1b3d-4c5e-8f7a-9b0c1d2e3f40"] as const;

const seedNamespace = "0b9f3c1e-5d7a-4f2b-8e6c-1a3b5c7d9e0f";

/** One cluster of a fleet, before seeding. */
interface ClusterPlan {
  subscriptionId: string;
  resourceGroupName: string;
  clusterName: string;
  /** Operator name → identity ARM ID. */
  dataPlaneOperators: Record<string, string>;
  /** Control plane operator name → identity ARM ID; default one operator, `control-plane`, with `<cluster>-control-plane`. */
  controlPlaneOperators?: Record<string, string>;
  /** Identity IDs not to create in ARM. */
  missingIdentities?: string[];
  /** The cluster's tenant; the sandbox tenant when omitted. */
  tenantId?: string;
}

function seedCluster(target: SeedTarget, plan: ClusterPlan, documents: JsonObject[]): FleetClusterDescription {
  const clusterResourceId = clusterResourceIdFor(plan.subscriptionId, plan.resourceGroupName, plan.clusterName);
  const serviceManagedIdentityId = identityResourceId(plan.subscriptionId, plan.resourceGroupName, `${plan.clusterName}-service-managed-identity`);
  const controlPlaneOperators = plan.controlPlaneOperators ?? {
    "control-plane": identityResourceId(plan.subscriptionId, plan.resourceGroupName, `${plan.clusterName}-control-plane`),
  };
  const tenantId = plan.tenantId ?? sandboxTenantId;
  const missing = new Set((plan.missingIdentities ?? []).map((id) => id.toLowerCase()));
  for (const id of [...Object.values(plan.dataPlaneOperators), serviceManagedIdentityId, ...Object.values(controlPlaneOperators)]) {
    if (!missing.has(id.toLowerCase()) && target.identities.get(id) === undefined) {
      target.identities.create(id, { tenantId });
    }
  }
  const serviceManagedIdentity = target.identities.get(serviceManagedIdentityId);
  let registered: { identityUrl: string; clientId: string; objectId: string } | undefined;
  if (target.credentials !== undefined && serviceManagedIdentity !== undefined) {
    registered = target.credentials.registerCluster({
      clusterResourceId,
      tenantId,
      serviceManagedIdentity: serviceManagedIdentityId,
      clientId: serviceManagedIdentity.clientId,
      objectId: serviceManagedIdentity.principalId,
      controlPlaneOperatorIdentities: Object.values(controlPlaneOperators),
    });
    for (const id of Object.values(plan.dataPlaneOperators)) {
      target.credentials.directory.assignRole({ principalObjectId: serviceManagedIdentity.principalId, scope: id });
    }
  }
  const info = (id: string): ManagedIdentityInfo => {
    const identity = target.identities.get(id);
    return { resourceId: id, clientId: identity?.clientId ?? "", principalId: identity?.principalId ?? "" };
  };
  // The subscription's own document, once per subscription, as the frontend keeps it beside its clusters'.
  const subscriptionDocument = buildSubscriptionDocument(plan.subscriptionId);
  if (!documents.some((document) => document.id === subscriptionDocument.id)) {
    documents.push(subscriptionDocument);
  }
  documents.push(
    buildClusterDocument({
      clusterResourceId,
      dataPlaneOperators: plan.dataPlaneOperators,
      controlPlaneOperators,
      serviceManagedIdentity: serviceManagedIdentityId,
      ...(registered === undefined ? {} : { managedIdentitiesDataPlaneIdentityURL: registered.identityUrl }),
    }),
    buildServiceProviderClusterDocument({
      clusterResourceId,
      controlPlaneOperatorsIdentities: Object.fromEntries(Object.values(controlPlaneOperators).map((id) => [goLowerCase(id), info(id)])),
      serviceManagedIdentity: info(serviceManagedIdentityId),
    }),
  );
  const serviceProviderClusterResourceId = serviceProviderClusterResourceIdFor(clusterResourceId);
  return {
    clusterResourceId,
    clusterDocumentId: documentIdFor(clusterResourceId),
    serviceProviderClusterResourceId,
    serviceProviderClusterDocumentId: documentIdFor(serviceProviderClusterResourceId),
    partitionKey: goLowerCase(plan.subscriptionId),
    dataPlaneOperators: { ...plan.dataPlaneOperators },
    controlPlaneOperators: { ...controlPlaneOperators },
    serviceManagedIdentity: serviceManagedIdentityId,
    missingIdentities: [...(plan.missingIdentities ?? [])],
    tenantId,
    ...(registered === undefined
      ? {}
      : { identityUrl: registered.identityUrl, serviceManagedIdentityClientId: registered.clientId, serviceManagedIdentityPrincipalId: registered.objectId }),
  };
}

function demoPlans(): ClusterPlan[] {
  const [first, second] = demoSubscriptionIds;
  // Each demo subscription in a tenant of its own, as customers' are: in per-cluster mode each
  // cluster's SMI authenticates in its cluster's tenant.
  const [firstTenant, secondTenant] = demoTenantIds;
  const operatorIdentity = (subscriptionId: string, resourceGroupName: string, name: string): string =>
    identityResourceId(subscriptionId, resourceGroupName, name);
  const missingIdentity = operatorIdentity(second, "demo-rg-three", "demo-cluster-three-never-created");
  return [
    {
      subscriptionId: first,
      resourceGroupName: "demo-rg-one",
      clusterName: "demo-cluster-one",
      tenantId: firstTenant,
      controlPlaneOperators: {
        "control-plane": operatorIdentity(first, "demo-rg-one", "demo-cluster-one-control-plane"),
        "cluster-api-azure": operatorIdentity(first, "demo-rg-one", "demo-cluster-one-cluster-api-azure"),
      },
      dataPlaneOperators: {
        "disk-csi-driver": operatorIdentity(first, "demo-rg-one", "demo-cluster-one-disk-csi-driver"),
        "file-csi-driver": operatorIdentity(first, "demo-rg-one", "demo-cluster-one-file-csi-driver"),
        "image-registry": operatorIdentity(first, "demo-rg-one", "demo-cluster-one-image-registry"),
      },
    },
    {
      subscriptionId: first,
      resourceGroupName: "demo-rg-two",
      clusterName: "demo-cluster-two",
      tenantId: firstTenant,
      controlPlaneOperators: {
        // Two control plane operators share one identity, written in different casing: one entry of the data plane request upstream.
        "control-plane": operatorIdentity(first, "demo-rg-two", "demo-cluster-two-control-plane"),
        "cloud-controller-manager": `/subscriptions/${first}/resourcegroups/DEMO-RG-TWO/providers/microsoft.managedidentity/userassignedidentities/demo-cluster-two-control-plane`,
      },
      dataPlaneOperators: {
        // Two operators share one identity, written in different casing: one map key upstream.
        "disk-csi-driver": operatorIdentity(first, "demo-rg-two", "Shared-Operator-Identity"),
        "file-csi-driver": `/subscriptions/${first}/resourcegroups/DEMO-RG-TWO/providers/microsoft.managedidentity/userassignedidentities/shared-operator-identity`,
        "image-registry": operatorIdentity(first, "demo-rg-two", "demo-cluster-two-image-registry"),
      },
    },
    {
      subscriptionId: second,
      resourceGroupName: "demo-rg-three",
      clusterName: "demo-cluster-three",
      tenantId: secondTenant,
      dataPlaneOperators: {
        "disk-csi-driver": operatorIdentity(second, "demo-rg-three", "demo-cluster-three-disk-csi-driver"),
        "file-csi-driver": operatorIdentity(second, "demo-rg-three", "demo-cluster-three-file-csi-driver"),
        "image-registry": operatorIdentity(second, "demo-rg-three", "demo-cluster-three-image-registry"),
        "cloud-network-config": missingIdentity,
      },
      missingIdentities: [missingIdentity],
    },
  ];
}

/**
 * Seeds the demo fleet: three clusters across two subscriptions. `demo-cluster-two` has two
 * operators sharing one identity written in different casing; `demo-cluster-three` references one
 * identity that does not exist in ARM (it gets a ResourceNotFound). All other identities, the
 * service managed identities and one control plane identity per cluster exist in ARM. Documents
 * are written directly to the store (no HTTP, not counted).
 *
 * @param target - The sandbox's identity store and document store.
 * @returns A description of every seeded cluster.
 */
export function seedDemoFleet(target: SeedTarget): FleetClusterDescription[] {
  const documents: JsonObject[] = [];
  const description = demoPlans().map((plan) => seedCluster(target, plan, documents));
  target.documents.putMany(documents);
  return description;
}

/** Size of a generated fleet. */
export interface FleetSize {
  clusters: number;
  identitiesPerCluster: number;
  /** How many subscriptions to spread the clusters over; default min(clusters, 4). */
  subscriptions?: number;
}

/**
 * Seeds a generated fleet for benchmarks, in memory and without HTTP round trips. Names and
 * subscription IDs are deterministic (UUIDv5 of an index), so repeated runs see the same IDs.
 *
 * @param target - The sandbox's identity store and document store.
 * @param size - Number of clusters and data plane identities per cluster.
 * @returns A description of every seeded cluster.
 */
export function seedFleet(target: SeedTarget, size: FleetSize): FleetClusterDescription[] {
  const subscriptionCount = Math.max(1, size.subscriptions ?? Math.min(size.clusters, 4));
  const subscriptions = Array.from({ length: subscriptionCount }, (_, index) => uuidVersion5(`subscription-${index}`, seedNamespace));
  const documents: JsonObject[] = [];
  const description: FleetClusterDescription[] = [];
  for (let clusterIndex = 0; clusterIndex < size.clusters; clusterIndex += 1) {
    const subscriptionId = subscriptions[clusterIndex % subscriptionCount] ?? subscriptions[0] ?? "";
    const clusterName = `fleet-cluster-${clusterIndex}`;
    const resourceGroupName = `fleet-rg-${clusterIndex}`;
    const dataPlaneOperators: Record<string, string> = {};
    for (let identityIndex = 0; identityIndex < size.identitiesPerCluster; identityIndex += 1) {
      dataPlaneOperators[`operator-${identityIndex}`] = identityResourceId(subscriptionId, resourceGroupName, `${clusterName}-operator-${identityIndex}`);
    }
    description.push(seedCluster(target, { subscriptionId, resourceGroupName, clusterName, dataPlaneOperators }, documents));
  }
  target.documents.putMany(documents);
  return description;
}

/** One more cluster, named by the caller. */
export interface NamedCluster {
  subscriptionId: string;
  resourceGroupName: string;
  clusterName: string;
  identitiesPerCluster: number;
}

/**
 * Seeds one cluster named as the caller says, in memory and without HTTP round trips: two clusters
 * of one name in different resource groups, for one. Its identities are `<clusterName>-operator-<i>`
 * in its resource group, and it is seeded as {@link seedFleet} seeds each of its clusters.
 *
 * @param target - The sandbox's identity store, document store and (when given) credentials.
 * @param cluster - Where the cluster is and how many data plane identities it has.
 * @returns The description of the seeded cluster.
 */
export function seedNamedCluster(target: SeedTarget, cluster: NamedCluster): FleetClusterDescription {
  const { subscriptionId, resourceGroupName, clusterName } = cluster;
  const dataPlaneOperators: Record<string, string> = {};
  for (let identityIndex = 0; identityIndex < cluster.identitiesPerCluster; identityIndex += 1) {
    dataPlaneOperators[`operator-${identityIndex}`] = identityResourceId(subscriptionId, resourceGroupName, `${clusterName}-operator-${identityIndex}`);
  }
  const documents: JsonObject[] = [];
  const description = seedCluster(target, { subscriptionId, resourceGroupName, clusterName, dataPlaneOperators }, documents);
  target.documents.putMany(documents);
  return description;
}

/** Size of a fleet seeded one tenant per cluster. */
export interface TenantFleetSize {
  clusters: number;
  identitiesPerCluster: number;
}

/**
 * Seeds clusters each in its own tenant and subscription, for the per-cluster credential chain:
 * every identity reports the cluster's tenant, the SMI is a managed-identity principal of that
 * tenant registered with the data plane (its certificate is issued on the first data plane request),
 * the cluster document carries the identity URL, and the SMI alone (besides the fixed identity)
 * may read the cluster's data plane operator identities. Tenant and subscription IDs are
 * deterministic (UUIDv5 of the index); names are `tenant-cluster-<i>` in `tenant-rg-<i>`.
 *
 * @param target - The sandbox's identity store, document store and credentials.
 * @param size - Number of clusters and data plane identities per cluster.
 * @returns A description of every seeded cluster, with its tenant, identity URL and SMI IDs.
 */
export function seedTenantFleet(target: SeedTarget & { credentials: SandboxCredentials }, size: TenantFleetSize): FleetClusterDescription[] {
  const documents: JsonObject[] = [];
  const description: FleetClusterDescription[] = [];
  for (let clusterIndex = 0; clusterIndex < size.clusters; clusterIndex += 1) {
    const tenantId = uuidVersion5(`tenant-${clusterIndex}`, seedNamespace);
    const subscriptionId = uuidVersion5(`tenant-subscription-${clusterIndex}`, seedNamespace);
    const clusterName = `tenant-cluster-${clusterIndex}`;
    const resourceGroupName = `tenant-rg-${clusterIndex}`;
    const dataPlaneOperators: Record<string, string> = {};
    for (let identityIndex = 0; identityIndex < size.identitiesPerCluster; identityIndex += 1) {
      dataPlaneOperators[`operator-${identityIndex}`] = identityResourceId(subscriptionId, resourceGroupName, `${clusterName}-operator-${identityIndex}`);
    }
    description.push(seedCluster(target, { subscriptionId, resourceGroupName, clusterName, dataPlaneOperators, tenantId }, documents));
  }
  target.documents.putMany(documents);
  return description;
}
