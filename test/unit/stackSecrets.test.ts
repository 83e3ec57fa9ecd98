import { describe, expect, it } from "vitest";
import { missingPassphraseMessage, stackSettingsFileName, usesPassphrase } from "../../cli/stackSecrets";

const base = { stackName: "prod", stackSettingsText: undefined, secretsProviderOption: undefined, backendUrl: "file:///state", environment: {} };

describe("stackSettingsFileName", () => {
  it("names the file after the stack, the last segment of an org/project/stack name", () => {
    expect(stackSettingsFileName("prod")).toBe("Pulumi.prod.yaml");
    expect(stackSettingsFileName("acme/aro-hcp-identity-status/prod-eastus")).toBe("Pulumi.prod-eastus.yaml");
  });
});

describe("usesPassphrase", () => {
  it("follows the stack file first: an encryption salt or `passphrase` means a passphrase, another provider does not", () => {
    expect(usesPassphrase({ ...base, stackSettingsText: "encryptionsalt: v1:abc\nconfig: {}\n" })).toBe(true);
    expect(usesPassphrase({ ...base, stackSettingsText: "secretsprovider: passphrase\n" })).toBe(true);
    expect(usesPassphrase({ ...base, stackSettingsText: "secretsprovider: azurekeyvault://vault.vault.azure.net/keys/k\nencryptedkey: xyz\n" })).toBe(false);
  });

  it("for a stack still to be created: the --secrets-provider given, else the backend's default", () => {
    expect(usesPassphrase({ ...base, secretsProviderOption: "azurekeyvault://vault.vault.azure.net/keys/k" })).toBe(false);
    expect(usesPassphrase({ ...base, backendUrl: "azblob://state" })).toBe(true);
    expect(usesPassphrase({ ...base, backendUrl: "https://api.pulumi.com" })).toBe(false);
  });
});

describe("missingPassphraseMessage", () => {
  it("names the stack and both variables, and the key vault alternative", () => {
    const message = missingPassphraseMessage(base);
    expect(message).toContain("stack 'prod' encrypts its secrets with a passphrase");
    expect(message).toContain("neither PULUMI_CONFIG_PASSPHRASE nor PULUMI_CONFIG_PASSPHRASE_FILE is set");
    expect(message).toContain("--secrets-provider 'azurekeyvault://");
  });

  it("is silent when the user set a passphrase or its file, or the stack needs none", () => {
    expect(missingPassphraseMessage({ ...base, environment: { PULUMI_CONFIG_PASSPHRASE: "" } })).toBeUndefined();
    expect(missingPassphraseMessage({ ...base, environment: { PULUMI_CONFIG_PASSPHRASE_FILE: "/run/secrets/passphrase" } })).toBeUndefined();
    expect(missingPassphraseMessage({ ...base, backendUrl: "https://api.pulumi.com" })).toBeUndefined();
  });
});
