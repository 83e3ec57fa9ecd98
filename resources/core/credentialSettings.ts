/** The credential modes' settings (docs/operations.md, "Credential modes"), read by readSettings with its helpers. */
import { guidPattern } from "./azureResourceId";
import type { KeySpecification } from "./settingsKeys";
import { keys } from "./settingsKeys";

const credentialModes = ["processCredential", "clusterServiceManagedIdentity", "fixedIdentity"] as const;
export type CredentialMode = (typeof credentialModes)[number];

/** An application or service principal that authenticates with a certificate bundle file. */
export interface CertificateIdentity {
  readonly clientId: string;
  readonly tenantId: string;
  /** PEM (key and chain) or PKCS#12 without a password; read again when it changes (rotation). */
  readonly certificateFile: string;
  /** Names the settings in messages, e.g. `'aro-hcp-identity-status:firstPartyCertificateFile' (or …)`. */
  readonly certificateFileSetting: string;
}

/** The helpers of readSettings: the trimmed value of a key, its name for messages, a URL reader, and the problem list. */
export interface SettingsReader {
  readonly raw: (specification: KeySpecification) => string | undefined;
  readonly name: (specification: KeySpecification) => string;
  readonly url: (specification: KeySpecification, fallback?: string) => string;
  readonly problems: string[];
}

/** Reads and cross-checks the credential settings; problems go to `reader.problems`. */
export function readCredentialSettings(reader: SettingsReader): {
  credentialMode: CredentialMode;
  firstParty: CertificateIdentity | undefined;
  dataPlaneAudience: string | undefined;
  fixedIdentity: CertificateIdentity | undefined;
  fixedIdentityPrincipalId: string | undefined;
} {
  const { raw, name, url, problems } = reader;
  const modeValue = raw(keys.credentialMode) ?? "processCredential";
  const credentialMode = credentialModes.find((mode) => mode === modeValue);
  if (credentialMode === undefined) problems.push(`${name(keys.credentialMode)} is '${modeValue}'; expected one of ${credentialModes.join(", ")}`);
  const guid = (specification: KeySpecification, what: string): string | undefined => {
    const value = raw(specification);
    if (value !== undefined && !guidPattern.test(value)) problems.push(`${name(specification)} is not a GUID; expected ${what}`);
    return value;
  };
  /** A client ID, tenant ID and bundle file that go together; all three or none. */
  const certificateIdentity = (
    clientIdKey: KeySpecification,
    tenantIdKey: KeySpecification,
    fileKey: KeySpecification,
    what: string,
  ): CertificateIdentity | undefined => {
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
  const firstParty = certificateIdentity(keys.firstPartyClientId, keys.firstPartyTenantId, keys.firstPartyCertificateFile, "the first-party application");
  const fixedIdentity = certificateIdentity(keys.fixedIdentityClientId, keys.fixedIdentityTenantId, keys.fixedIdentityCertificateFile, "the fixed identity");
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
  onlyFor("clusterServiceManagedIdentity", [keys.firstPartyClientId, keys.firstPartyTenantId, keys.firstPartyCertificateFile, keys.dataPlaneAudience]);
  onlyFor("fixedIdentity", [keys.fixedIdentityClientId, keys.fixedIdentityTenantId, keys.fixedIdentityCertificateFile, keys.fixedIdentityPrincipalId]);
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
  if (
    credentialMode === "fixedIdentity" &&
    [keys.fixedIdentityClientId, keys.fixedIdentityTenantId, keys.fixedIdentityCertificateFile].every((specification) => raw(specification) === undefined)
  ) {
    problems.push(
      `${name(keys.fixedIdentityClientId)}, ${name(keys.fixedIdentityTenantId)} and ${name(keys.fixedIdentityCertificateFile)} are not set; ${name(keys.credentialMode)} 'fixedIdentity' authenticates as that service principal`,
    );
  }
  return { credentialMode: credentialMode ?? "processCredential", firstParty, dataPlaneAudience, fixedIdentity, fixedIdentityPrincipalId };
}
