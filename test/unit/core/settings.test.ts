import { describe, expect, it } from "vitest";
import type { ConfigSource } from "../../../resources/core/settings";
import { SettingsError, isLoopbackHost, programKeys, projectName, readSettings, settingsKeys, snapshotStackConfig } from "../../../resources/core/settings";

const required = { ARO_HCP_COSMOS_ENDPOINT: "https://aro-hcp.documents.azure.com:443/", ARO_HCP_COSMOS_DATABASE: "aro-hcp" };

function config(values: Record<string, string>): ConfigSource {
  return { get: (key) => values[key] };
}

function problemsOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    expect((error as Error).name).toBe("SettingsError");
    return (error as Error).message;
  }
  throw new Error("expected a SettingsError");
}

describe("readSettings", () => {
  it("fills every default when only the required settings are given", () => {
    expect(readSettings(undefined, required)).toEqual({
      azureCloud: "AzurePublicCloud",
      cosmosEndpoint: "https://aro-hcp.documents.azure.com",
      cosmosDatabase: "aro-hcp",
      cosmosContainer: "Resources",
      cosmosKey: undefined,
      armEndpoint: "https://management.azure.com",
      armScope: "https://management.azure.com/.default",
      authorityHost: "https://login.microsoftonline.com",
      cosmosScope: "https://cosmos.azure.com/.default",
      managedIdentityClientId: undefined,
      tlsCaFile: undefined,
      lookupConcurrency: 8,
      lookupTimeoutInMs: 30_000,
      documentWaitInMs: 60_000,
      documentPollIntervalInMs: 1000,
      maxWriteAttempts: 5,
      idsOnLookupFailure: "keep",
      credentialMode: "processCredential",
      firstParty: undefined,
      dataPlaneAudience: undefined,
      fixedIdentity: undefined,
      allowFixedIdentityOverwrite: false,
    });
  });

  it("reads allowFixedIdentityOverwrite as true or false, refusing anything else by name", () => {
    expect(readSettings(undefined, { ...required, ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE: "true" }).allowFixedIdentityOverwrite).toBe(true);
    expect(readSettings({ get: (key) => (key === "allowFixedIdentityOverwrite" ? "False" : undefined) }, required).allowFixedIdentityOverwrite).toBe(false);
    expect(() => readSettings(undefined, { ...required, ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE: "yes" })).toThrow(
      "'aro-hcp-identity-status:allowFixedIdentityOverwrite' (or ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE) is 'yes'; expected true or false",
    );
  });

  it("returns a frozen object", () => {
    expect(Object.isFrozen(readSettings(undefined, required))).toBe(true);
  });

  it("reads every setting from the environment", () => {
    const settings = readSettings(undefined, {
      ...required,
      ARO_HCP_COSMOS_ENDPOINT: "https://aro-hcp.documents.azure.us",
      ARO_HCP_AZURE_CLOUD: "azureusgovernment",
      ARO_HCP_COSMOS_CONTAINER: "Other",
      COSMOS_KEY: "a2V5",
      ARO_HCP_MANAGED_IDENTITY_CLIENT_ID: "11111111-2222-3333-4444-555555555555",
      ARO_HCP_TLS_CA_FILE: "/tmp/ca.pem",
      ARO_HCP_LOOKUP_CONCURRENCY: "3",
      ARO_HCP_LOOKUP_TIMEOUT_SECONDS: "7",
      ARO_HCP_DOCUMENT_WAIT_SECONDS: "0",
      ARO_HCP_MAX_WRITE_ATTEMPTS: "2",
    });
    expect(settings).toMatchObject({
      azureCloud: "AzureUSGovernment",
      armEndpoint: "https://management.usgovcloudapi.net",
      armScope: "https://management.usgovcloudapi.net/.default",
      authorityHost: "https://login.microsoftonline.us",
      cosmosScope: "https://cosmos.azure.us/.default",
      cosmosContainer: "Other",
      cosmosKey: "a2V5",
      managedIdentityClientId: "11111111-2222-3333-4444-555555555555",
      tlsCaFile: "/tmp/ca.pem",
      lookupConcurrency: 3,
      lookupTimeoutInMs: 7000,
      documentWaitInMs: 0,
      maxWriteAttempts: 2,
    });
  });

  it("lets config win over the environment", () => {
    const settings = readSettings(config({ cosmosDatabase: "from-config", lookupConcurrency: "2", armEndpoint: "https://arm.example.com/" }), {
      ...required,
      ARO_HCP_LOOKUP_CONCURRENCY: "9",
      ARO_HCP_ARM_ENDPOINT: "https://env.example.com",
    });
    expect(settings.cosmosDatabase).toBe("from-config");
    expect(settings.lookupConcurrency).toBe(2);
    expect(settings.armEndpoint).toBe("https://arm.example.com");
    expect(settings.cosmosEndpoint).toBe("https://aro-hcp.documents.azure.com");
  });

  it("falls back to the environment for keys the config does not set", () => {
    expect(readSettings(config({}), required).cosmosDatabase).toBe("aro-hcp");
  });

  it('falls back to the environment when the config value is blank, as Pulumi.yaml\'s "" defaults are', () => {
    const settings = readSettings(config({ cosmosKey: "", cosmosDatabase: "  " }), { ...required, COSMOS_KEY: "key-from-environment" });
    expect(settings.cosmosKey).toBe("key-from-environment");
    expect(settings.cosmosDatabase).toBe("aro-hcp");
  });

  it("trims values and treats blank ones as unset", () => {
    const settings = readSettings(undefined, { ...required, ARO_HCP_COSMOS_DATABASE: "  db  ", ARO_HCP_COSMOS_CONTAINER: "   " });
    expect(settings.cosmosDatabase).toBe("db");
    expect(settings.cosmosContainer).toBe("Resources");
  });

  it.each([
    ["a missing Cosmos endpoint", { ARO_HCP_COSMOS_DATABASE: "db" }, "cosmosEndpoint", "ARO_HCP_COSMOS_ENDPOINT", "is not set; expected an https:// URL"],
    [
      "a Cosmos endpoint that is not a URL",
      { ...required, ARO_HCP_COSMOS_ENDPOINT: "cosmos.example.com" },
      "cosmosEndpoint",
      "ARO_HCP_COSMOS_ENDPOINT",
      "is not a URL",
    ],
    [
      "a plain-http Cosmos endpoint",
      { ...required, ARO_HCP_COSMOS_ENDPOINT: "http://127.0.0.1:8081" },
      "cosmosEndpoint",
      "ARO_HCP_COSMOS_ENDPOINT",
      "must use https:// (got http://)",
    ],
    ["a missing Cosmos database", { ARO_HCP_COSMOS_ENDPOINT: "https://c" }, "cosmosDatabase", "ARO_HCP_COSMOS_DATABASE", "is not set"],
    [
      "an unknown cloud",
      { ...required, ARO_HCP_AZURE_CLOUD: "Mars" },
      "azureCloud",
      "ARO_HCP_AZURE_CLOUD",
      "is 'Mars'; expected one of AzurePublicCloud, AzureUSGovernment, AzureChinaCloud",
    ],
    ["a plain-http ARM endpoint", { ...required, ARO_HCP_ARM_ENDPOINT: "http://arm" }, "armEndpoint", "ARO_HCP_ARM_ENDPOINT", "must use https://"],
    [
      "a managed identity client ID that is not a GUID",
      { ...required, ARO_HCP_MANAGED_IDENTITY_CLIENT_ID: "my-identity" },
      "managedIdentityClientId",
      "ARO_HCP_MANAGED_IDENTITY_CLIENT_ID",
      "is not a GUID",
    ],
    [
      "a lookup concurrency of 0",
      { ...required, ARO_HCP_LOOKUP_CONCURRENCY: "0" },
      "lookupConcurrency",
      "ARO_HCP_LOOKUP_CONCURRENCY",
      "is '0'; expected a whole number from 1 to 64",
    ],
    [
      "a lookup concurrency above 64",
      { ...required, ARO_HCP_LOOKUP_CONCURRENCY: "65" },
      "lookupConcurrency",
      "ARO_HCP_LOOKUP_CONCURRENCY",
      "is '65'; expected a whole number from 1 to 64",
    ],
    [
      "a fractional lookup timeout",
      { ...required, ARO_HCP_LOOKUP_TIMEOUT_SECONDS: "1.5" },
      "lookupTimeoutSeconds",
      "ARO_HCP_LOOKUP_TIMEOUT_SECONDS",
      "is '1.5'; expected a whole number from 1 to 600",
    ],
    [
      "a negative document wait",
      { ...required, ARO_HCP_DOCUMENT_WAIT_SECONDS: "-1" },
      "documentWaitSeconds",
      "ARO_HCP_DOCUMENT_WAIT_SECONDS",
      "is '-1'; expected a whole number from 0 to 3600",
    ],
    [
      "a non-numeric write attempt count",
      { ...required, ARO_HCP_MAX_WRITE_ATTEMPTS: "many" },
      "maxWriteAttempts",
      "ARO_HCP_MAX_WRITE_ATTEMPTS",
      "is 'many'; expected a whole number from 1 to 20",
    ],
    [
      "an unknown lookup failure policy",
      { ...required, ARO_HCP_IDS_ON_LOOKUP_FAILURE: "forget" },
      "idsOnLookupFailure",
      "ARO_HCP_IDS_ON_LOOKUP_FAILURE",
      "is 'forget'; expected 'keep' or 'clear'",
    ],
  ])("refuses %s and names the key and its variable", (_title, environment, key, variable, reason) => {
    const message = problemsOf(() => readSettings(undefined, environment));
    expect(message).toContain(`'${projectName}:${key}' (or ${variable}) ${reason}`);
  });

  it("lists every problem at once", () => {
    const message = problemsOf(() => readSettings(undefined, { ARO_HCP_LOOKUP_CONCURRENCY: "x" }));
    expect(message).toContain("cosmosEndpoint");
    expect(message).toContain("cosmosDatabase");
    expect(message).toContain("lookupConcurrency");
  });

  it("never echoes the Cosmos key in an error", () => {
    const message = problemsOf(() => readSettings(undefined, { COSMOS_KEY: "c3VwZXItc2VjcmV0LWtleQ==" }));
    expect(message).not.toContain("c3VwZXItc2VjcmV0LWtleQ==");
  });
});

