/**
 * Issue 10, item 1: when the credential cannot get a token, nothing stored changes. Real
 * provider, real SDK clients over HTTPS against the in-process sandbox, whose token endpoint is
 * reached with a wrong IDENTITY_HEADER, so it refuses (401) every token request. Each cluster
 * holds the real IDs with a due recheck time, so the pass does consult Azure; after the failure
 * the ServiceProviderCluster document reads back byte-for-byte unchanged.
 *
 * Own file, own process: MSAL keeps the managed-identity source (endpoint and header) process-wide
 * (see test/fixtures/globalFailureScenario.ts). The token endpoint answering 500 and ARM failing
 * as a whole are in armGlobalFailures.test.ts; an unreachable token endpoint in
 * tokenEndpointUnreachable.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scenario } from "../fixtures/globalFailureScenario";
import { clientIdFor, createFails, expectNoSecrets, globalFailureLeavesDocumentUnchanged, readStatus, startScenario } from "../fixtures/globalFailureScenario";

const wrongIdentityHeader = "not-the-identity-header-value";
let scenario: Scenario;

beforeAll(async () => {
  scenario = await startScenario(3, { header: wrongIdentityHeader });
});

afterAll(async () => {
  await scenario?.stop();
});

describe("a managed identity whose token endpoint refuses (401), Cosmos DB with the key", () => {
  it("fails before any write with AzureAccessError naming managedIdentityClientId and IDENTITY_HEADER; stored IDs unchanged", async () => {
    process.env.COSMOS_KEY = scenario.sandbox.cosmosKey;
    try {
      const clientId = clientIdFor(1);
      const message = await globalFailureLeavesDocumentUnchanged(scenario.sandbox, scenario.clusters[0], { managedIdentityClientId: clientId }, [
        wrongIdentityHeader,
      ]);
      expect(message.startsWith(`the managed identity with client ID ${clientId} ('aro-hcp-identity-status:managedIdentityClientId'`), message).toBe(true);
      expect(message).toContain("IDENTITY_HEADER");
      // The cause names the credential: no second copy of it after the document.
      expect(message).not.toContain("Credential in use");
    } finally {
      delete process.env.COSMOS_KEY;
    }
  });
});

describe("Cosmos DB with Entra ID and no working credential", () => {
  it("says to set COSMOS_KEY or cosmosKey, and writes nothing", async () => {
    const cluster = scenario.clusters[1];
    const before = await readStatus(scenario.sandbox, cluster);
    const error = await createFails(scenario.sandbox, cluster, { managedIdentityClientId: clientIdFor(2) });
    expect(error.message).toContain("no Azure credential could get a Cosmos DB token");
    expect(error.message).toContain("COSMOS_KEY");
    expect(error.message).toContain("pulumi config set --secret aro-hcp-identity-status:cosmosKey");
    expect(error.message).toContain("AZURE_FEDERATED_TOKEN_FILE for Entra ID");
    expectNoSecrets(scenario.sandbox, error.message, [wrongIdentityHeader]);
    expect(await readStatus(scenario.sandbox, cluster)).toEqual(before);
  });
});

describe("DefaultAzureCredential (no managedIdentityClientId) and no working credential", () => {
  it("names managedIdentityClientId and the workload identity variables, and writes nothing", async () => {
    process.env.COSMOS_KEY = scenario.sandbox.cosmosKey;
    try {
      const message = await globalFailureLeavesDocumentUnchanged(scenario.sandbox, scenario.clusters[2], {}, [wrongIdentityHeader]);
      expect(message.startsWith("no Azure credential could get a token for https://management.azure.com/.default"), message).toBe(true);
      expect(message).toContain("'aro-hcp-identity-status:managedIdentityClientId'");
      expect(message).toContain("AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE");
      expect(message).toContain("attempted: EnvironmentCredential is unavailable.");
      expect(message).toContain("Credential in use: DefaultAzureCredential");
    } finally {
      delete process.env.COSMOS_KEY;
    }
  });
});
