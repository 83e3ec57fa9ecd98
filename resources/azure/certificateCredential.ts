/**
 * The credential of a bundle file an operator rotates (the first party, the fixed identity), through
 * ClientCertificateCredential with the chain (x5c). The file is checked again at most once a minute,
 * as upstream re-reads its bundle, and at once after Entra ID refused the certificate in use; a file
 * caught half-written keeps the previous certificate until the next check.
 *
 * The ClientCertificateCredential is built again from the same certificate after every
 * {@link tokenRequestsPerClient} token requests: @azure/identity keeps each request's AbortController,
 * and through it the request's body, for the credential's life (Azure/azure-sdk-for-js#26161), and
 * MSAL keeps each tenant's token; the first party asks once in every cluster's tenant, so one
 * credential for a 2,000-cluster `up` held about 4 KB a cluster. Callers cache tokens
 * (sharedTokenCredential), so a new credential costs its MSAL client and that client's metadata
 * requests (80 against 3 in a 2,000-cluster `up`, beside 4,000 token requests).
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { readFileSync, statSync } from "node:fs";
import type { Agent } from "node:https";
import type { CertificateIdentity } from "../core/settings";
import { log } from "../logging/logger";
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { CertificateBundleError, parseCertificateBundle } from "./certificateBundle";
import { credentialError } from "./credentials";

const certificateFileRecheckIntervalInMs = 60 * 1000;
/** Token requests one ClientCertificateCredential makes before it is built again (see above). */
export const tokenRequestsPerClient = 64;

interface Loaded {
  readonly credential: TokenCredential;
  /** Token requests `credential` has made. */
  requests: number;
  readonly material: CertificateCredentialMaterial;
  /** The file's modification time and size: another version of the file changes either. */
  readonly version: string;
}

/** Why a file could not be read, as messages say it. */
export function fileUnreadableReason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return code === "ENOENT" ? "does not exist" : `cannot be read (${String(code ?? error)})`;
}

/** `additionallyAllowedTenants` is `["*"]` for the first party, whose tenant each data plane challenge names. */
export function certificateFileCredential(
  identity: CertificateIdentity,
  options: {
    readonly authorityHost: string;
    readonly disableInstanceDiscovery: boolean;
    readonly agent?: Agent;
    readonly additionallyAllowedTenants?: readonly string[];
  },
): TokenCredential {
  let loaded: Loaded | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;
  const source = `the certificate file ${identity.certificateFile} (${identity.certificateFileSetting})`;

  const clientOptions = {
    authorityHost: options.authorityHost,
    disableInstanceDiscovery: options.disableInstanceDiscovery,
    sendCertificateChain: true,
    ...(options.agent === undefined ? {} : { agent: options.agent }),
    ...(options.additionallyAllowedTenants === undefined ? {} : { additionallyAllowedTenants: [...options.additionallyAllowedTenants] }),
  };

  const keepOrThrow = (problem: string): boolean => {
    if (loaded === undefined) {
      throw credentialError(
        "CredentialUnavailableError",
        `${problem}; expected a PEM or PKCS#12 bundle (without a password) of the certificate chain and its private key`,
        { certificateFileProblem: true },
      );
    }
    log("warning", "credential", identity.clientId, `${problem}; the certificate read before stays in use until the file is readable again`);
    return false;
  };

  /** Reads the file again when it changed; returns whether another certificate is now in use. */
  const reload = (): boolean => {
    checkedAt = Date.now();
    let version: string;
    let bytes: Buffer;
    try {
      const { mtimeMs, size } = statSync(identity.certificateFile);
      version = `${mtimeMs}/${size}`;
      if (loaded?.version === version) return false;
      bytes = readFileSync(identity.certificateFile);
    } catch (error) {
      return keepOrThrow(`${source} ${fileUnreadableReason(error)}`);
    }
    let material: CertificateCredentialMaterial;
    try {
      material = parseCertificateBundle(bytes, source);
    } catch (error) {
      if (error instanceof CertificateBundleError) return keepOrThrow(error.message);
      throw error;
    }
    if (loaded !== undefined && loaded.material.thumbprint === material.thumbprint) {
      loaded = { ...loaded, version };
      return false;
    }
    if (loaded !== undefined) {
      log("info", "credential", identity.clientId, `${source}: a new certificate (SHA-256 ${material.thumbprint.slice(0, 16)}…) is in use from now on`);
    }
    loaded = { credential: clientFor(material), requests: 0, material, version };
    return true;
  };

  const clientFor = (material: CertificateCredentialMaterial): TokenCredential => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first certificate credential
    const { ClientCertificateCredential } = require("@azure/identity") as typeof import("@azure/identity");
    return new ClientCertificateCredential(identity.tenantId, identity.clientId, { certificate: material.pem }, clientOptions);
  };

  /** The credential in use for one more token request, built again after tokenRequestsPerClient. */
  const inUse = (): Loaded => {
    let current = loaded as Loaded;
    if (current.requests >= tokenRequestsPerClient) loaded = current = { ...current, credential: clientFor(current.material), requests: 0 };
    current.requests += 1;
    return current;
  };

  return {
    async getToken(scopes: string | string[], getTokenOptions?: GetTokenOptions): Promise<AccessToken | null> {
      if (loaded === undefined || Date.now() - checkedAt >= certificateFileRecheckIntervalInMs) reload();
      const current = inUse();
      try {
        return await current.credential.getToken(scopes, getTokenOptions);
      } catch (error) {
        // Refused with this certificate: a new file may be there, read now or by a concurrent refused call.
        reload();
        if ((loaded as Loaded).material.thumbprint !== current.material.thumbprint) return inUse().credential.getToken(scopes, getTokenOptions);
        throw error;
      }
    },
  };
}