describe("readSettings: the Cosmos endpoint and the cloud", () => {
  it.each([
    ["a public-cloud account", "AzurePublicCloud", "https://account.documents.azure.com"],
    ["a private-link host of the account", "AzurePublicCloud", "https://account.privatelink.documents.azure.com"],
    ["a US Government account", "AzureUSGovernment", "https://account.documents.azure.us"],
    ["a China account", "AzureChinaCloud", "https://account.documents.azure.cn"],
    ["a loopback emulator", "AzurePublicCloud", "https://127.0.0.1:8081"],
    ["localhost", "AzureUSGovernment", "https://localhost:8081"],
    ["IPv6 loopback", "AzurePublicCloud", "https://[::1]:8081"],
  ])("accepts %s", (_title, cloud, endpoint) => {
    expect(readSettings(undefined, { ...required, ARO_HCP_AZURE_CLOUD: cloud, ARO_HCP_COSMOS_ENDPOINT: endpoint }).cosmosEndpoint).toBe(endpoint);
  });

  it.each([
    [
      "a host of no cloud",
      "AzurePublicCloud",
      "https://cosmos.example.com",
      "is on host 'cosmos.example.com', which is not a Cosmos DB account of AzurePublicCloud",
    ],
    [
      "a public account with the US Government cloud",
      "AzureUSGovernment",
      "https://account.documents.azure.com",
      "is on host 'account.documents.azure.com', which is not a Cosmos DB account of AzureUSGovernment",
    ],
    [
      "a look-alike host",
      "AzurePublicCloud",
      "https://account.documents.azure.com.example.net",
      "is on host 'account.documents.azure.com.example.net', which is not a Cosmos DB account of AzurePublicCloud",
    ],
  ])("refuses %s and says how to fix it", (_title, cloud, endpoint, reason) => {
    const message = problemsOf(() => readSettings(undefined, { ...required, ARO_HCP_AZURE_CLOUD: cloud, ARO_HCP_COSMOS_ENDPOINT: endpoint }));
    expect(message).toContain(`'${projectName}:cosmosEndpoint' (or ARO_HCP_COSMOS_ENDPOINT) ${reason}`);
    expect(message).toContain(`or set '${projectName}:azureCloud' (or ARO_HCP_AZURE_CLOUD) to the cloud of the account`);
  });
});

