/**
 * How the provider's adapters describe their credential in messages, and read the extra CA bundle:
 * helpers of azureAdapters.ts.
 */
import { readFileSync } from "node:fs";
import type { CertificateIdentity, Settings } from "../core/settings";

/** The credential in use, for messages: the process credential is described by credentials.ts. */
export function describeCredentialMode(settings: Settings, processCredential: string): string {
  if (settings.credentialMode === "fixedIdentity" && settings.fixedIdentity !== undefined) {
    return describeCertificateIdentity("the fixed identity", settings.fixedIdentity);
  }
  if (settings.credentialMode !== "clusterServiceManagedIdentity") {
    return processCredential;
  }
  const firstParty = settings.firstParty === undefined ? processCredential : describeCertificateIdentity("the first-party application", settings.firstParty);
  return `each cluster's service managed identity, from the Managed Identities data plane as ${firstParty}`;
}

function describeCertificateIdentity(what: string, identity: CertificateIdentity): string {
  return `${what} ${identity.clientId} in tenant ${identity.tenantId} (certificate bundle ${identity.certificateFile}, ${identity.certificateFileSetting})`;
}

/** Reads the extra CA bundle; a failure names the setting, not only the file system error. */
export function readCertificateFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason = code === "ENOENT" ? "does not exist" : `cannot be read (${String(code ?? error)})`;
    const failure = new Error(
      `'aro-hcp-identity-status:tlsCaFile' (or ARO_HCP_TLS_CA_FILE) names ${path}, which ${reason}; expected a PEM bundle of extra CA certificates`,
    );
    // Not Error's options bag: that constructor is ES2022, and consumers compile with ES2020 libs.
    Object.defineProperty(failure, "cause", { value: error, writable: true, configurable: true, enumerable: false });
    throw failure;
  }
}
