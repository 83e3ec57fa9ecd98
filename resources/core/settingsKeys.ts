/** Each setting's config key and environment variable, the stack config's check against them, and the error a bad value raises. */
import { createHash } from "node:crypto";

/** The Pulumi project name: the namespace of the config keys. */
export const projectName = "aro-hcp-identity-status";

export interface KeySpecification {
  readonly key: string;
  readonly environment: string;
}

export const keys = {
  azureCloud: { key: "azureCloud", environment: "ARO_HCP_AZURE_CLOUD" },
  cosmosEndpoint: { key: "cosmosEndpoint", environment: "ARO_HCP_COSMOS_ENDPOINT" },
  cosmosDatabase: { key: "cosmosDatabase", environment: "ARO_HCP_COSMOS_DATABASE" },
  cosmosContainer: { key: "cosmosContainer", environment: "ARO_HCP_COSMOS_CONTAINER" },
  cosmosKey: { key: "cosmosKey", environment: "COSMOS_KEY" },
  armEndpoint: { key: "armEndpoint", environment: "ARO_HCP_ARM_ENDPOINT" },
  managedIdentityClientId: { key: "managedIdentityClientId", environment: "ARO_HCP_MANAGED_IDENTITY_CLIENT_ID" },
  tlsCaFile: { key: "tlsCaFile", environment: "ARO_HCP_TLS_CA_FILE" },
  lookupConcurrency: { key: "lookupConcurrency", environment: "ARO_HCP_LOOKUP_CONCURRENCY" },
  lookupTimeoutSeconds: { key: "lookupTimeoutSeconds", environment: "ARO_HCP_LOOKUP_TIMEOUT_SECONDS" },
  documentWaitSeconds: { key: "documentWaitSeconds", environment: "ARO_HCP_DOCUMENT_WAIT_SECONDS" },
  maxWriteAttempts: { key: "maxWriteAttempts", environment: "ARO_HCP_MAX_WRITE_ATTEMPTS" },
  idsOnLookupFailure: { key: "idsOnLookupFailure", environment: "ARO_HCP_IDS_ON_LOOKUP_FAILURE" },
  credentialMode: { key: "credentialMode", environment: "ARO_HCP_CREDENTIAL_MODE" },
  authorityHost: { key: "authorityHost", environment: "AZURE_AUTHORITY_HOST" },
  firstPartyClientId: { key: "firstPartyClientId", environment: "ARO_HCP_FIRST_PARTY_CLIENT_ID" },
  firstPartyTenantId: { key: "firstPartyTenantId", environment: "ARO_HCP_FIRST_PARTY_TENANT_ID" },
  firstPartyCertificateFile: { key: "firstPartyCertificateFile", environment: "ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE" },
  dataPlaneAudience: { key: "dataPlaneAudience", environment: "ARO_HCP_DATA_PLANE_AUDIENCE" },
  fixedIdentityClientId: { key: "fixedIdentityClientId", environment: "ARO_HCP_FIXED_IDENTITY_CLIENT_ID" },
  fixedIdentityTenantId: { key: "fixedIdentityTenantId", environment: "ARO_HCP_FIXED_IDENTITY_TENANT_ID" },
  fixedIdentityCertificateFile: { key: "fixedIdentityCertificateFile", environment: "ARO_HCP_FIXED_IDENTITY_CERTIFICATE_FILE" },
  fixedIdentityPrincipalId: { key: "fixedIdentityPrincipalId", environment: "ARO_HCP_FIXED_IDENTITY_PRINCIPAL_ID" },
  allowFixedIdentityOverwrite: { key: "allowFixedIdentityOverwrite", environment: "ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE" },
} as const satisfies Record<string, KeySpecification>;

export const settingsKeys: readonly string[] = Object.values(keys).map((specification) => specification.key);

/** A setting as messages name it: `'aro-hcp-identity-status:<key>' (or <ENVIRONMENT_VARIABLE>)`. */
export function settingName(specification: KeySpecification): string {
  return `'${projectName}:${specification.key}' (or ${specification.environment})`;
}

export const lookupTimeoutSetting = settingName(keys.lookupTimeoutSeconds);

export type Environment = Readonly<Record<string, string | undefined>>;

/** A config source: `get(key)` with keys without namespace, like the provider's ConfigureRequest. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

/** A digest of the environment variables readSettings reads, hashed so COSMOS_KEY is not kept in one more string. */
export function settingsEnvironmentKey(environment: Environment): string {
  return createHash("sha256")
    .update(JSON.stringify(Object.values(keys).map((specification) => environment[specification.environment] ?? null)))
    .digest("base64");
}

/** Raised for missing or malformed settings; each problem names the key, what is wrong and the expected form. */
export class SettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problemList(problems));
  }
}
// On the prototype, like Error's own `name`: not an enumerable field of every instance.
SettingsError.prototype.name = "SettingsError";

/** One problem as it is; several counted and listed. */
export function problemList(problems: readonly string[]): string {
  return problems.length === 1 ? problems[0] : `${problems.length} settings are wrong:\n  - ${problems.join("\n  - ")}`;
}

/** Keys of the same namespace that the program (index.ts, program/) reads, not the provider: known so that the provider does not refuse them. */
export const programKeys: readonly string[] = ["clusters", "clustersFile", "allowEmptyFleet", "allowClusterRemovals"];

/** The stack config as the host hands it to `configure`; without `rawConfig` the unknown-key check is skipped. */
interface StackConfig extends ConfigSource {
  readonly rawConfig?: Readonly<Record<string, unknown>>;
}

/** The provider's keys, always from the `aro-hcp-identity-status:` namespace; throws naming every key of it nobody reads (a typo). */
export function snapshotStackConfig(config: StackConfig): Record<string, string | undefined> {
  const prefix = `${projectName}:`;
  const known = new Set([...settingsKeys, ...programKeys]);
  const unknown = Object.keys(config.rawConfig ?? {})
    .filter((key) => key.startsWith(prefix) && !known.has(key.slice(prefix.length)))
    .sort();
  if (unknown.length > 0) {
    throw new SettingsError([
      `unknown config key${unknown.length === 1 ? "" : "s"} ` +
        `${unknown.map((key) => `'${key}'`).join(", ")}; the known keys of the '${projectName}' namespace are ${[...known].sort().join(", ")} ` +
        `(remove it with \`pulumi config rm <key>\`)`,
    ]);
  }
  return Object.fromEntries(settingsKeys.map((key) => [key, config.get(`${prefix}${key}`)]));
}
