/**
 * When no credential works, the error names what to set, leaks nothing, and (for Cosmos) nothing
 * is written. Real provider, real SDK clients, in-process sandbox whose token endpoint is reached
 * with a wrong IDENTITY_HEADER, so it refuses every token request.
 *
 * Own file, own process: no token is ever issued here, so none can be cached (@azure/identity
 * caches managed-identity tokens process-wide) and hide the failure.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { sandboxConfigSource } from "../fixtures/sandboxConfig";

type Document = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const managedIdentityClientId = "0d3c6a1e-8b2f-4e7a-9c5d-1f2e3a4b5c6d";
const wrongIdentityHeader = "not-the-identity-header-value";
let sandbox: Sandbox;
let clusters: FleetClusterDescription[];
const savedEnvironment = { ...process.env };

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: mkdtempSync(join(tmpdir(), "aro-hcp-credential-errors-")) });
  clusters = seedFleet(sandbox, { clusters: 3, identitiesPerCluster: 2 });
  process.env.IDENTITY_ENDPOINT = sandbox.endpoints.identity;
  process.env.IDENTITY_HEADER = wrongIdentityHeader;
  for (const name of ["COSMOS_KEY", "AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_CLIENT_SECRET"]) delete process.env[name];
  // Production credentials only: no developer sign-in (Azure CLI…) can rescue the chain.
  process.env.AZURE_TOKEN_CREDENTIALS = "prod";
});

afterAll(async () => {
  process.env = savedEnvironment;
  await sandbox?.stop();
});

function configFor(values: Record<string, string>): { get(key: string): string | undefined } {
  return sandboxConfigSource(sandbox, values);
}

async function readStatus(cluster: FleetClusterDescription): Promise<Document | undefined> {
  const { resource } = await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<Document>();
  return resource?.properties?.status?.dataPlaneOperatorsManagedIdentities;
}

async function createFails(cluster: FleetClusterDescription, values: Record<string, string>): Promise<Error> {
  const provider = createManagedIdentityStatusProvider({ config: configFor(values) });
  const error = await provider.create({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof Error)) throw new Error("expected create to fail");
  return error;
}

function expectNoSecrets(message: string): void {
  expect(message).not.toContain(wrongIdentityHeader);
  expect(message).not.toContain(sandbox.cosmosKey);
}

describe("a managed identity whose token endpoint refuses (wrong IDENTITY_HEADER), Cosmos DB with the key", () => {
  it("fails each identity with CredentialUnavailable naming managedIdentityClientId, and persists the failures", async () => {
    const [cluster] = clusters as [FleetClusterDescription];
    process.env.COSMOS_KEY = sandbox.cosmosKey;
    try {
      const error = await createFails(cluster, { managedIdentityClientId });
      expect(error.message).toContain("failed to read 2 data plane operator managed identities");
      expect(error.message).toContain(`CredentialUnavailable: the managed identity with client ID ${managedIdentityClientId} ('aro-hcp-identity-status:managedIdentityClientId'`);
      expect(error.message).toContain("IDENTITY_HEADER");
      expectNoSecrets(error.message);
      const status = await readStatus(cluster);
      for (const identityId of Object.values(cluster.dataPlaneOperators)) {
        expect(status?.identities?.[identityId.toLowerCase()]?.retrievalError, identityId).toMatch(/^CredentialUnavailable: the managed identity with client ID/);
      }
    } finally {
      delete process.env.COSMOS_KEY;
    }
  });
});

describe("Cosmos DB with Entra ID and no working credential", () => {
  it("says to set COSMOS_KEY or cosmosKey, and writes nothing", async () => {
    const [, cluster] = clusters as [FleetClusterDescription, FleetClusterDescription];
    const before = await readStatus(cluster);
    const error = await createFails(cluster, { managedIdentityClientId });
    expect(error.message).toContain("no Azure credential could get a Cosmos DB token");
    expect(error.message).toContain("COSMOS_KEY");
    expect(error.message).toContain("pulumi config set --secret aro-hcp-identity-status:cosmosKey");
    expect(error.message).toContain("AZURE_FEDERATED_TOKEN_FILE for Entra ID");
    expectNoSecrets(error.message);
    expect(await readStatus(cluster)).toEqual(before);
  });
});

describe("DefaultAzureCredential (no managedIdentityClientId) and no working credential", () => {
  it("names managedIdentityClientId and the workload identity variables", async () => {
    const [, , cluster] = clusters as [FleetClusterDescription, FleetClusterDescription, FleetClusterDescription];
    process.env.COSMOS_KEY = sandbox.cosmosKey;
    try {
      const error = await createFails(cluster, {});
      expect(error.message).toContain("CredentialUnavailable: no Azure credential could get a token for https://management.azure.com/.default");
      expect(error.message).toContain("'aro-hcp-identity-status:managedIdentityClientId'");
      expect(error.message).toContain("AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE");
      expect(error.message).toContain("attempted: EnvironmentCredential is unavailable.");
      expectNoSecrets(error.message);
    } finally {
      delete process.env.COSMOS_KEY;
    }
  });
});
