/**
 * Credential selection through the real provider, the real @azure/identity, arm-msi and
 * @azure/cosmos clients, against an in-process sandbox: a user-assigned managed identity chosen by
 * client ID (`managedIdentityClientId`), and Cosmos DB with Entra ID tokens (no key).
 *
 * Own file, own process: @azure/identity caches managed-identity tokens process-wide, across
 * credential instances (docs/sandbox-notes), so mixing with other credential tests would let a
 * cached token hide which credential asked for it.
 */
import { countsOf } from "../fixtures/storedDocument";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownedStatusOf, readServiceProviderCluster } from "../fixtures/storedDocument";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { sandboxConfigSource } from "../fixtures/sandboxConfig";

const managedIdentityClientId = "6f0b3f0e-5d7c-4c5b-9a3e-2d1c0b9a8f7e";
let sandbox: Sandbox;
let certificateDirectory: string;
let cluster: FleetClusterDescription;
let otherCluster: FleetClusterDescription;
const savedEnvironment = { ...process.env };

beforeAll(async () => {
  certificateDirectory = mkdtempSync(join(tmpdir(), "aro-hcp-credentials-"));
  sandbox = await startSandbox({ certificateDirectory });
  [cluster, otherCluster] = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 3 }) as [FleetClusterDescription, FleetClusterDescription];
  // Set before any credential exists; the sandbox token endpoint is an App Service style one.
  process.env.IDENTITY_ENDPOINT = sandbox.endpoints.identity;
  process.env.IDENTITY_HEADER = sandbox.identityHeader;
  delete process.env.COSMOS_KEY;
});

afterAll(async () => {
  process.env = savedEnvironment;
  await sandbox?.stop();
  if (certificateDirectory !== undefined) rmSync(certificateDirectory, { recursive: true, force: true });
});

function settingsFor(values: Record<string, string>): { get(key: string): string | undefined } {
  return sandboxConfigSource(sandbox, values);
}

describe("a user-assigned managed identity chosen by client ID, and Cosmos DB with Entra ID", () => {
  it("records the status with tokens issued for that client ID only, for the ARM and Cosmos audiences", async () => {
    const issuedBefore = new Set(sandbox.tokens.issuedTokens());
    const provider = createManagedIdentityStatusProvider({ config: settingsFor({ managedIdentityClientId }) });
    const { outs } = (await provider.create({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators })) as {
      outs: ProviderOutputs;
    };

    // What was persisted, read back with the sandbox's own client.
    const document = await readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
    const identities = (document === undefined ? undefined : ownedStatusOf(document))?.identities ?? {};
    for (const identityId of Object.values(cluster.dataPlaneOperators)) {
      const expected = sandbox.identities.get(identityId);
      expect(identities[identityId.toLowerCase()]?.clientId, identityId).toBe(expected?.clientId ?? "(identity missing in ARM)");
    }
    expect(countsOf(outs).resolvedCount).toBe(3);

    const issued = sandbox.tokens.issuedTokens().filter((token) => !issuedBefore.has(token));
    const details = issued.map((token) => sandbox.tokens.verify(token)).map((verification) => (verification.valid ? verification.issued : undefined));
    expect(details.length).toBeGreaterThanOrEqual(2);
    expect(new Set(details.map((detail) => detail?.clientId))).toEqual(new Set([managedIdentityClientId]));
    const resources = new Set(details.map((detail) => detail?.resource.replace(/\/+$/, "")));
    // ARM: the public cloud's audience (not the sandbox URL); Cosmos: the account's own audience.
    expect(resources).toEqual(new Set(["https://management.azure.com", sandbox.endpoints.cosmos.replace(/\/+$/, "")]));
  });

  it("asks for the US Government ARM audience when azureCloud says so (the sandbox, like ARM, refuses it)", async () => {
    const provider = createManagedIdentityStatusProvider({ config: settingsFor({ managedIdentityClientId, azureCloud: "AzureUSGovernment" }) });
    const error = (await provider
      .create({ clusterResourceId: otherCluster.clusterResourceId, dataPlaneOperators: otherCluster.dataPlaneOperators })
      .catch((caught: unknown) => caught)) as Error;
    expect(error.message).toContain("wrong audience or resource 'https://management.usgovcloudapi.net'");
  });
});