describe("isLoopbackHost", () => {
  it.each([
    ["localhost", true],
    ["LOCALHOST", true],
    ["cosmos.localhost", true],
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["[::1]", true],
    ["::1", true],
    ["128.0.0.1", false],
    ["127.0.0.1.example.com", false],
    ["localhost.example.com", false],
    ["10.0.0.1", false],
  ])("says %s is loopback: %s", (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe("snapshotStackConfig", () => {
  function stackConfig(values: Record<string, string>, withRaw = true): { get(key: string): string | undefined; rawConfig?: Record<string, string> } {
    return { get: (key) => values[key], ...(withRaw ? { rawConfig: values } : {}) };
  }

  it("reads every provider key from the project namespace, whatever the running project", () => {
    const snapshot = snapshotStackConfig(stackConfig({ [`${projectName}:cosmosDatabase`]: "db", "other-project:cosmosDatabase": "wrong", "aws:region": "x" }));
    expect(Object.keys(snapshot).sort()).toEqual([...settingsKeys].sort());
    expect(snapshot.cosmosDatabase).toBe("db");
    expect(snapshot.cosmosEndpoint).toBeUndefined();
  });

  it("accepts the keys the program reads", () => {
    const values = Object.fromEntries(programKeys.map((key) => [`${projectName}:${key}`, "x"]));
    expect(() => snapshotStackConfig(stackConfig(values))).not.toThrow();
  });

  it("refuses an unknown key of the namespace, naming it and the known keys", () => {
    let message = "";
    try {
      snapshotStackConfig(stackConfig({ [`${projectName}:cosmosDatbase`]: "db", [`${projectName}:lookupTimeout`]: "3" }));
    } catch (error) {
      expect(error).toBeInstanceOf(SettingsError);
      message = (error as Error).message;
    }
    expect(message).toContain(`unknown config keys '${projectName}:cosmosDatbase', '${projectName}:lookupTimeout'`);
    expect(message).toContain("cosmosDatabase");
    expect(message).not.toContain("'db'");
  });

  it("skips the unknown-key check when the host gives no raw config", () => {
    expect(snapshotStackConfig(stackConfig({ [`${projectName}:typo`]: "x", [`${projectName}:cosmosDatabase`]: "db" }, false)).cosmosDatabase).toBe("db");
  });
});

describe("settingsKeys", () => {
  it("lists every config key without namespace", () => {
    expect([...settingsKeys].sort()).toEqual(
      [
        "allowFixedIdentityOverwrite",
        "armEndpoint",
        "authorityHost",
        "azureCloud",
        "credentialMode",
        "dataPlaneAudience",
        "firstPartyCertificateFile",
        "firstPartyClientId",
        "firstPartyTenantId",
        "fixedIdentityCertificateFile",
        "fixedIdentityClientId",
        "fixedIdentityPrincipalId",
        "fixedIdentityTenantId",
        "cosmosContainer",
        "cosmosDatabase",
        "cosmosEndpoint",
        "cosmosKey",
        "documentWaitSeconds",
        "idsOnLookupFailure",
        "lookupConcurrency",
        "lookupTimeoutSeconds",
        "managedIdentityClientId",
        "maxWriteAttempts",
        "tlsCaFile",
      ].sort(),
    );
  });
});
