/**
 * Settings that are not per cluster: where Cosmos and ARM are, how to authenticate, and the
 * tunables of a pass. Read at run time from the stack config the provider's `configure` receives,
 * falling back to environment variables; never evaluated at module load (the stack config is only
 * known once `configure` runs in the provider host) and never taken from resource inputs.
 */

import { createHash } from "node:crypto";
import type { AzureCloudName } from "./azureClouds";
import { azureClouds, isLoopbackHost } from "./azureClouds";
import { guidPattern } from "./azureResourceId";
import { type IdsOnLookupFailure, idsOnLookupFailureValues } from "./statusDecision";

/** The Pulumi project name: the namespace of the config keys. */
export const projectName = "aro-hcp-identity-status";

export { azureClouds, isLoopbackHost } from "./azureClouds";
export type { AzureCloudName } from "./azureClouds";

/** Validated settings. */
export interface Settings {
  readonly azureCloud: AzureCloudName;
  readonly cosmosEndpoint: string;
  readonly cosmosDatabase: string;
  readonly cosmosContainer: string;
  /** Master key; undefined means Entra ID authentication with the Azure credential. */
  readonly cosmosKey: string | undefined;
  readonly armEndpoint: string;
  /** Token scope for ARM, e.g. `https://management.azure.com/.default`. */
  readonly armScope: string;
  /** Entra ID authority of the cloud, e.g. `https://login.microsoftonline.com`. */
  readonly authorityHost: string;
  /** The cloud-wide Cosmos DB token scope, e.g. `https://cosmos.azure.com/.default`. */
  readonly cosmosScope: string;
  /** Client ID of a user-assigned managed identity to authenticate as; undefined → DefaultAzureCredential. */
  readonly managedIdentityClientId: string | undefined;
  /** PEM bundle to trust in addition to the system roots (the sandbox's CA); per client, never global. */
  readonly tlsCaFile: string | undefined;
  readonly lookupConcurrency: number;
  readonly lookupTimeoutInMs: number;
  readonly documentWaitInMs: number;
  readonly documentPollIntervalInMs: number;
  readonly maxWriteAttempts: number;
  /** What a failed lookup does to stored IDs: `keep` unless the answer is definitive (default), or upstream's `clear`. */
  readonly idsOnLookupFailure: IdsOnLookupFailure;
}

/** A config source: `get(key)` with keys without namespace, like the provider's ConfigureRequest. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

/** One settings key: its config name, environment fallback and description (used by docs and tests). */
interface KeySpecification {
  readonly key: string;
  readonly environment: string;
}

const keys = {
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
} as const satisfies Record<string, KeySpecification>;

/**
 * A digest of the environment variables {@link readSettings} reads: equal digests (with the same
 * config) give equal settings. Hashed, so COSMOS_KEY is not kept in one more string.
 */
export function settingsEnvironmentKey(environment: Readonly<Record<string, string | undefined>>): string {
  return createHash("sha256")
    .update(JSON.stringify(Object.values(keys).map((specification) => environment[specification.environment] ?? null)))
    .digest("base64");
}

/** Every config key the hook reads (without namespace). */
export const settingsKeys: readonly string[] = Object.values(keys).map((specification) => specification.key);

/**
 * Keys of the same namespace that the program (index.ts) reads, not the provider: `clusters`,
 * `clustersFile` and `allowEmptyFleet` (program/emptyFleet.ts). Known here so that the provider,
 * which receives the whole stack config, does not refuse them as typos.
 */
export const programKeys: readonly string[] = ["clusters", "clustersFile", "allowEmptyFleet"];

/**
 * The stack config as the provider host hands it to `configure`. `get` takes a full key
 * (`<namespace>:<key>`). The host's object also carries every key of the stack in `rawConfig`
 * (@pulumi/pulumi 3.248 `cmd/dynamic-provider/config.js`); it is optional here because it is not
 * part of the typed contract, and the unknown-key check is skipped without it.
 */
export interface StackConfig {
  get(key: string): string | undefined;
  readonly rawConfig?: Readonly<Record<string, unknown>>;
}

/**
 * Takes the provider's keys out of the stack config `configure` receives, always from the
 * `aro-hcp-identity-status:` namespace (the host would otherwise prefix keys with the name of the
 * running project, which differs when another program uses this resource).
 * @throws SettingsError naming every key of that namespace that neither the provider nor the
 * program reads (a typo would otherwise be ignored silently), and listing the known keys.
 */
export function snapshotStackConfig(config: StackConfig): Record<string, string | undefined> {
  const rawKeys = config.rawConfig === undefined ? [] : Object.keys(config.rawConfig);
  const prefix = `${projectName}:`;
  const known = new Set([...settingsKeys, ...programKeys]);
  const unknown = rawKeys.filter((key) => key.startsWith(prefix) && !known.has(key.slice(prefix.length))).sort();
  if (unknown.length > 0) {
    throw new SettingsError(
      `invalid settings for the ServiceProviderCluster identity status provider: unknown config key${unknown.length === 1 ? "" : "s"} ` +
        `${unknown.map((key) => `'${key}'`).join(", ")}; the known keys of the '${projectName}' namespace are ${[...known].sort().join(", ")} ` +
        `(remove it with \`pulumi config rm <key>\`)`,
    );
  }
  const snapshot: Record<string, string | undefined> = {};
  for (const key of settingsKeys) {
    snapshot[key] = config.get(`${prefix}${key}`);
  }
  return snapshot;
}

/** Raised for a missing or malformed setting; the message names the key and the expected form. */
export class SettingsError extends Error {}
// On the prototype, like Error's own `name`: not an enumerable field of every instance.
SettingsError.prototype.name = "SettingsError";

