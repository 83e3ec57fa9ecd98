/** Settings that are not per cluster, read at `configure` (never at module load) from the stack config, falling back to the environment. */
import type { AzureCloudName } from "./azureClouds";
import { azureClouds, isLoopbackHost } from "./azureClouds";
import { guidPattern } from "./azureResourceId";
import { type IdsOnLookupFailure, idsOnLookupFailureValues } from "./statusDecision";
import type { ConfigSource, Environment, KeySpecification } from "./settingsKeys";
import { SettingsError, keys, settingName as name } from "./settingsKeys";

// The door to the settings for the layers above: what they need of the modules this one reads.
export { SettingsError, programKeys, projectName, settingsEnvironmentKey, settingsKeys, snapshotStackConfig } from "./settingsKeys";
export type { ConfigSource } from "./settingsKeys";
export { azureClouds, isLoopbackHost } from "./azureClouds";

const credentialModes = ["processCredential", "clusterServiceManagedIdentity", "fixedIdentity"] as const;
type CredentialMode = (typeof credentialModes)[number];

/** An application or service principal that authenticates with a certificate bundle file. */
export interface CertificateIdentity {
  readonly clientId: string;
  readonly tenantId: string;
  /** PEM (key and chain) or PKCS#12 without a password; read again when it changes (rotation). */
  readonly certificateFile: string;
  /** Names the settings in messages, e.g. `'aro-hcp-identity-status:firstPartyCertificateFile' (or …)`. */
  readonly certificateFileSetting: string;
}

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

/** The readers of one readSettings call: each reads a key (config wins over environment) and records what is wrong in `problems`. */
function settingsReader(config: ConfigSource | undefined, environment: Environment) {
  const problems: string[] = [];
  const raw = (specification: KeySpecification): string | undefined => {
    // A blank config value counts as unset, so the environment fallback applies (Pulumi.yaml
    // declares "" defaults, because the CLI treats a declared key without a default as required).
    const fromConfig = config?.get(specification.key);
    const value = fromConfig !== undefined && fromConfig.trim().length > 0 ? fromConfig : environment[specification.environment];
    return value === undefined || value.trim().length === 0 ? undefined : value.trim();
  };
  return {
    problems,
    raw,
    url: (specification: KeySpecification, fallback?: string): string => {
      const value = raw(specification) ?? fallback;
      if (value === undefined || !URL.canParse(value)) {
        problems.push(`${name(specification)} ${value === undefined ? "is not set" : "is not a URL"}; expected an https:// URL`);
        return "";
      }
      const parsed = new URL(value);
      if (parsed.protocol !== "https:") problems.push(`${name(specification)} must use https:// (got ${parsed.protocol}//)`);
      return parsed.origin + parsed.pathname.replace(/\/+$/, "");
    },
    integer: (specification: KeySpecification, fallback: number, minimum: number, maximum: number): number => {
      const value = raw(specification);
      const parsed = Number(value);
      if (value === undefined) return fallback;
      if (Number.isInteger(parsed) && parsed >= minimum && parsed <= maximum) return parsed;
      problems.push(`${name(specification)} is '${value}'; expected a whole number from ${minimum} to ${maximum}`);
      return fallback;
    },
    guid: (specification: KeySpecification, what: string): string | undefined => {
      const value = raw(specification);
      if (value !== undefined && !guidPattern.test(value)) problems.push(`${name(specification)} is not a GUID; expected ${what}`);
      return value;
    },
    /** One of `values` (`caseless`: in any case), `fallback` when unset; undefined, with the problem, for another value. */
    oneOf: <T extends string>(
      specification: KeySpecification,
      values: readonly T[],
      fallback: T,
      caseless = false,
      expected = `one of ${values.join(", ")}`,
    ) => {
      const value = raw(specification) ?? fallback;
      const found = values.find((known) => known === value || (caseless && known.toLowerCase() === value.toLowerCase()));
      if (found === undefined) problems.push(`${name(specification)} is '${value}'; expected ${expected}`);
      return found;
    },
  };
}

/** Reads and validates every setting; throws a SettingsError listing every problem. */
export function readSettings(config: ConfigSource | undefined, environment: Environment): Settings {
  const reader = settingsReader(config, environment);
  const { problems, raw, url, integer, guid, oneOf } = reader;
  const azureCloud = oneOf(keys.azureCloud, Object.keys(azureClouds) as AzureCloudName[], "AzurePublicCloud", true);
  const cloud = azureClouds[azureCloud ?? "AzurePublicCloud"];
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
  if (cosmosDatabase === undefined) problems.push(`${name(keys.cosmosDatabase)} is not set; expected the Cosmos DB database name`);
  // Read in the order the problems are listed.
  const settings: Settings = {
    azureCloud: azureCloud ?? "AzurePublicCloud",
    cosmosEndpoint,
    cosmosDatabase: cosmosDatabase ?? "",
    cosmosContainer: raw(keys.cosmosContainer) ?? "Resources",
    cosmosKey: raw(keys.cosmosKey),
    armEndpoint: url(keys.armEndpoint, cloud.armEndpoint),
    armScope: `${cloud.armEndpoint}/.default`,
    managedIdentityClientId: guid(keys.managedIdentityClientId, "the client ID of a managed identity"),
    idsOnLookupFailure: oneOf(keys.idsOnLookupFailure, idsOnLookupFailureValues, "keep", false, "'keep' or 'clear'") ?? "keep",
    authorityHost: url(keys.authorityHost, cloud.authorityHost),
    cosmosScope: `${cloud.cosmosAudience}/.default`,
    ...readCredentialSettings(reader),
    tlsCaFile: raw(keys.tlsCaFile),
    lookupConcurrency: integer(keys.lookupConcurrency, 8, 1, 64),
    lookupTimeoutInMs: integer(keys.lookupTimeoutSeconds, 30, 1, 600) * 1000,
    documentWaitInMs: integer(keys.documentWaitSeconds, 60, 0, 3600) * 1000,
    documentPollIntervalInMs: 1000,
    maxWriteAttempts: integer(keys.maxWriteAttempts, 5, 1, 20),
    allowFixedIdentityOverwrite: oneOf(keys.allowFixedIdentityOverwrite, ["true", "false"], "false", true, "true or false") === "true",
  };
  if (problems.length > 0) throw new SettingsError(problems);
  return Object.freeze(settings);
}

