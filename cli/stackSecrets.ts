/**
 * Whether a stack run through `npm run pulumi` can reach its secrets without a prompt, decided
 * first from its settings file (`Pulumi.<stack>.yaml`, {@link stackSettingsFileName}). The
 * Automation API has no terminal to prompt on, so a stack encrypted with a passphrase needs
 * PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE; the wrapper never supplies one for a
 * user's stack (only the throwaway `sandbox` stack gets a fixed one).
 */

/**
 * The stack settings file Pulumi reads next to Pulumi.yaml, `Pulumi.<stack>.yaml`, named after the
 * last segment of an org/project/stack name.
 */
export function stackSettingsFileName(stackName: string): string {
  return `Pulumi.${stackName.split("/").pop() ?? stackName}.yaml`;
}

/** What decides whether a passphrase is needed. */
export interface StackSecretsInput {
  readonly stackName: string;
  /** Text of Pulumi.<stack>.yaml, undefined when the stack has no settings file yet. */
  readonly stackSettingsText: string | undefined;
  /** `--secrets-provider` given to the wrapper (used when it creates the stack). */
  readonly secretsProviderOption: string | undefined;
  readonly backendUrl: string;
  readonly environment: Readonly<Record<string, string | undefined>>;
}

/** Backends whose default secrets provider is a passphrase (DIY backends). */
function isDiyBackend(backendUrl: string): boolean {
  return /^(file|azblob|s3|gs|postgres):\/\//.test(backendUrl);
}

function settingsValue(text: string, key: string): string | undefined {
  const match = new RegExp(`^${key}:\\s*(.+)$`, "m").exec(text);
  return match?.[1]?.trim().replace(/^["']|["']$/g, "");
}

/** True when the stack's secrets are (or, once created, will be) encrypted with a passphrase. */
export function usesPassphrase(input: Omit<StackSecretsInput, "environment">): boolean {
  if (input.stackSettingsText !== undefined) {
    const provider = settingsValue(input.stackSettingsText, "secretsprovider");
    if (settingsValue(input.stackSettingsText, "encryptionsalt") !== undefined || provider === "passphrase") {
      return true;
    }
    if (provider !== undefined) {
      return false;
    }
  }
  if (input.secretsProviderOption !== undefined) {
    return input.secretsProviderOption === "passphrase";
  }
  // A stack without its own provider: the backend's default (Pulumi Cloud encrypts for you).
  return isDiyBackend(input.backendUrl);
}

/** A message telling what to set, or undefined when the stack's secrets are reachable. */
export function missingPassphraseMessage(input: StackSecretsInput): string | undefined {
  const given = [input.environment.PULUMI_CONFIG_PASSPHRASE, input.environment.PULUMI_CONFIG_PASSPHRASE_FILE].some((value) => value !== undefined);
  if (given || !usesPassphrase(input)) {
    return undefined;
  }
  return (
    `stack '${input.stackName}' encrypts its secrets with a passphrase (the default secrets provider of a ${input.backendUrl.split("://")[0]}:// backend), ` +
    "and neither PULUMI_CONFIG_PASSPHRASE nor PULUMI_CONFIG_PASSPHRASE_FILE is set. Set one of them, or create the stack with a key vault: " +
    `npm run pulumi -- stack init ${input.stackName} --secrets-provider 'azurekeyvault://<vault>.vault.azure.net/keys/<key>'. ` +
    "(Only the throwaway 'sandbox' stack has a built-in passphrase.)"
  );
}
