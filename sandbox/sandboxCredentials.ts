import { randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { encodePkcs12, type IssuedCertificate, type SandboxCertificateAuthority } from "./certificateAuthority";
import { uuidVersion5 } from "./documentBuilders";
import type { EntraDirectory, RegisteredCertificate } from "./entraDirectory";
import { parseIdentityResourceId, sandboxTenantId } from "./identityStore";

/** The service's own tenant: where the first-party application and the fixed identity live. */
export const serviceTenantId = sandboxTenantId;

/** The default audience of the Managed Identities data plane (a token scope is this + `/.default`). */
export const defaultDataPlaneAudience = "https://identity.sandbox.azure.net";

/** The client ID of the service's first-party application in the sandbox. */
export const firstPartyApplicationClientId = "f1a7c0de-0b5e-4e2a-9c1d-3a5b7c9d1e01";

/** The client ID of the "fixed identity" service principal (upstream's non-production stand-in). */
export const fixedIdentityClientId = "f1a7c0de-0b5e-4e2a-9c1d-3a5b7c9d1e02";

/** The API version the data plane serves; callers add it to the identity URL's own query. */
export const dataPlaneApiVersion = "2024-01-01";

const objectIdNamespace = "5d0f1b3a-8c2e-4f6a-9b1d-7e3c5a9f2b40";

/** How the data plane encodes `client_secret`: base64 of a passwordless PKCS #12 archive, or of a PEM bundle. */
export type SecretFormat = "pkcs12" | "pem";

/** The two service principals whose certificate bundles the sandbox writes to files. */
export type FilePrincipalName = "firstPartyApplication" | "fixedIdentity";

/** A service principal with its certificate bundle in a file: what a hook needs to authenticate as it. */
export interface FilePrincipalConnection {
  clientId: string;
  tenantId: string;
  objectId: string;
  /** The PEM bundle (certificate chain, then private key), mode 0600; replaced on rotation. */
  certificateBundlePath: string;
}

/** One cluster the data plane serves. No secrets: the credential itself is only handed out over HTTPS. */
export interface DataPlaneCluster {
  clusterResourceId: string;
  /** The cluster's (customer's) tenant, where its SMI is registered. */
  tenantId: string;
  /** The SMI's ARM ID. */
  serviceManagedIdentity: string;
  /** The SMI's client ID and object (principal) ID. */
  clientId: string;
  objectId: string;
  /** `https://127.0.0.1:<port>/subscriptions/…/credentials/v2/identities?arpid=…&tid=…&oid=…&aid=…` */
  identityUrl: string;
  /**
   * Every identity assigned to the cluster, as ARM IDs: its control plane operator identities and
   * its SMI (last). The data plane answers for these and refuses others with 404.
   */
  assignedIdentities: string[];
  /**
   * The tenant the data plane's bearer challenge names for this cluster: the cluster's own tenant,
   * which its identity URL names (`tid`), unless set otherwise.
   */
  challengeTenantId: string;
  secretFormat: SecretFormat;
  /** The serial number of the certificate the data plane hands out now; absent before the first request. */
  currentSerialNumber?: string;
}

/** What a certificate rotation did; identifiers only, never the key. */
export interface CertificateRotation {
  serialNumber: string;
  thumbprint: string;
  notBefore: string;
  notAfter: string;
  /** The certificate it replaces, still accepted until revoked. */
  previousSerialNumber?: string;
  /** When the previous certificate is (or was) revoked, when asked for. */
  previousRevocationAt?: string;
}

interface ClusterEntry {
  cluster: DataPlaneCluster;
  /** The SMI's certificate. */
  credential?: Promise<IssuedCertificate>;
  /** Whether the cluster's challenge tenant was set for it alone (a default set later does not replace it). */
  ownChallengeTenant?: boolean;
}

/** How the data plane varies its answers, to prove clients assume neither order nor casing. */
export interface DataPlaneAnswerVariation {
  /** Entries in another order than the `identityIds` asked (rotated by one). */
  shuffleOrder: boolean;
  /** Each `resource_id` with the case of every letter inverted. */
  changeResourceIdCasing: boolean;
}

/** What the data plane holds for one assigned identity other than a cluster's SMI. */
interface IdentityCredentialEntry {
  clientId: string;
  certificate: Promise<IssuedCertificate>;
}

interface FilePrincipalEntry {
  connection: FilePrincipalConnection;
  /** What this sandbox last wrote to the file (to remove it at stop only when still ours). */
  writtenPem?: string;
  current?: IssuedCertificate;
}

/** The assigned identities of a cluster: the given ones without duplicates (by lowercased ID), then the SMI. */
function assignedIdentityList(identityIds: readonly string[], serviceManagedIdentity: string): string[] {
  const seen = new Set([serviceManagedIdentity.toLowerCase()]);
  const list: string[] = [];
  for (const id of identityIds) {
    if (!seen.has(id.toLowerCase())) list.push(id);
    seen.add(id.toLowerCase());
  }
  return [...list, serviceManagedIdentity];
}

/**
 * @param date - A time.
 * @returns RFC 3339 in UTC, whole seconds (`2026-12-03T10:00:00Z`).
 */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

function registration(certificate: IssuedCertificate): RegisteredCertificate {
  return {
    serialNumber: certificate.serialNumber,
    thumbprint: certificate.thumbprint,
    thumbprintSha256: certificate.thumbprintSha256,
    notBefore: rfc3339(certificate.notBefore),
    notAfter: rfc3339(certificate.notAfter),
    certificatePem: certificate.certificatePem,
  };
}

/**
 * @param clientId - A principal's client ID.
 * @returns The object ID the sandbox gives that principal (deterministic).
 */
export function objectIdForClientId(clientId: string): string {
  return uuidVersion5(clientId.toLowerCase(), objectIdNamespace);
}

/**
 * The per-cluster credential machinery of the sandbox: the client certificate CA, the Entra
 * directory, the first-party application and fixed identity with their bundle files, and the
 * clusters the Managed Identities data plane serves. Shared by the Entra server, the data plane
 * server, the fake ARM and the admin API.
 */
export class SandboxCredentials {
  /** `https://127.0.0.1:<port>` of the sandbox Entra; set once its server listens. */
  entraAuthorityHost = "";
  /** `https://127.0.0.1:<port>` of the data plane; set once its server listens. */
  dataPlaneEndpoint = "";
  private readonly clusters = new Map<string, ClusterEntry>();
  /** Certificates of assigned identities other than SMIs, by lowercased identity ID; reissued when the identity's client ID changes. */
  private readonly identityCredentials = new Map<string, IdentityCredentialEntry>();
  /** Subscription tenants by lowercased subscription ID. */
  private readonly subscriptionTenants = new Map<string, string>();
  /** The challenge tenant of clusters without one of their own; undefined: each cluster's own tenant (its identity URL's tid). */
  private defaultChallengeTenantId: string | undefined;
  /** How the data plane varies its answers (off by default). */
  answerVariation: DataPlaneAnswerVariation = { shuffleOrder: false, changeResourceIdCasing: false };
  private readonly filePrincipals = new Map<FilePrincipalName, FilePrincipalEntry>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Each certificate's `client_secret` by format: encoded once (a PKCS #12 archive costs CPU to encode), as the service keeps what it hands out. */
  private readonly encodedSecrets = new WeakMap<IssuedCertificate, Map<SecretFormat, Promise<string>>>();

  /**
   * @param authority - The client certificate CA.
   * @param directory - The Entra directory.
   * @param settings - The data plane audience and whether ARM authorizes the process credential per cluster.
   */
  constructor(
    readonly authority: SandboxCertificateAuthority,
    readonly directory: EntraDirectory,
    readonly settings: { dataPlaneAudience: string; perClusterCredentials: boolean },
  ) {
    directory.addTenant(serviceTenantId);
  }

  /**
   * Issues a certificate to a registered principal and adds it to the principal's credentials.
   *
   * @param tenantId - The principal's tenant.
   * @param clientId - The principal's client ID.
   * @param options - The certificate's lifetime, when not the default.
   * @returns The certificate with its key.
   */
  async issueCertificate(tenantId: string, clientId: string, options: { lifetimeInMs?: number } = {}): Promise<IssuedCertificate> {
    const certificate = await this.authority.issue(clientId, options);
    this.directory.addCertificate(tenantId, clientId, registration(certificate));
    return certificate;
  }

  /**
   * Revokes a certificate: the CA lists it and its principal no longer holds it.
   *
   * @param serialNumber - The certificate's serial number.
   * @returns Whether a principal held it.
   */
  revokeCertificate(serialNumber: string): boolean {
    this.authority.revoke(serialNumber);
    return this.directory.removeCertificate(serialNumber);
  }

  /**
   * Registers the first-party application and the fixed identity in the service tenant, issues
   * each a certificate and writes its bundle to `<directory>/first-party-application.pem` and
   * `<directory>/fixed-identity.pem` (mode 0600). The fixed identity may read every identity.
   *
   * @param directory - Where to write the bundle files (it exists).
   */
  async setUpServicePrincipals(directory: string): Promise<void> {
    const principals: Array<[FilePrincipalName, string, string, string]> = [
      ["firstPartyApplication", firstPartyApplicationClientId, "ARO-HCP sandbox first-party application", "first-party-application.pem"],
      ["fixedIdentity", fixedIdentityClientId, "ARO-HCP sandbox fixed identity", "fixed-identity.pem"],
    ];
    await Promise.all(
      principals.map(async ([name, clientId, displayName, fileName]) => {
        const objectId = objectIdForClientId(clientId);
        this.directory.register({ tenantId: serviceTenantId, clientId, objectId, kind: "application", displayName });
        const entry: FilePrincipalEntry = { connection: { clientId, tenantId: serviceTenantId, objectId, certificateBundlePath: join(directory, fileName) } };
        this.filePrincipals.set(name, entry);
        await this.replaceFileCertificate(entry);
      }),
    );
    for (const { cluster } of this.clusters.values()) this.admitFirstParty(cluster.tenantId);
    this.directory.assignRole({ principalObjectId: objectIdForClientId(fixedIdentityClientId), scope: "/" });
  }

  /**
   * @param name - Which principal.
   * @returns Its client ID, tenant, object ID and bundle file.
   * @throws RangeError before {@link SandboxCredentials.setUpServicePrincipals}.
   */
  filePrincipal(name: FilePrincipalName): FilePrincipalConnection {
    const entry = this.filePrincipals.get(name);
    if (entry === undefined) throw new RangeError(`${name} is not set up`);
    return { ...entry.connection };
  }

  /**
   * Rotates the certificate of the first-party application or the fixed identity: a new
   * certificate is issued and registered, and the bundle file replaced (atomically); the previous
   * certificate stays valid until revoked, which happens after `revokePreviousAfterMs` when given
   * (0: at once).
   *
   * @param name - Which principal.
   * @param options - When to revoke the previous certificate.
   * @returns The new and previous certificates' identifiers.
   */
  async rotateFilePrincipal(name: FilePrincipalName, options: { revokePreviousAfterMs?: number } = {}): Promise<CertificateRotation> {
    const entry = this.filePrincipals.get(name);
    if (entry === undefined) throw new RangeError(`${name} is not set up`);
    const previous = entry.current;
    const current = await this.replaceFileCertificate(entry);
    return this.rotationResult(current, previous, options.revokePreviousAfterMs);
  }

  private async replaceFileCertificate(entry: FilePrincipalEntry): Promise<IssuedCertificate> {
    const { clientId, tenantId, certificateBundlePath } = entry.connection;
    const certificate = await this.issueCertificate(tenantId, clientId);
    const temporary = `${certificateBundlePath}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, certificate.bundlePem, { mode: 0o600 });
    await rename(temporary, certificateBundlePath);
    entry.current = certificate;
    entry.writtenPem = certificate.bundlePem;
    return certificate;
  }

  private rotationResult(current: IssuedCertificate, previous: IssuedCertificate | undefined, revokePreviousAfterMs: number | undefined): CertificateRotation {
    const result: CertificateRotation = {
      serialNumber: current.serialNumber,
      thumbprint: current.thumbprint,
      notBefore: rfc3339(current.notBefore),
      notAfter: rfc3339(current.notAfter),
      ...(previous === undefined ? {} : { previousSerialNumber: previous.serialNumber }),
    };
    if (previous !== undefined && revokePreviousAfterMs !== undefined) {
      if (!Number.isFinite(revokePreviousAfterMs) || revokePreviousAfterMs < 0) {
        throw new RangeError("revokePreviousAfterMs must be a non-negative number");
      }
      result.previousRevocationAt = new Date(Date.now() + revokePreviousAfterMs).toISOString();
      if (revokePreviousAfterMs === 0) {
        this.revokeCertificate(previous.serialNumber);
      } else {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.revokeCertificate(previous.serialNumber);
        }, revokePreviousAfterMs);
        timer.unref();
        this.timers.add(timer);
      }
    }
    return result;
  }

  /**
   * Registers a cluster with the data plane: its SMI becomes a managed-identity principal of the
   * cluster's tenant, and the cluster gets an identity URL naming that tenant (`tid`), which the
   * data plane's challenge names too; the first-party application gets a service principal there,
   * as a multi-tenant application has in its customers' tenants. The SMI's certificate is issued
   * on the first data plane request for it.
   *
   * @param cluster - The cluster, its tenant, and its SMI's ARM ID, client ID and object ID.
   * @returns The registered cluster with its identity URL.
   * @throws RangeError before the data plane listens, or for an SMI ID that is not an identity ID.
   */
  registerCluster(
    cluster: Omit<DataPlaneCluster, "identityUrl" | "secretFormat" | "currentSerialNumber" | "assignedIdentities" | "challengeTenantId"> & {
      secretFormat?: SecretFormat;
      /** The cluster's control plane operator identities (the SMI is added). */
      controlPlaneOperatorIdentities?: readonly string[];
    },
  ): DataPlaneCluster {
    if (this.dataPlaneEndpoint === "") throw new RangeError("the data plane is not listening yet");
    const identity = parseIdentityResourceId(cluster.serviceManagedIdentity);
    if (identity === undefined) throw new RangeError(`not a user-assigned identity ARM ID: ${cluster.serviceManagedIdentity}`);
    this.directory.register({
      tenantId: cluster.tenantId,
      clientId: cluster.clientId,
      objectId: cluster.objectId,
      kind: "managedIdentity",
      displayName: identity.name,
    });
    const path = `${cluster.clusterResourceId.replace(/\/resourceGroups\//i, "/resourcegroups/")}/credentials/v2/identities`;
    const query = new URLSearchParams({
      arpid: uuidVersion5(cluster.clusterResourceId.toLowerCase(), objectIdNamespace),
      tid: cluster.tenantId,
      oid: cluster.objectId,
      aid: cluster.clientId,
    });
    const registered: DataPlaneCluster = {
      clusterResourceId: cluster.clusterResourceId,
      tenantId: cluster.tenantId,
      serviceManagedIdentity: cluster.serviceManagedIdentity,
      clientId: cluster.clientId,
      objectId: cluster.objectId,
      identityUrl: `${this.dataPlaneEndpoint}${path}?${query.toString()}`,
      assignedIdentities: assignedIdentityList(cluster.controlPlaneOperatorIdentities ?? [], cluster.serviceManagedIdentity),
      challengeTenantId: this.defaultChallengeTenantId ?? cluster.tenantId.toLowerCase(),
      secretFormat: cluster.secretFormat ?? "pkcs12",
    };
    this.admitFirstParty(cluster.tenantId);
    this.setSubscriptionTenant(identity.subscriptionId, cluster.tenantId);
    this.clusters.set(cluster.clusterResourceId.toLowerCase(), { cluster: registered });
    return { ...registered };
  }

  /**
   * @param clusterResourceId - The cluster's ARM ID, any casing.
   * @returns A copy of the cluster, or undefined.
   */
  getCluster(clusterResourceId: string): DataPlaneCluster | undefined {
    const entry = this.clusters.get(clusterResourceId.toLowerCase());
    return entry === undefined ? undefined : structuredClone(entry.cluster);
  }

  /** @returns Copies of every registered cluster. */
  listClusters(): DataPlaneCluster[] {
    return [...this.clusters.values()].map((entry) => structuredClone(entry.cluster));
  }

  /**
   * Replaces the identities assigned to a cluster besides its SMI (its control plane operator identities).
   *
   * @param clusterResourceId - The cluster.
   * @param identityIds - The identities' ARM IDs.
   * @returns The cluster.
   */
  setAssignedIdentities(clusterResourceId: string, identityIds: readonly string[]): DataPlaneCluster {
    const entry = this.requireCluster(clusterResourceId);
    for (const id of identityIds) {
      if (parseIdentityResourceId(id) === undefined) throw new RangeError(`not a user-assigned identity ARM ID: ${id}`);
    }
    entry.cluster.assignedIdentities = assignedIdentityList(identityIds, entry.cluster.serviceManagedIdentity);
    return structuredClone(entry.cluster);
  }

  /**
   * Sets the tenant the data plane's bearer challenge names, for some clusters or (without
   * `clusterResourceIds`) for every cluster without a tenant of its own, now and registered later,
   * in place of each cluster's own tenant (its identity URL's `tid`). The first-party application,
   * a multi-tenant application, gets a service principal in that tenant, so that it can get a
   * token there; the data plane then accepts its token of that tenant only. A cluster's own tenant
   * sets it back for that cluster.
   *
   * @param tenantId - The tenant (a GUID).
   * @param clusterResourceIds - Only these clusters.
   * @returns The clusters changed.
   */
  setChallengeTenant(tenantId: string, clusterResourceIds?: readonly string[]): DataPlaneCluster[] {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenantId)) throw new RangeError("tenantId must be a GUID");
    const tenant = tenantId.toLowerCase();
    this.filePrincipal("firstPartyApplication");
    this.admitFirstParty(tenant);
    const entries =
      clusterResourceIds === undefined
        ? [...this.clusters.values()].filter((entry) => entry.ownChallengeTenant !== true)
        : clusterResourceIds.map((id) => this.requireCluster(id));
    if (clusterResourceIds === undefined) this.defaultChallengeTenantId = tenant;
    for (const entry of entries) {
      entry.cluster.challengeTenantId = tenant;
      if (clusterResourceIds !== undefined) entry.ownChallengeTenant = true;
    }
    return entries.map((entry) => structuredClone(entry.cluster));
  }

  /**
   * @param tid - The `tid` query parameter of the request, when it had one.
   * @returns The tenant the challenge names for a path no cluster is registered at: the one set for
   *   every cluster, else the request's `tid` when it is a GUID, else the service tenant.
   */
  unregisteredChallengeTenantId(tid: string | null): string {
    const named = tid !== null && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tid) ? tid.toLowerCase() : undefined;
    return this.defaultChallengeTenantId ?? named ?? serviceTenantId;
  }

  /** Gives the first-party application a service principal in a tenant (once it is set up; idempotent). */
  private admitFirstParty(tenantId: string): void {
    const firstParty = this.filePrincipals.get("firstPartyApplication")?.connection;
    if (firstParty === undefined) return;
    const tenant = tenantId.toLowerCase();
    this.directory.addApplicationServicePrincipal(tenant, firstParty.tenantId, firstParty.clientId, objectIdForClientId(`${tenant}/${firstParty.clientId}`));
  }

  /**
   * Records the tenant a subscription belongs to (ARM answers a token of another tenant with 401
   * InvalidAuthenticationTokenTenant). Seeding records every cluster's subscription.
   *
   * @param subscriptionId - The subscription ID.
   * @param tenantId - Its tenant.
   */
  setSubscriptionTenant(subscriptionId: string, tenantId: string): void {
    this.subscriptionTenants.set(subscriptionId.toLowerCase(), tenantId.toLowerCase());
  }

  /**
   * @param subscriptionId - A subscription ID, any casing.
   * @returns Its tenant: the recorded one, or the sandbox (service) tenant, where every identity
   *   created without a tenant lives.
   */
  subscriptionTenant(subscriptionId: string): string {
    return this.subscriptionTenants.get(subscriptionId.toLowerCase()) ?? serviceTenantId;
  }

  /** @returns Every recorded subscription with its tenant. */
  listSubscriptions(): Array<{ subscriptionId: string; tenantId: string }> {
    return [...this.subscriptionTenants].map(([subscriptionId, tenantId]) => ({ subscriptionId, tenantId }));
  }

  /**
   * The certificate the data plane hands out for an assigned identity other than a cluster's SMI:
   * issued (from the CA's shared keys) and registered as a managed-identity principal of the
   * cluster's tenant at the first request, issued again when the identity's client ID changed.
   *
   * @param tenantId - The cluster's tenant.
   * @param identity - The identity's ARM ID, client ID and principal ID.
   * @returns The certificate with its key.
   */
  identityCredential(tenantId: string, identity: { id: string; clientId: string; principalId: string; name: string }): Promise<IssuedCertificate> {
    const key = identity.id.toLowerCase();
    const existing = this.identityCredentials.get(key);
    if (existing !== undefined && existing.clientId === identity.clientId) return existing.certificate;
    this.directory.register({ tenantId, clientId: identity.clientId, objectId: identity.principalId, kind: "managedIdentity", displayName: identity.name });
    const certificate = this.authority.issue(identity.clientId, { sharedKey: true }).then((issued) => {
      this.directory.addCertificate(tenantId, identity.clientId, registration(issued));
      return issued;
    });
    const entry = { clientId: identity.clientId, certificate };
    this.identityCredentials.set(key, entry);
    certificate.catch(() => {
      if (this.identityCredentials.get(key) === entry) this.identityCredentials.delete(key);
    });
    return certificate;
  }

  /**
   * @param clusterResourceId - The cluster.
   * @param format - How `client_secret` is encoded from now on.
   * @returns The cluster.
   */
  setSecretFormat(clusterResourceId: string, format: SecretFormat): DataPlaneCluster {
    if (format !== "pkcs12" && format !== "pem") throw new RangeError("secretFormat must be 'pkcs12' or 'pem'");
    const entry = this.requireCluster(clusterResourceId);
    entry.cluster.secretFormat = format;
    return { ...entry.cluster };
  }

  private requireCluster(clusterResourceId: string): ClusterEntry {
    const entry = this.clusters.get(clusterResourceId.toLowerCase());
    if (entry === undefined) throw new RangeError(`cluster ${clusterResourceId} is not registered with the data plane`);
    return entry;
  }

  /**
   * The SMI certificate the data plane hands out for a cluster, issued (and registered) on first use.
   *
   * @param clusterResourceId - The cluster.
   * @returns The certificate with its key.
   */
  async clusterCredential(clusterResourceId: string): Promise<IssuedCertificate> {
    const entry = this.requireCluster(clusterResourceId);
    if (entry.credential === undefined) {
      const issuing = this.issueCertificate(entry.cluster.tenantId, entry.cluster.clientId);
      entry.credential = issuing;
      issuing.then(
        (certificate) => {
          entry.cluster.currentSerialNumber = certificate.serialNumber;
        },
        () => {
          if (entry.credential === issuing) delete entry.credential;
        },
      );
    }
    return entry.credential;
  }

  /**
   * Issues a new SMI certificate for a cluster; the data plane hands it out from now on. The
   * previous one stays valid unless `revokePreviousAfterMs` is given (0: at once).
   *
   * @param clusterResourceId - The cluster.
   * @param options - When to revoke the previous certificate.
   * @returns The new and previous certificates' identifiers.
   */
  async rotateClusterCredential(clusterResourceId: string, options: { revokePreviousAfterMs?: number } = {}): Promise<CertificateRotation> {
    const entry = this.requireCluster(clusterResourceId);
    const previous = entry.credential === undefined ? undefined : await entry.credential;
    const current = await this.issueCertificate(entry.cluster.tenantId, entry.cluster.clientId);
    entry.credential = Promise.resolve(current);
    entry.cluster.currentSerialNumber = current.serialNumber;
    return this.rotationResult(current, previous, options.revokePreviousAfterMs);
  }

  /**
   * The `client_secret` of a credential in the cluster's format.
   *
   * @param certificate - The certificate with its key.
   * @param format - The encoding.
   * @returns Base64 of a PKCS #12 archive or of a PEM bundle.
   */
  async encodeSecret(certificate: IssuedCertificate, format: SecretFormat): Promise<string> {
    const encodings = this.encodedSecrets.get(certificate) ?? new Map<SecretFormat, Promise<string>>();
    this.encodedSecrets.set(certificate, encodings);
    let encoded = encodings.get(format);
    if (encoded === undefined) {
      encoded = this.encode(certificate, format);
      encodings.set(format, encoded);
      // A failure is not kept: the next request encodes again.
      encoded.catch(() => encodings.delete(format));
    }
    return encoded;
  }

  private async encode(certificate: IssuedCertificate, format: SecretFormat): Promise<string> {
    if (format === "pem") return Buffer.from(certificate.bundlePem, "utf8").toString("base64");
    const caDer = Buffer.from(this.authority.certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, ""), "base64");
    return (await encodePkcs12(certificate, [caDer])).toString("base64");
  }

  /**
   * Issues (and encodes in its cluster's format) the SMI certificate of every registered cluster
   * that has none yet, as the data plane would at its first request: a benchmark does it before it
   * starts timing. Given the identity store, the certificates of the clusters' other assigned
   * identities too (the control plane operator identities a request for all of them is answered
   * with), for those that exist.
   *
   * @param identities - The identity store, to issue the other assigned identities' certificates.
   * @returns How many SMI certificates were issued.
   */
  async issueClusterCredentials(identities?: {
    get(resourceId: string): { id: string; clientId: string; principalId: string; name: string } | undefined;
  }): Promise<number> {
    let issued = 0;
    for (const entry of this.clusters.values()) {
      if (entry.credential === undefined) issued += 1;
      const certificate = await this.clusterCredential(entry.cluster.clusterResourceId);
      await this.encodeSecret(certificate, entry.cluster.secretFormat);
      const smi = entry.cluster.serviceManagedIdentity.toLowerCase();
      for (const id of entry.cluster.assignedIdentities) {
        const identity = id.toLowerCase() === smi ? undefined : identities?.get(id);
        if (identity !== undefined) await this.encodeSecret(await this.identityCredential(entry.cluster.tenantId, identity), entry.cluster.secretFormat);
      }
    }
    return issued;
  }

  /**
   * Stops pending revocations and removes the bundle files this sandbox wrote, when they still
   * hold what it wrote.
   */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const entry of this.filePrincipals.values()) {
      const path = entry.connection.certificateBundlePath;
      const current = await readFile(path, "utf8").catch(() => undefined);
      if (current !== undefined && current === entry.writtenPem) await rm(path, { force: true });
    }
  }
}