type CredentialSettings = Pick<Settings, "credentialMode" | "firstParty" | "dataPlaneAudience" | "fixedIdentity" | "fixedIdentityPrincipalId">;

/** The credential modes' settings (docs/operations.md, "Credential modes"), cross-checked. */
function readCredentialSettings({ problems, raw, url, guid, oneOf }: ReturnType<typeof settingsReader>): CredentialSettings {
  const credentialMode = oneOf(keys.credentialMode, credentialModes, "processCredential");
  const firstPartyKeys = [keys.firstPartyClientId, keys.firstPartyTenantId, keys.firstPartyCertificateFile] as const;
  const fixedIdentityKeys = [keys.fixedIdentityClientId, keys.fixedIdentityTenantId, keys.fixedIdentityCertificateFile] as const;
  /** A client ID, tenant ID and bundle file that go together; all three or none. */
  const certificateIdentity = ([clientIdKey, tenantIdKey, fileKey]: readonly KeySpecification[], what: string): CertificateIdentity | undefined => {
    const clientId = guid(clientIdKey, `the client ID of ${what}`);
    const tenantId = guid(tenantIdKey, `the tenant ID of ${what}`);
    const certificateFile = raw(fileKey);
    if (clientId === undefined && tenantId === undefined && certificateFile === undefined) return undefined;
    const missing = [clientIdKey, tenantIdKey, fileKey].filter((specification) => raw(specification) === undefined);
    if (missing.length > 0) {
      problems.push(
        `${missing.map(name).join(" and ")} ${missing.length === 1 ? "is" : "are"} not set; ${what} needs its client ID, tenant ID and certificate bundle file`,
      );
      return undefined;
    }
    return { clientId: clientId ?? "", tenantId: tenantId ?? "", certificateFile: certificateFile ?? "", certificateFileSetting: name(fileKey) };
  };
  const firstParty = certificateIdentity(firstPartyKeys, "the first-party application");
  const fixedIdentity = certificateIdentity(fixedIdentityKeys, "the fixed identity");
  const dataPlaneAudience = raw(keys.dataPlaneAudience) === undefined ? undefined : url(keys.dataPlaneAudience);
  if (dataPlaneAudience !== undefined && /\/\.default$/i.test(raw(keys.dataPlaneAudience) ?? "")) {
    problems.push(`${name(keys.dataPlaneAudience)} ends with /.default; expected the audience itself (the hook adds /.default)`);
  }
  /** Keys that only another mode reads: set in this one, they are most likely a mistake in credentialMode. */
  const onlyFor = (mode: CredentialMode, specifications: readonly KeySpecification[]): void => {
    if (credentialMode === undefined || credentialMode === mode) return;
    const set = specifications.filter((specification) => raw(specification) !== undefined);
    if (set.length > 0) {
      problems.push(
        `${set.map(name).join(", ")} ${set.length === 1 ? "is" : "are"} set, which only ${name(keys.credentialMode)} '${mode}' reads, but the mode is '${credentialMode}'`,
      );
    }
  };
  onlyFor("clusterServiceManagedIdentity", [...firstPartyKeys, keys.dataPlaneAudience]);
  onlyFor("fixedIdentity", [...fixedIdentityKeys, keys.fixedIdentityPrincipalId]);
  const fixedIdentityPrincipalId = guid(keys.fixedIdentityPrincipalId, "the object (principal) ID of the fixed identity's service principal");
  if (credentialMode === "fixedIdentity" && fixedIdentityPrincipalId === undefined) {
    problems.push(
      `${name(keys.fixedIdentityPrincipalId)} is not set; ${name(keys.credentialMode)} 'fixedIdentity' records the fixed identity's client and principal IDs ` +
        "for every control plane operator identity and the service managed identity, as upstream's stand-in does (the principal ID is the object ID of its service principal)",
    );
  }
  if (credentialMode === "clusterServiceManagedIdentity" && dataPlaneAudience === undefined) {
    problems.push(
      `${name(keys.dataPlaneAudience)} is not set: ${name(keys.credentialMode)} 'clusterServiceManagedIdentity' asks Microsoft Entra ID for a token of the ` +
        "Managed Identities data plane's audience; set the value the ARO-HCP backend of the same cloud is configured with (msiRpDataPlaneAudienceResource), without /.default",
    );
  }
  if (credentialMode === "fixedIdentity" && fixedIdentityKeys.every((specification) => raw(specification) === undefined)) {
    const [clientId, tenantId, file] = fixedIdentityKeys.map(name);
    problems.push(`${clientId}, ${tenantId} and ${file} are not set; ${name(keys.credentialMode)} 'fixedIdentity' authenticates as that service principal`);
  }
  return { credentialMode: credentialMode ?? "processCredential", firstParty, dataPlaneAudience, fixedIdentity, fixedIdentityPrincipalId };
}
