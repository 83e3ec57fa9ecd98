/**
 * Workload identity federation (CI with OIDC, AKS): with AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID
 * and AZURE_TENANT_ID set and no managedIdentityClientId, the provider's credential is
 * DefaultAzureCredential and its WorkloadIdentityCredential goes to the Entra ID authority.
 * The authority here (AZURE_AUTHORITY_HOST) is a loopback TCP listener that records each connection
 * and closes it (MSAL retries for about ten seconds), so the attempt is observed without any network; the failure then names the keys
 * to set. Own file, own process: it sets AZURE_* variables read at credential construction.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCredentials } from "../../resources/azure/credentials";
import { readSettings } from "../../resources/core/settings";

const federatedToken = "federated-assertion-that-must-not-leak";
let listener: Server;
let connections = 0;
let tokenDirectory: string | undefined;
const savedEnvironment = { ...process.env };

beforeAll(async () => {
  listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const port = (listener.address() as { port: number }).port;
  tokenDirectory = mkdtempSync(join(tmpdir(), "aro-hcp-workload-identity-"));
  const tokenFile = join(tokenDirectory, "token");
  writeFileSync(tokenFile, federatedToken);
  for (const name of ["IDENTITY_ENDPOINT", "IDENTITY_HEADER", "MSI_ENDPOINT", "MSI_SECRET", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH"])
    delete process.env[name];
  Object.assign(process.env, {
    AZURE_FEDERATED_TOKEN_FILE: tokenFile,
    AZURE_CLIENT_ID: "5e2b1a3c-7d4f-4b6a-8c9d-0e1f2a3b4c5d",
    AZURE_TENANT_ID: "72f988bf-86f1-41af-91ab-2d7cd011db47",
    AZURE_AUTHORITY_HOST: `https://127.0.0.1:${port}`,
    // The chain's production credentials only: EnvironmentCredential, WorkloadIdentityCredential, ManagedIdentityCredential.
    AZURE_TOKEN_CREDENTIALS: "prod",
  });
});

afterAll(async () => {
  process.env = savedEnvironment;
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  // The assertion file is the test's own: nothing is left in the temporary directory.
  if (tokenDirectory !== undefined) rmSync(tokenDirectory, { recursive: true, force: true });
});

describe("workload identity federation", () => {
  it("is attempted against AZURE_AUTHORITY_HOST, and its failure names what to set without the assertion", async () => {
    const settings = readSettings({ get: () => undefined }, { ARO_HCP_COSMOS_ENDPOINT: "https://account.documents.azure.com", ARO_HCP_COSMOS_DATABASE: "db" });
    const { arm } = createCredentials(settings);
    const error = (await arm.getToken("https://management.azure.com/.default").catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(connections).toBeGreaterThan(0);
    expect(error.message).toMatch(
      /^no Azure credential could get a token for https:\/\/management\.azure\.com\/\.default: set 'aro-hcp-identity-status:managedIdentityClientId'/,
    );
    // WorkloadIdentityCredential's own message (MSAL could not resolve the fake authority's endpoints).
    expect(error.message).toContain("endpoints_resolution_error");
    expect(error.message).not.toContain(federatedToken);
    expect(["AggregateAuthenticationError", "AuthenticationError", "CredentialUnavailableError"]).toContain(error.name);
  });
});
