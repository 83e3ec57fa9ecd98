/**
 * A sandbox for the reliability runs plus the pieces every scenario needs: the provider with the
 * real implementation and the real SDK clients, seeding of one cluster per lane, and direct reads
 * of the ServiceProviderCluster document for the invariant checks.
 */
import { join } from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { projectDirectory } from "../../cli/engine";
import { clusterDeclaration } from "../clusterDeclaration";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import type { ProviderInputs } from "../../resources/provider/providerInputs";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { ConfigSource } from "../../resources/core/settings";
import type { Sandbox, SandboxOptions } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedNamedCluster } from "../../sandbox/seed";
import { documentIdFor, uuidVersion5 } from "../../sandbox/documentBuilders";
import { sumOfCounts } from "../performance/statistics";

/** A JSON document as read back from Cosmos. */
export type Document = Record<string, unknown>;

/** The provider as the engine sees it. */
export type StatusProvider = pulumi.dynamic.ResourceProvider<ProviderInputs, ProviderOutputs>;

/** A running sandbox and the settings that point the hook at it. */
export interface ReliabilitySandbox {
  readonly sandbox: Sandbox;
  /** Stack config (project namespace, no prefix); secrets are not in it. */
  readonly config: Readonly<Record<string, string>>;
  /** Environment for the engine and the provider host: the Cosmos key and the identity variables. */
  readonly environment: Readonly<Record<string, string>>;
  /** Every secret the sandbox handed out, for the leak scans. */
  secrets(): string[];
  /** A provider with the real implementation and real SDK clients; `extraConfig` overrides settings. */
  provider(extraConfig?: Readonly<Record<string, string>>): StatusProvider;
  stop(): Promise<void>;
}

/** Settings the reliability runs use unless a scenario overrides them. */
export const reliabilityConfig: Readonly<Record<string, string>> = {
  documentWaitSeconds: "0",
  lookupTimeoutSeconds: "3",
  lookupConcurrency: "16",
  maxWriteAttempts: "4",
};

/**
 * Starts a sandbox and exports the managed-identity variables into this process, so the
 * in-process provider's DefaultAzureCredential reaches the sandbox token endpoint.
 */
export async function startReliabilitySandbox(name: string, options: SandboxOptions = {}): Promise<ReliabilitySandbox> {
  const sandbox = await startSandbox({ certificateDirectory: join(projectDirectory, ".sandbox", `reliability-${name}-${process.pid}`), ...options });
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const settings = { ...config, ...reliabilityConfig };
  Object.assign(process.env, environment);
  return {
    sandbox,
    config: settings,
    environment,
    secrets: () => [sandbox.cosmosKey, sandbox.identityHeader, sandbox.adminToken, ...sandbox.tokens.issuedTokens()],
    provider(extraConfig = {}) {
      const merged: Record<string, string> = { ...settings, ...extraConfig };
      const source: ConfigSource = { get: (key) => merged[key] };
      return createManagedIdentityStatusProvider({ config: source });
    },
    async stop() {
      await sandbox.stop();
    },
  };
}

const seedNamespace = "6f1c2a9e-3b7d-4e5f-8a1b-2c3d4e5f6a7b";

/**
 * Seeds `count` clusters named `<prefix>-<n>` in `<prefix>-rg-<n>` with `identitiesPerCluster` data
 * plane identities each, spread over three subscriptions, as seedNamedCluster seeds a cluster
 * (every identity, the service managed identity and a control plane identity exist in ARM).
 * Prefixes keep scenarios sharing one sandbox apart. The clusters are not registered with the
 * Managed Identities data plane (the sandbox's credentials are left out): their documents carry no
 * identity URL, so the hook in `processCredential` mode leaves their MSI half alone.
 */
export function seedLanes(sandbox: Sandbox, prefix: string, count: number, identitiesPerCluster: number): FleetClusterDescription[] {
  const target = { identities: sandbox.identities, documents: sandbox.documents };
  return Array.from({ length: count }, (_, index) =>
    seedNamedCluster(target, {
      subscriptionId: uuidVersion5(`reliability-subscription-${index % 3}`, seedNamespace),
      resourceGroupName: `${prefix}-rg-${index}`,
      clusterName: `${prefix}-${index}`,
      identitiesPerCluster,
    }),
  );
}

/** Reads the ServiceProviderCluster document directly (uncounted, no faults), or undefined. */
export function readServiceProviderCluster(sandbox: Sandbox, cluster: FleetClusterDescription): Document | undefined {
  const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId);
  return document === undefined ? undefined : structuredClone(document);
}

/** The subtree this hook owns, or undefined. */
export function ownedStatus(document: Document | undefined): Document | undefined {
  const properties = document?.properties as Document | undefined;
  const status = properties?.status as Document | undefined;
  return status?.dataPlaneOperatorsManagedIdentities as Document | undefined;
}

/** The MSI half of the status (checked by its own invariant). */
export function msiHalf(document: Document | undefined): Document | undefined {
  const properties = document?.properties as Document | undefined;
  const status = properties?.status as Document | undefined;
  return status?.msiManagedIdentities as Document | undefined;
}

/** The id of the document of the cluster's subscription, which the resource provider keeps beside its clusters'. */
export function subscriptionDocumentIdOf(cluster: FleetClusterDescription): string {
  return documentIdFor(`/subscriptions/${cluster.partitionKey}`);
}

/** Everything but the owned subtree, the hook's bookkeeping and Cosmos system fields. */
export function foreignFields(document: Document): Document {
  const copy = structuredClone(document) as Record<string, Record<string, Record<string, unknown>>>;
  for (const key of ["_etag", "_ts", "_rid", "_self", "_attachments"]) delete copy[key];
  delete copy.properties?.status?.dataPlaneOperatorsManagedIdentities;
  delete copy.properties?.status?.msiManagedIdentities;
  delete copy.properties?.cosmosMetadata?.instanceVersion;
  delete copy.properties?.cosmosMetadata?.etag;
  return copy;
}

/** Provider inputs declaring the cluster's operators explicitly. */
export function inputsFor(cluster: FleetClusterDescription, fromClusterDocument = false): ProviderInputs {
  return fromClusterDocument ? { clusterResourceId: cluster.clusterResourceId } : clusterDeclaration(cluster);
}

/** Moves the stored recheck time into the past, so the next pass looks every identity up again. */
export function makeRecheckDue(sandbox: Sandbox, cluster: FleetClusterDescription): void {
  if (ownedStatus(readServiceProviderCluster(sandbox, cluster))?.earliestRecheckTime !== undefined) {
    sandbox.documents.patch(
      cluster.partitionKey,
      cluster.serviceProviderClusterDocumentId,
      "/properties/status/dataPlaneOperatorsManagedIdentities/earliestRecheckTime",
      "2020-01-01T00:00:00Z",
    );
  }
}

/** Total Cosmos document writes counted by the sandbox. */
export function cosmosWrites(sandbox: Sandbox): number {
  return sumOfCounts(sandbox.statistics.snapshot().cosmos.documentWritesByMethod);
}
