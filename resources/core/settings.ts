/** Settings that are not per cluster, read at `configure` (never at module load) from the stack config, falling back to the environment. */

import type { AzureCloudName } from "./azureClouds";
import { azureClouds, isLoopbackHost } from "./azureClouds";
import { guidPattern } from "./azureResourceId";
import { type IdsOnLookupFailure, idsOnLookupFailureValues } from "./statusDecision";
import type { CertificateIdentity, CredentialMode } from "./credentialSettings";
import type { KeySpecification } from "./settingsKeys";
import { SettingsError, keys, projectName } from "./settingsKeys";
import { readCredentialSettings } from "./credentialSettings";

// The door to the settings for the layers above: what they need of the modules this one reads.
export { SettingsError, projectName, settingsEnvironmentKey, settingsKeys } from "./settingsKeys";
export type { CertificateIdentity } from "./credentialSettings";
export { azureClouds, isLoopbackHost } from "./azureClouds";

export interface Settings {
  readonly azureCloud: AzureCloudName;
  readonly cosmosEndpoint: string;
  readonly cosmosDatabase: string;
  readonly cosmosContainer: string;
  /** Master key; undefined means Entra ID authentication with the Azure credential. */
  readonly cosmosKey: string | undefined;
  readonly armEndpoint: string;
  readonly armScope: string;
  readonly authorityHost: string;
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
  /** Whose credential reads each cluster's identities (docs/operations.md, "Credential modes"). */
  readonly credentialMode: CredentialMode;
  /** `clusterServiceManagedIdentity`: the first party's certificate credential, or undefined for the process credential. */
  readonly firstParty: CertificateIdentity | undefined;
  /** `clusterServiceManagedIdentity`: the Managed Identities data plane audience (token scope without `/.default`). */
  readonly dataPlaneAudience: string | undefined;
  /** `fixedIdentity`: the service principal that plays every cluster's service managed identity. */
  readonly fixedIdentity: CertificateIdentity | undefined;
  /** `fixedIdentity`: that service principal's object ID, recorded as every MSI-based identity's principal ID. */
  readonly fixedIdentityPrincipalId: string | undefined;
  /** `fixedIdentity`: whether the stand-in's IDs may replace stored MSI IDs not its own. */
  readonly allowFixedIdentityOverwrite: boolean;
}

/** A config source: `get(key)` with keys without namespace, like the provider's ConfigureRequest. */
export interface ConfigSource {
  get(key: string): string | undefined;
}

export { programKeys, snapshotStackConfig } from "./stackConfig";

/** Reads and validates every setting (config wins over environment); throws a SettingsError listing every problem. */
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
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < minimum || parsed > maximum) {
      problems.push(`${name(specification)} is '${value}'; expected a whole number from ${minimum} to ${maximum}`);
      return fallback;
    }
    return parsed;
  };
  const boolean = (specification: KeySpecification): boolean => {
    const value = raw(specification);
    if (value === undefined || value.toLowerCase() === "false") return false;
    if (value.toLowerCase() === "true") return true;
    problems.push(`${name(specification)} is '${value}'; expected true or false`);
    return false;
  };

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
  const authorityHost = url(keys.authorityHost, cloud.authorityHost);
  const { credentialMode, firstParty, dataPlaneAudience, fixedIdentity, fixedIdentityPrincipalId } = readCredentialSettings({ raw, name, url, problems });
  const settings: Settings = {
    azureCloud: azureCloud ?? "AzurePublicCloud",
    cosmosEndpoint,
    cosmosDatabase: cosmosDatabase ?? "",
    cosmosContainer,
    cosmosKey: raw(keys.cosmosKey),
    armEndpoint,
    armScope: `${cloud.armAudience}/.default`,
    authorityHost,
    cosmosScope: `${cloud.cosmosAudience}/.default`,
    managedIdentityClientId,
    tlsCaFile: raw(keys.tlsCaFile),
    lookupConcurrency: integer(keys.lookupConcurrency, 8, 1, 64),
    lookupTimeoutInMs: integer(keys.lookupTimeoutSeconds, 30, 1, 600) * 1000,
    documentWaitInMs: integer(keys.documentWaitSeconds, 60, 0, 3600) * 1000,
    documentPollIntervalInMs: 1000,
    maxWriteAttempts: integer(keys.maxWriteAttempts, 5, 1, 20),
    idsOnLookupFailure: idsOnLookupFailure ?? "keep",
    credentialMode,
    firstParty,
    dataPlaneAudience,
    fixedIdentity,
    fixedIdentityPrincipalId,
    allowFixedIdentityOverwrite: boolean(keys.allowFixedIdentityOverwrite),
  };
  if (problems.length > 0) {
    // Each problem names the key, what is wrong and the expected form: with one, it is the message.
    throw new SettingsError(problems.length === 1 ? problems[0] : `${problems.length} settings are wrong:\n  - ${problems.join("\n  - ")}`, problems);
  }
  return Object.freeze(settings);
}
