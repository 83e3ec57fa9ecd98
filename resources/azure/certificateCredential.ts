/**
 * Client-certificate credentials for a bundle file that an operator rotates (the first-party
 * application, the fixed identity), through `@azure/identity`: one per process. A cluster's service
 * managed identity, whose bundle the Managed Identities data plane hands over, has a lighter
 * credential of its own (assertionTokenCredential.ts).
 *
 * A bundle file is read when the credential is first used and checked again at most once a
 * {@link certificateFileRecheckIntervalInMs} (upstream re-reads its first-party bundle about once
 * a minute), and at once after Entra ID refused the current certificate: a rotated file takes over
 * without a restart. A file caught half-written (unreadable, or a key that matches no certificate)
 * keeps the previous certificate in use until the next check; with no previous one the failure is
 * the credential's, named after its setting.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { readFileSync, statSync } from "node:fs";
import type { Agent } from "node:https";
import type { CertificateIdentity } from "../core/settings";
import { log } from "../logging/logger";
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { CertificateBundleError, parseCertificateBundle } from "./certificateBundle";

/** A bundle file is checked for a new version at most this often. */
export const certificateFileRecheckIntervalInMs = 60 * 1000;

/** Where a certificate credential authenticates, and how it reaches Entra ID. */
export interface CertificateCredentialOptions {
  /** The Entra ID authority host (`https://login.microsoftonline.com`, a regional endpoint, or the sandbox's). */
  readonly authorityHost: string;
  /** Turned off for a regional or local authority, as upstream does for service managed identities. */
  readonly disableInstanceDiscovery: boolean;
  /** Carries the extra CA of `tlsCaFile`, per client. */
  readonly agent?: Agent;
  /**
   * Tenants besides its own it may get tokens in: `["*"]` for the first party, whose tenant each
   * cluster's data plane challenge names (upstream builds its first-party credential the same way).
   */
  readonly additionallyAllowedTenants?: readonly string[];
}

/** A credential for a bundle file's certificate material as read; the chain goes with every assertion (x5c). */
function certificateCredential(
  tenantId: string,
  clientId: string,
  material: CertificateCredentialMaterial,
  options: CertificateCredentialOptions,
): TokenCredential {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first certificate credential (credentials.ts explains why)
  const identity = require("@azure/identity") as typeof import("@azure/identity");
  return new identity.ClientCertificateCredential(
    tenantId,
    clientId,
    { certificate: material.pem },
    {
      authorityHost: options.authorityHost,
      disableInstanceDiscovery: options.disableInstanceDiscovery,
      sendCertificateChain: true,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.additionallyAllowedTenants === undefined ? {} : { additionallyAllowedTenants: [...options.additionallyAllowedTenants] }),
    },
  );
}

interface Loaded {
  readonly credential: TokenCredential;
  readonly thumbprint: string;
  /** What the file looked like when read: a change of either means another version. */
  readonly mtimeMs: number;
  readonly size: number;
}

/**
 * A credential error the lookup classifies as the credential's (errors.ts: CredentialUnavailableError),
 * marked as a problem of the local bundle file: reading it again costs nothing, so a failure of it
 * is not held (clusterCredentials.ts), and a file caught half-written during a rotation fails only
 * the passes that met it.
 */
function credentialUnavailable(message: string): Error {
  const error = new Error(message);
  Object.defineProperty(error, "name", { value: "CredentialUnavailableError", writable: true, configurable: true, enumerable: false });
  Object.defineProperty(error, "certificateFileProblem", { value: true, enumerable: false });
  return error;
}

/** Whether an error (or the error it wraps) is a bundle file that could not be read or used. */
export function isCertificateFileProblem(error: unknown): boolean {
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 4; depth += 1) {
    if ((current as { certificateFileProblem?: unknown }).certificateFileProblem === true) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * A credential for `identity`'s bundle file that follows its rotation (see the module comment).
 * @param now - The clock, injected by tests.
 */
export function certificateFileCredential(identity: CertificateIdentity, options: CertificateCredentialOptions, now: () => number = Date.now): TokenCredential {
  let loaded: Loaded | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;
  const source = `the certificate file ${identity.certificateFile} (${identity.certificateFileSetting})`;

  /** Reads the file again when it changed; returns whether another certificate is now in use. */
  const reload = (): boolean => {
    checkedAt = now();
    let mtimeMs: number;
    let size: number;
    let bytes: Buffer;
    try {
      ({ mtimeMs, size } = statSync(identity.certificateFile));
      if (loaded !== undefined && loaded.mtimeMs === mtimeMs && loaded.size === size) return false;
      bytes = readFileSync(identity.certificateFile);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const reason = code === "ENOENT" ? "does not exist" : `cannot be read (${typeof code === "string" ? code : "error"})`;
      return keepOrThrow(`${source} ${reason}`);
    }
    let material: CertificateCredentialMaterial;
    try {
      material = parseCertificateBundle(bytes, source);
    } catch (error) {
      if (error instanceof CertificateBundleError) return keepOrThrow(error.message);
      throw error;
    }
    if (loaded !== undefined && loaded.thumbprint === material.thumbprint) {
      loaded = { ...loaded, mtimeMs, size };
      return false;
    }
    if (loaded !== undefined) {
      log("info", "credential", identity.clientId, `${source}: a new certificate (SHA-256 ${material.thumbprint.slice(0, 16)}…) is in use from now on`);
    }
    loaded = { credential: certificateCredential(identity.tenantId, identity.clientId, material, options), thumbprint: material.thumbprint, mtimeMs, size };
    return true;
  };

  const keepOrThrow = (problem: string): boolean => {
    if (loaded === undefined) {
      throw credentialUnavailable(`${problem}; expected a PEM or PKCS#12 bundle (without a password) of the certificate chain and its private key`);
    }
    log("warning", "credential", identity.clientId, `${problem}; the certificate read before stays in use until the file is readable again`);
    return false;
  };

  return {
    async getToken(scopes: string | string[], getTokenOptions?: GetTokenOptions): Promise<AccessToken | null> {
      if (loaded === undefined || now() - checkedAt >= certificateFileRecheckIntervalInMs) reload();
      const current = loaded as Loaded;
      try {
        return await current.credential.getToken(scopes, getTokenOptions);
      } catch (error) {
        // Refused with this certificate (rotated and revoked, say): a new file may already be there,
        // read by this call or by another refused at the same time (the first party asks in
        // several tenants at once).
        reload();
        const inUse = loaded as Loaded;
        if (inUse.thumbprint !== current.thumbprint) return inUse.credential.getToken(scopes, getTokenOptions);
        throw error;
      }
    },
  };
}
