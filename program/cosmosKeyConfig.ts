/**
 * `cosmosKey` must be a secret when it is set. Pulumi.yaml cannot say so itself: with
 * `secret: true` the CLI also refuses the key's empty default as "not encrypted", which broke every
 * stack relying on COSMOS_KEY or Entra ID. So the key is declared plain with an empty default and
 * this check refuses a plain, non-empty value before anything is declared.
 */
import * as pulumi from "@pulumi/pulumi";

/**
 * The SDK's own test of a secret config key: `isConfigSecret`, marked internal in the typings
 * but exported by @pulumi/pulumi 3.248 (pinned); without it nothing can be told apart, so nothing is refused.
 */
function sdkIsConfigSecret(fullKey: string): boolean {
  const runtime = pulumi.runtime as unknown as { isConfigSecret?: (key: string) => boolean };
  return typeof runtime.isConfigSecret === "function" ? runtime.isConfigSecret(fullKey) : true;
}

/** @throws Error naming the key and the command that sets it as a secret. */
export function refusePlainCosmosKey(config: pulumi.Config, isSecret: (fullKey: string) => boolean = sdkIsConfigSecret): void {
  const fullKey = `${config.name}:cosmosKey`;
  if (isSecret(fullKey)) {
    return;
  }
  const value = config.get("cosmosKey");
  if (value !== undefined && value.length > 0) {
    throw new Error(
      `${fullKey} is stored in plain text in the stack config; set it as a secret (\`pulumi config set --secret cosmosKey\`), ` +
        "or leave it unset and use COSMOS_KEY in the environment or Entra ID",
    );
  }
}