/**
 * Reads and validates every setting. Config wins over the environment.
 * @throws SettingsError listing every problem, each naming `<project>:<key>` and its variable.
 */
export function readSettings(config: ConfigSource | undefined, environment: Readonly<Record<string, string | undefined>>): Settings {
  const problems: string[] = [];
  const raw = (specification: KeySpecification): string | undefined => {
    // A blank config value counts as unset, so the environment fallback applies (Pulumi.yaml
    // declares "" defaults, because the CLI treats a declared key without a default as required).
    const fromConfig = config?.get(specification.key);
    const value = fromConfig !== undefined && fromConfig.trim().length > 0 ? fromConfig : environment[specification.environment];
    return value === undefined || value.trim().length === 0 ? undefined : value.trim();
  };
  const name = (specification: KeySpecification): string => `'${projectName}:${specification.key}' (or ${specification.environment})`;

  const cloudValue = raw(keys.azureCloud) ?? "AzurePublicCloud";
  const azureCloud = (Object.keys(azureClouds) as AzureCloudName[]).find((cloud) => cloud.toLowerCase() === cloudValue.toLowerCase());
  if (azureCloud === undefined) {
    problems.push(`${name(keys.azureCloud)} is '${cloudValue}'; expected one of ${Object.keys(azureClouds).join(", ")}`);
  }
  const cloud = azureClouds[azureCloud ?? "AzurePublicCloud"];

  const url = (specification: KeySpecification, fallback?: string): string => {
    const value = raw(specification) ?? fallback;
    if (value === undefined) {
      problems.push(`${name(specification)} is not set; expected an https:// URL`);
      return "";
    }
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      problems.push(`${name(specification)} is not a URL; expected an https:// URL`);
      return "";
    }
    if (parsed.protocol !== "https:") {
      problems.push(`${name(specification)} must use https:// (got ${parsed.protocol}//)`);
    }
    return parsed.origin + parsed.pathname.replace(/\/+$/, "");
  };
  const integer = (specification: KeySpecification, fallback: number, minimum: number, maximum: number): number => {
    const value = raw(specification);
    if (value === undefined) {
      return fallback;
    }
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < minimum || parsed > maximum) {
      problems.push(`${name(specification)} is '${value}'; expected a whole number from ${minimum} to ${maximum}`);
      return fallback;
    }
    return parsed;
  };
  const positiveInteger = (specification: KeySpecification, fallback: number, maximum: number): number => integer(specification, fallback, 1, maximum);
  const nonNegativeInteger = (specification: KeySpecification, fallback: number, maximum: number): number => integer(specification, fallback, 0, maximum);

  const cosmosEndpoint = url(keys.cosmosEndpoint);
  if (cosmosEndpoint !== "" && azureCloud !== undefined) {
    const host = new URL(cosmosEndpoint).hostname.toLowerCase();
    if (!isLoopbackHost(host) && !host.endsWith(cloud.cosmosSuffix)) {
      problems.push(
        `${name(keys.cosmosEndpoint)} is on host '${host}', which is not a Cosmos DB account of ${azureCloud} ` +
          `(${name(keys.azureCloud)}); expected https://<account>${cloud.cosmosSuffix}, or set ${name(keys.azureCloud)} to the cloud of the account ` +
          `(${Object.entries(azureClouds)
            .map(([cloudName, known]) => `${cloudName}: ${known.cosmosSuffix}`)
            .join(", ")})`,
      );
    }
  }
  const cosmosDatabase = raw(keys.cosmosDatabase);
  if (cosmosDatabase === undefined) {
    problems.push(`${name(keys.cosmosDatabase)} is not set; expected the Cosmos DB database name`);
  }
  const cosmosContainer = raw(keys.cosmosContainer) ?? "Resources";
  const armEndpoint = url(keys.armEndpoint, cloud.armEndpoint);
  const managedIdentityClientId = raw(keys.managedIdentityClientId);
  if (managedIdentityClientId !== undefined && !guidPattern.test(managedIdentityClientId)) {
    problems.push(`${name(keys.managedIdentityClientId)} is not a GUID; expected the client ID of a managed identity`);
  }
  const lookupFailureValue = raw(keys.idsOnLookupFailure) ?? "keep";
  const idsOnLookupFailure = idsOnLookupFailureValues.find((value) => value === lookupFailureValue);
  if (idsOnLookupFailure === undefined) problems.push(`${name(keys.idsOnLookupFailure)} is '${lookupFailureValue}'; expected 'keep' or 'clear'`);
  const settings: Settings = {
    azureCloud: azureCloud ?? "AzurePublicCloud",
    cosmosEndpoint,
    cosmosDatabase: cosmosDatabase ?? "",
    cosmosContainer,
    cosmosKey: raw(keys.cosmosKey),
    armEndpoint,
    armScope: `${cloud.armAudience}/.default`,
    authorityHost: cloud.authorityHost,
    cosmosScope: `${cloud.cosmosAudience}/.default`,
    managedIdentityClientId,
    tlsCaFile: raw(keys.tlsCaFile),
    lookupConcurrency: positiveInteger(keys.lookupConcurrency, 8, 64),
    lookupTimeoutInMs: positiveInteger(keys.lookupTimeoutSeconds, 30, 600) * 1000,
    documentWaitInMs: nonNegativeInteger(keys.documentWaitSeconds, 60, 3600) * 1000,
    documentPollIntervalInMs: 1000,
    maxWriteAttempts: positiveInteger(keys.maxWriteAttempts, 5, 20),
    idsOnLookupFailure: idsOnLookupFailure ?? "keep",
  };
  if (problems.length > 0) {
    throw new SettingsError(`invalid settings for the ServiceProviderCluster identity status provider:\n  - ${problems.join("\n  - ")}`);
  }
  return Object.freeze(settings);
}
