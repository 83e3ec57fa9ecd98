/**
 * The entries of the bad-input catalogue: what is fed in, what the message must say, and (for the
 * few inputs accepted on purpose) what acceptance means.
 */
import { statusCounts, statusFromOutputs } from "../../resources/core/outputsStatus";
import { randomBytes } from "node:crypto";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { ReliabilitySandbox } from "./reliabilitySandbox";
import { inputsFor } from "./reliabilitySandbox";

/** One malformed input. */
export interface BadInput {
  readonly name: string;
  readonly inputs: object;
  /** Settings overrides (empty string = not set: the environment fallback applies). */
  readonly config?: Record<string, string>;
  /** What the message must contain: the field and what is wrong. */
  readonly expect: RegExp;
  /** For inputs accepted on purpose: describes the accepted result. */
  readonly accepted?: (outputs: ProviderOutputs, id: string) => string;
  prepare?(): Promise<void> | void;
  cleanUp?(): Promise<void> | void;
}

/** The catalogue for `cluster` (left intact) and `spare` (whose documents some entries break and restore). */
export function badInputs(reliability: ReliabilitySandbox, cluster: FleetClusterDescription, spare: FleetClusterDescription): BadInput[] {
  const { sandbox } = reliability;
  const valid = inputsFor(cluster);
  const clusterId = cluster.clusterResourceId;
  const subscriptionId = clusterId.split("/")[2] ?? "";
  const identity = Object.values(cluster.dataPlaneOperators)[0] ?? "";
  const withOperators = (dataPlaneOperators: unknown): Record<string, unknown> => ({ clusterResourceId: clusterId, dataPlaneOperators });
  const withCluster = (clusterResourceId: unknown): Record<string, unknown> => ({ ...valid, clusterResourceId });
  const spareDocuments = (): Array<Record<string, unknown>> =>
    [spare.serviceProviderClusterDocumentId, spare.clusterDocumentId].map((id) =>
      structuredClone(sandbox.documents.read(spare.partitionKey, id) as Record<string, unknown>),
    );
  let saved: Array<Record<string, unknown>> = [];
  let savedCosmosKey: string | undefined;
  const breakSpare = (change: () => void): Pick<BadInput, "prepare" | "cleanUp"> => ({
    prepare: () => {
      saved = spareDocuments();
      change();
    },
    cleanUp: () => {
      sandbox.documents.putMany(saved);
    },
  });
  const hugeMap = Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`operator-${index}`, identity]));
  const spareIdentity = Object.values(spare.dataPlaneOperators)[0] ?? "";
  const spareSharedIdentity = {
    "disk-csi-driver": spareIdentity,
    "file-csi-driver": spareIdentity.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/"),
  };
  const dataPlaneOperatorsPointer = "/properties/customerProperties/platform/operatorsAuthentication/userAssignedIdentities/dataPlaneOperators";
  return [
    {
      name: "clusterResourceId of another resource type (a virtual machine)",
      inputs: withCluster(clusterId.replace("Microsoft.RedHatOpenShift/hcpOpenShiftClusters", "Microsoft.Compute/virtualMachines")),
      expect: /clusterResourceId: must be a Microsoft\.RedHatOpenShift\/hcpOpenShiftClusters ID/,
    },
    { name: "clusterResourceId without the cluster name", inputs: withCluster(clusterId.replace(/\/[^/]+$/, "")), expect: /clusterResourceId: / },
    { name: "clusterResourceId that stops at the resource group", inputs: withCluster(clusterId.split("/providers/")[0]), expect: /clusterResourceId: / },
    {
      name: "clusterResourceId with a non-GUID subscription",
      inputs: withCluster(clusterId.replace(subscriptionId, "my-subscription")),
      expect: /clusterResourceId: has subscription 'my-subscription', which is not a GUID/,
    },
    {
      name: "clusterResourceId with leading and trailing whitespace",
      inputs: withCluster(`  ${clusterId} `),
      expect: /clusterResourceId: must not have leading or trailing whitespace/,
    },
    {
      name: "clusterResourceId with a line break inside",
      inputs: withCluster(clusterId.replace("/providers/", "/providers\n/")),
      expect: /clusterResourceId: /,
    },
    { name: "clusterResourceId empty", inputs: withCluster(""), expect: /clusterResourceId: must not be empty/ },
    { name: "clusterResourceId missing", inputs: { dataPlaneOperators: cluster.dataPlaneOperators }, expect: /clusterResourceId: is required/ },
    { name: "clusterResourceId is a number", inputs: withCluster(42), expect: /clusterResourceId: must be a string, got a number/ },
    {
      name: "clusterResourceId with a double slash",
      inputs: withCluster(clusterId.replace("/resourceGroups/", "//resourceGroups/")),
      expect: /clusterResourceId: has an empty segment/,
    },
    {
      name: "resource group name with a space",
      inputs: withCluster(clusterId.replace("/resourceGroups/", "/resourceGroups/my ")),
      expect: /clusterResourceId: has resource group 'my [^']*', which is not a valid name/,
    },
    {
      name: "dataPlaneOperators is a list",
      inputs: withOperators([identity]),
      expect: /dataPlaneOperators: must be a map of operator name to identity resource ID, got an array/,
    },
    { name: "dataPlaneOperators is a string", inputs: withOperators(identity), expect: /dataPlaneOperators: must be a map .* got a string/ },
    {
      name: "an operator's identity is a number",
      inputs: withOperators({ "disk-csi-driver": 7 }),
      expect: /dataPlaneOperators\.disk-csi-driver: identity resource ID must be a string, got a number/,
    },
    {
      name: "an operator's identity is null",
      inputs: withOperators({ "disk-csi-driver": null }),
      expect: /dataPlaneOperators\.disk-csi-driver: identity resource ID/,
    },
    {
      name: "an operator's identity names a cluster, not an identity",
      inputs: withOperators({ "disk-csi-driver": clusterId }),
      expect: /dataPlaneOperators\.disk-csi-driver: identity resource ID must be a Microsoft\.ManagedIdentity\/userAssignedIdentities ID/,
    },
    {
      name: "operator name is whitespace",
      inputs: withOperators({ "  ": identity }),
      expect: /dataPlaneOperators\. {2}: operator name must not be empty or whitespace/,
    },
    { name: "300 operators (a huge map)", inputs: withOperators(hugeMap), expect: /dataPlaneOperators: has 300 operators; at most 256 are supported/ },
    {
      name: "a 100 000-character identity ID",
      inputs: withOperators({ "disk-csi-driver": `${identity}${"x".repeat(100_000)}` }),
      expect: /dataPlaneOperators\.disk-csi-driver: identity resource ID/,
    },
    { name: "serviceManagedIdentity is not an identity ID", inputs: { ...valid, serviceManagedIdentity: "my-identity" }, expect: /serviceManagedIdentity: / },
    {
      name: "unknown input property (dataPlaneOperator, a typo)",
      inputs: { clusterResourceId: clusterId, dataPlaneOperator: cluster.dataPlaneOperators },
      expect: /dataPlaneOperator: is not a property of ServiceProviderClusterIdentityStatus/,
    },
    {
      name: "mixed-case segment names and provider namespace (accepted: canonicalised)",
      inputs: withCluster(clusterId.replace("/resourceGroups/", "/RESOURCEGROUPS/").replace("Microsoft.RedHatOpenShift", "microsoft.redhatopenshift")),
      expect: /^accepted: same document/,
      accepted: (_outputs, id) =>
        id === cluster.serviceProviderClusterDocumentId ? "accepted: same document as the canonical spelling" : `accepted: a different document ${id}`,
    },
    {
      name: "one identity under two operators in different casing (accepted: deduplicated)",
      inputs: { clusterResourceId: spare.clusterResourceId, dataPlaneOperators: spareSharedIdentity },
      expect: /^accepted: 1 entry for 2 operators/,
      accepted: (outputs) => `accepted: ${statusCounts(statusFromOutputs(outputs.status) ?? {}).identityCount} entry for 2 operators`,
      // The cluster document, the authority on the set, names the same two operators.
      ...breakSpare(() => sandbox.documents.patch(spare.partitionKey, spare.clusterDocumentId, dataPlaneOperatorsPointer, spareSharedIdentity)),
    },
    {
      name: "dataPlaneOperators naming another set than the cluster document, which upstream's controller reads",
      inputs: withOperators({ "disk-csi-driver": identity }),
      expect:
        /^the dataPlaneOperators input names other identities than the cluster's HCPOpenShiftCluster document.*nothing was read from Azure or written[\s\S]*The inputs name: .*The document names: /,
    },
    {
      name: "setting cosmosContainer names another container that exists (Billing): nothing of the subscription is there",
      inputs: valid,
      config: { cosmosContainer: "Billing" },
      expect: /neither the ServiceProviderCluster document .* nor the document of subscription .*'aro-hcp-identity-status:cosmosContainer' \(now 'Billing'\)/,
      prepare: async () => {
        await sandbox.cosmosContainer.database.containers.createIfNotExists({ id: "Billing", partitionKey: { paths: ["/partitionKey"] } });
      },
    },
    {
      name: "setting cosmosEndpoint uses http://",
      inputs: valid,
      config: { cosmosEndpoint: "http://127.0.0.1:8081" },
      expect: /'aro-hcp-identity-status:cosmosEndpoint' \(or ARO_HCP_COSMOS_ENDPOINT\) must use https:\/\//,
    },
    {
      name: "setting cosmosEndpoint is not a URL",
      inputs: valid,
      config: { cosmosEndpoint: "cosmos.example" },
      expect: /cosmosEndpoint' \(or ARO_HCP_COSMOS_ENDPOINT\) is not a URL/,
    },
    {
      name: "misspelt setting cosmosEndpont given to the settings reader directly, past the host's unknown-key check: the real key is missing",
      inputs: valid,
      config: { cosmosEndpoint: "", cosmosEndpont: "https://127.0.0.1:1" },
      expect: /'aro-hcp-identity-status:cosmosEndpoint' \(or ARO_HCP_COSMOS_ENDPOINT\) is not set/,
    },
    {
      name: "setting lookupConcurrency is 0",
      inputs: valid,
      config: { lookupConcurrency: "0" },
      expect: /lookupConcurrency' \(or ARO_HCP_LOOKUP_CONCURRENCY\) is '0'; expected a whole number from 1 to 64/,
    },
    {
      name: "setting lookupTimeoutSeconds is not a number",
      inputs: valid,
      config: { lookupTimeoutSeconds: "soon" },
      expect: /lookupTimeoutSeconds' .* is 'soon'; expected a whole number/,
    },
    {
      name: "setting managedIdentityClientId is not a GUID",
      inputs: valid,
      config: { managedIdentityClientId: "my-identity" },
      expect: /managedIdentityClientId' .* is not a GUID/,
    },
    {
      name: "setting azureCloud is unknown",
      inputs: valid,
      config: { azureCloud: "AzureMarsCloud" },
      expect: /azureCloud' .* is 'AzureMarsCloud'; expected one of AzurePublicCloud/,
    },
    {
      name: "unreachable Cosmos endpoint",
      inputs: valid,
      config: { cosmosEndpoint: "https://127.0.0.1:9" },
      expect: /(ECONNREFUSED|connect|Connection).*\[reading the (HCPOpenShiftCluster|ServiceProviderCluster) document of cluster /i,
    },
    {
      name: "wrong Cosmos key",
      inputs: valid,
      config: { cosmosKey: randomBytes(64).toString("base64") },
      expect: /^\S+ \(HTTP 401\): .*\[reading the (HCPOpenShiftCluster|ServiceProviderCluster) document of cluster /,
    },
    {
      name: "tlsCaFile names a missing file",
      inputs: valid,
      config: { tlsCaFile: "/nonexistent/sandbox-ca.pem" },
      expect: /'aro-hcp-identity-status:tlsCaFile' \(or ARO_HCP_TLS_CA_FILE\) .*\/nonexistent\/sandbox-ca\.pem/,
    },
    {
      name: "the ServiceProviderCluster document is another resource type",
      inputs: inputsFor(spare),
      expect:
        /^the ServiceProviderCluster document is not in the layout upstream writes: resourceType is 'Microsoft\.RedHatOpenShift\/hcpOpenShiftClusters', expected.* Cluster \S+: nothing was written/,
      ...breakSpare(() =>
        sandbox.documents.patch(spare.partitionKey, spare.serviceProviderClusterDocumentId, "/resourceType", "Microsoft.RedHatOpenShift/hcpOpenShiftClusters"),
      ),
    },
    {
      name: "the document's properties.status is a string (unexpected schema)",
      inputs: inputsFor(spare),
      expect: /properties\.status is a string, expected an object/,
      ...breakSpare(() => sandbox.documents.patch(spare.partitionKey, spare.serviceProviderClusterDocumentId, "/properties/status", "ready")),
    },
    {
      name: "the ServiceProviderCluster document does not exist",
      inputs: inputsFor(spare),
      expect: /^the ServiceProviderCluster document of cluster \S+ \(\S+\) does not exist .*Nothing was written/,
      ...breakSpare(() => sandbox.documents.delete(spare.partitionKey, spare.serviceProviderClusterDocumentId)),
    },
    {
      name: "the cluster document's dataPlaneOperators is a list (operators read from Cosmos)",
      inputs: inputsFor(spare, true),
      expect:
        /^the cluster's HCPOpenShiftCluster document does not name its data plane operator identities in a form upstream writes: [\s\S]*dataPlaneOperators is an array, expected an object/,
      ...breakSpare(() =>
        sandbox.documents.patch(
          spare.partitionKey,
          spare.clusterDocumentId,
          "/properties/customerProperties/platform/operatorsAuthentication/userAssignedIdentities/dataPlaneOperators",
          ["x"],
        ),
      ),
    },
    {
      name: "expired token (Cosmos with Entra ID authentication)",
      inputs: valid,
      config: { cosmosKey: "", lookupConcurrency: "3" },
      expect: /^\S+ \(HTTP 401\): .*\[reading the (HCPOpenShiftCluster|ServiceProviderCluster) document of cluster /,
      prepare: async () => {
        // A blank cosmosKey falls back to COSMOS_KEY, so take the key out of the environment too:
        // Cosmos then authenticates with the Azure credential (Entra ID).
        savedCosmosKey = process.env.COSMOS_KEY;
        delete process.env.COSMOS_KEY;
        // Warm the credential's token cache, then expire every token the sandbox issued.
        await reliability.provider({ cosmosKey: "", lookupConcurrency: "3" }).create(valid);
        sandbox.tokens.expireAll();
      },
      cleanUp: () => {
        if (savedCosmosKey !== undefined) process.env.COSMOS_KEY = savedCosmosKey;
      },
    },
  ];
}
