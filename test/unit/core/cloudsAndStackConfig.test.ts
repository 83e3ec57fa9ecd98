import { describe, expect, it } from "vitest";
import { chooseCredential } from "../../../resources/azure/credentials";
import { SettingsError, azureClouds, isLoopbackHost, programKeys, readSettings, settingsKeys, snapshotStackConfig } from "../../../resources/core/settings";

function settingsError(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect((error as Error).name).toBe("SettingsError");
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error("expected a SettingsError");
}

/** The provider host's config object: `get(fullKey)` plus every key in `rawConfig`. */
function hostConfig(values: Record<string, string>): { get(key: string): string | undefined; rawConfig: Record<string, string> } {
  return { get: (key) => values[key], rawConfig: values };
}

describe("azureCloud", () => {
  it.each([
    [
      "AzurePublicCloud",
      "https://a.documents.azure.com",
      "https://management.azure.com",
      "https://login.microsoftonline.com",
      "https://cosmos.azure.com/.default",
    ],
    [
      "AzureUSGovernment",
      "https://a.documents.azure.us",
      "https://management.usgovcloudapi.net",
      "https://login.microsoftonline.us",
      "https://cosmos.azure.us/.default",
    ],
    [
      "AzureChinaCloud",
      "https://a.documents.azure.cn",
      "https://management.chinacloudapi.cn",
      "https://login.chinacloudapi.cn",
      "https://cosmos.azure.cn/.default",
    ],
  ])("%s selects its ARM endpoint and audience, Entra ID authority and Cosmos DB audience", (cloud, cosmosEndpoint, arm, authority, cosmosScope) => {
    const settings = readSettings(undefined, { ARO_HCP_AZURE_CLOUD: cloud, ARO_HCP_COSMOS_ENDPOINT: cosmosEndpoint, ARO_HCP_COSMOS_DATABASE: "db" });
    expect(settings).toMatchObject({ azureCloud: cloud, armEndpoint: arm, armScope: `${arm}/.default`, authorityHost: authority, cosmosScope });
  });

  it.each([
    ["AzurePublicCloud", "https://a.documents.azure.us"],
    ["AzureUSGovernment", "https://a.documents.azure.com"],
    ["AzureChinaCloud", "https://a.documents.azure.com.evil.example"],
    ["AzurePublicCloud", "https://cosmos.example.com"],
  ])("refuses a %s stack whose Cosmos DB endpoint is %s, naming both keys", (cloud, cosmosEndpoint) => {
    const message = settingsError(() =>
      readSettings(undefined, { ARO_HCP_AZURE_CLOUD: cloud, ARO_HCP_COSMOS_ENDPOINT: cosmosEndpoint, ARO_HCP_COSMOS_DATABASE: "db" }),
    );
    expect(message).toContain(`'aro-hcp-identity-status:cosmosEndpoint' (or ARO_HCP_COSMOS_ENDPOINT) is on host '${new URL(cosmosEndpoint).hostname}'`);
    expect(message).toContain(`not a Cosmos DB account of ${cloud} ('aro-hcp-identity-status:azureCloud' (or ARO_HCP_AZURE_CLOUD))`);
    expect(message).toContain(`expected https://<account>${azureClouds[cloud as keyof typeof azureClouds].cosmosSuffix}`);
  });

  it.each(["https://127.0.0.1:8081", "https://localhost:8081", "https://[::1]:8081", "https://cosmos.localhost"])(
    "accepts the loopback endpoint %s in any cloud (sandbox, emulator)",
    (cosmosEndpoint) => {
      for (const cloud of Object.keys(azureClouds)) {
        expect(
          readSettings(undefined, { ARO_HCP_AZURE_CLOUD: cloud, ARO_HCP_COSMOS_ENDPOINT: cosmosEndpoint, ARO_HCP_COSMOS_DATABASE: "db" }).cosmosEndpoint,
        ).toBe(cosmosEndpoint);
      }
    },
  );

  it("does not treat look-alike hosts as loopback", () => {
    expect(isLoopbackHost("127.0.0.1.example.com")).toBe(false);
    expect(isLoopbackHost("localhost.example.com")).toBe(false);
    expect(isLoopbackHost("128.0.0.1")).toBe(false);
  });
});

describe("snapshotStackConfig", () => {
  it("reads the provider's keys from the aro-hcp-identity-status namespace whatever the running project", () => {
    const snapshot = snapshotStackConfig(
      hostConfig({ "aro-hcp-identity-status:cosmosDatabase": "db", "other-project:cosmosDatabase": "wrong", "azure-native:location": "eastus" }),
    );
    expect(snapshot.cosmosDatabase).toBe("db");
    expect(Object.keys(snapshot).sort()).toEqual([...settingsKeys].sort());
  });

  it("accepts the program's own keys", () => {
    expect(() => snapshotStackConfig(hostConfig({ "aro-hcp-identity-status:clusters": "[]" }))).not.toThrow();
    expect(programKeys).toEqual(["clusters", "clustersFile", "allowEmptyFleet", "allowClusterRemovals"]);
  });

  it("refuses unknown keys of the namespace, naming each and listing the known ones, without echoing values", () => {
    const message = settingsError(() =>
      snapshotStackConfig(
        hostConfig({
          "aro-hcp-identity-status:cosmosEndpiont": "https://secret-host",
          "aro-hcp-identity-status:lookupConcurency": "4",
          "aro-hcp-identity-status:cosmosKey": "c2VjcmV0",
        }),
      ),
    );
    expect(message).toContain("unknown config keys 'aro-hcp-identity-status:cosmosEndpiont', 'aro-hcp-identity-status:lookupConcurency'");
    for (const key of [...settingsKeys, ...programKeys]) expect(message).toContain(key);
    expect(message).not.toContain("secret-host");
    expect(message).not.toContain("c2VjcmV0");
  });

  it("skips the unknown-key check when the host gives no rawConfig", () => {
    expect(snapshotStackConfig({ get: () => undefined }).cosmosEndpoint).toBeUndefined();
  });
});

describe("chooseCredential", () => {
  const settings = { managedIdentityClientId: undefined, authorityHost: "https://login.microsoftonline.us" };

  it("uses the managed identity of managedIdentityClientId when set, whatever the environment", () => {
    expect(
      chooseCredential(
        { ...settings, managedIdentityClientId: "11111111-2222-3333-4444-555555555555" },
        { AZURE_FEDERATED_TOKEN_FILE: "/t", AZURE_CLIENT_ID: "c", AZURE_TENANT_ID: "t" },
      ),
    ).toEqual({
      kind: "managedIdentity",
      clientId: "11111111-2222-3333-4444-555555555555",
    });
  });

  it("uses DefaultAzureCredential with the cloud's authority, noting workload identity when its three variables are set", () => {
    expect(chooseCredential(settings, { AZURE_FEDERATED_TOKEN_FILE: "/var/run/token", AZURE_CLIENT_ID: "c", AZURE_TENANT_ID: "t" })).toEqual({
      kind: "default",
      authorityHost: "https://login.microsoftonline.us",
      workloadIdentity: true,
    });
    expect(chooseCredential(settings, { AZURE_CLIENT_ID: "c", AZURE_TENANT_ID: "t" })).toMatchObject({ kind: "default", workloadIdentity: false });
  });

  it("leaves the authority to AZURE_AUTHORITY_HOST when it is set", () => {
    expect(chooseCredential(settings, { AZURE_AUTHORITY_HOST: "https://login.example" })).toMatchObject({ kind: "default", authorityHost: undefined });
  });
});
