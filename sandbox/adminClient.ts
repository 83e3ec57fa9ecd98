import type { StoredDocument } from "./cosmosDocumentStore";
import type { FaultRule, FaultRuleInput, FaultTarget } from "./faultInjector";
import type { PrincipalKind, RoleAssignment } from "./entraDirectory";
import type { IdentityOverrides, SandboxIdentity } from "./identityStore";
import type { RecordedRequest } from "./requestRecorder";
import type { CertificateRotation, DataPlaneAnswerVariation, DataPlaneCluster, FilePrincipalName, SecretFormat } from "./sandboxCredentials";
import type { SandboxStatisticsSnapshot } from "./sandboxStatistics";
import type { FleetClusterDescription, FleetSize, TenantFleetSize } from "./seed";

/** Global latency as the admin API reports it. */
export interface AdminLatency {
  armMs: number;
  cosmosMs: number;
  tokenMs: number;
  entraMs: number;
  dataPlaneMs: number;
}

/** A principal of the sandbox directory as the admin API lists it (certificate identifiers only). */
export interface AdminPrincipal {
  tenantId: string;
  clientId: string;
  objectId: string;
  kind: PrincipalKind;
  displayName: string;
  certificates: Array<{ serialNumber: string; thumbprint: string; thumbprintSha256: string; notBefore: string; notAfter: string }>;
}

/** An error answer of the admin API. */
export class AdminApiError extends Error {
  override readonly name = "AdminApiError";

  /**
   * @param statusCode - The HTTP status.
   * @param code - The error code from the body.
   * @param message - The error message from the body.
   */
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A typed client of the sandbox admin API, for tests and tools in another process than the
 * sandbox. Every method throws {@link AdminApiError} on a non-2xx answer.
 */
export class SandboxAdminClient {
  /**
   * @param endpoint - The admin endpoint, `http://127.0.0.1:<port>`.
   * @param adminToken - The sandbox's admin token.
   */
  constructor(
    private readonly endpoint: string,
    private readonly adminToken: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.endpoint}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.adminToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed: unknown = text === "" ? undefined : JSON.parse(text);
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new AdminApiError(response.status, error?.code ?? "Unknown", error?.message ?? text);
    }
    return parsed as T;
  }

  /** @returns `{ status: "ok" }` when the sandbox answers and the token is right. */
  health(): Promise<{ status: string }> {
    return this.call("GET", "/health");
  }

  /** @returns All identities of the fake ARM. */
  listIdentities(): Promise<SandboxIdentity[]> {
    return this.call("GET", "/identities");
  }

  /**
   * @param resourceId - The identity ARM ID, any casing.
   * @returns The identity. Throws AdminApiError 404 when missing.
   */
  getIdentity(resourceId: string): Promise<SandboxIdentity> {
    return this.call("GET", `/identities?resourceId=${encodeURIComponent(resourceId)}`);
  }

  /**
   * Creates (or replaces) an identity.
   *
   * @param resourceId - The identity ARM ID; its casing is what ARM returns as `id`.
   * @param overrides - Explicit clientId / principalId; random otherwise.
   * @returns The stored identity.
   */
  createIdentity(resourceId: string, overrides: IdentityOverrides = {}): Promise<SandboxIdentity> {
    return this.call("POST", "/identities", { resourceId, ...overrides });
  }

  /**
   * @param resourceId - The identity ARM ID, any casing.
   * @returns Whether it existed.
   */
  async deleteIdentity(resourceId: string): Promise<boolean> {
    return (await this.call<{ deleted: boolean }>("DELETE", `/identities?resourceId=${encodeURIComponent(resourceId)}`)).deleted;
  }

  /**
   * Gives an identity new random clientId and principalId.
   *
   * @param resourceId - The identity ARM ID, any casing.
   * @returns The updated identity.
   */
  rotateIdentity(resourceId: string): Promise<SandboxIdentity> {
    return this.call("POST", "/identities/rotate", { resourceId });
  }

  /**
   * @param partitionKey - Only this partition; all documents when omitted.
   * @returns The stored documents, with system fields.
   */
  listDocuments(partitionKey?: string): Promise<StoredDocument[]> {
    return this.call("GET", `/documents${partitionKey === undefined ? "" : `?partitionKey=${encodeURIComponent(partitionKey)}`}`);
  }

  /**
   * @param partitionKey - The partition key value.
   * @param id - The document id.
   * @returns The stored document. Throws AdminApiError 404 when missing.
   */
  readDocument(partitionKey: string, id: string): Promise<StoredDocument> {
    return this.call("GET", `/documents/${encodeURIComponent(partitionKey)}/${encodeURIComponent(id)}`);
  }

  /**
   * Creates or replaces a document with exactly this JSON (`id`/`partitionKey` from the arguments).
   *
   * @param partitionKey - The partition key value.
   * @param id - The document id.
   * @param document - The document body.
   * @returns The stored document with its new `_etag`.
   */
  putDocument(partitionKey: string, id: string, document: Record<string, unknown>): Promise<StoredDocument> {
    return this.call("PUT", `/documents/${encodeURIComponent(partitionKey)}/${encodeURIComponent(id)}`, document);
  }

  /**
   * Sets (or with `value` undefined, removes) the value at a JSON pointer; parents are created.
   *
   * @param partitionKey - The partition key value.
   * @param id - The document id.
   * @param path - A JSON pointer, e.g. `/properties/status/x`.
   * @param value - The value; undefined removes.
   * @returns The stored document with its new `_etag`.
   */
  patchDocument(partitionKey: string, id: string, path: string, value: unknown): Promise<StoredDocument> {
    return this.call("PATCH", `/documents/${encodeURIComponent(partitionKey)}/${encodeURIComponent(id)}`, { path, value });
  }

  /**
   * @param partitionKey - The partition key value.
   * @param id - The document id.
   * @returns Whether it existed.
   */
  async deleteDocument(partitionKey: string, id: string): Promise<boolean> {
    return (await this.call<{ deleted: boolean }>("DELETE", `/documents/${encodeURIComponent(partitionKey)}/${encodeURIComponent(id)}`)).deleted;
  }

  /**
   * @param rule - The fault rule.
   * @returns The stored rule with its id.
   */
  addFault(rule: FaultRuleInput): Promise<FaultRule> {
    return this.call("POST", "/faults", rule);
  }

  /** @returns All rules, with `triggered` and `remaining`. */
  listFaults(): Promise<FaultRule[]> {
    return this.call("GET", "/faults");
  }

  /**
   * @param target - Only this target's rules; all when omitted.
   * @returns How many rules were removed.
   */
  async clearFaults(target?: FaultTarget): Promise<number> {
    return (await this.call<{ removed: number }>("DELETE", `/faults${target === undefined ? "" : `?target=${target}`}`)).removed;
  }

  /** @returns The global latency. */
  getLatency(): Promise<AdminLatency> {
    return this.call("GET", "/latency");
  }

  /**
   * @param latency - Milliseconds per target; omitted targets keep their value.
   * @returns The latency now in force.
   */
  setLatency(latency: Partial<AdminLatency>): Promise<AdminLatency> {
    return this.call("PUT", "/latency", latency);
  }

  /** @returns Every counter. */
  getStatistics(): Promise<SandboxStatisticsSnapshot> {
    return this.call("GET", "/stats");
  }

  /** @returns The counters after the reset. */
  resetStatistics(): Promise<SandboxStatisticsSnapshot> {
    return this.call("POST", "/stats/reset");
  }

  /** @returns How many tokens were made to expire now. */
  async expireTokens(): Promise<number> {
    return (await this.call<{ expired: number }>("POST", "/tokens/expire")).expired;
  }

  /**
   * @param lifetimeInMs - Lifetime of tokens issued from now on.
   * @returns The lifetime in force.
   */
  async setTokenLifetime(lifetimeInMs: number): Promise<number> {
    return (await this.call<{ lifetimeInMs: number }>("PUT", "/tokens/lifetime", { lifetimeInMs })).lifetimeInMs;
  }

  /** @returns The seeded demo fleet. */
  seedDemoFleet(): Promise<FleetClusterDescription[]> {
    return this.call("POST", "/seed/demo");
  }

  /** @returns The demo fleet, its status written as upstream's controllers leave it (`seedUpstreamStatus`). */
  seedUpstreamFleet(): Promise<FleetClusterDescription[]> {
    return this.call("POST", "/seed/upstream");
  }

  /**
   * Moves the fleet's time forward: every stored recheck time moves back by that much (`advanceFleetClock`).
   * @returns How many recheck times moved.
   */
  async advanceClock(by: { hours?: number; minutes?: number }): Promise<number> {
    return (await this.call<{ moved: number }>("POST", "/clock/advance", by)).moved;
  }

  /**
   * @param size - Clusters, identities per cluster, and optionally subscriptions.
   * @returns The seeded fleet.
   */
  seedFleet(size: FleetSize): Promise<FleetClusterDescription[]> {
    return this.call("POST", "/seed/fleet", size);
  }

  /**
   * Seeds clusters each in its own tenant and subscription, registered with the data plane, each
   * SMI alone allowed to read its cluster's operator identities.
   *
   * @param size - Clusters and identities per cluster.
   * @returns The seeded fleet, with each cluster's `tenantId`, `identityUrl` and SMI IDs.
   */
  seedTenantFleet(size: TenantFleetSize): Promise<FleetClusterDescription[]> {
    return this.call("POST", "/seed/tenants", size);
  }

  /** @returns Every principal of the sandbox directory, with its certificates' identifiers. */
  listPrincipals(): Promise<AdminPrincipal[]> {
    return this.call("GET", "/credentials/principals");
  }

  /**
   * Rotates the certificate of the first-party application or the fixed identity: a new one is
   * registered and its bundle replaces the file; the previous one stays valid until revoked.
   *
   * @param principal - `firstPartyApplication` or `fixedIdentity`.
   * @param revokePreviousAfterMs - Revoke the previous certificate after this delay (0: now); never when omitted.
   * @returns The new and previous certificates' identifiers.
   */
  rotateCertificate(principal: FilePrincipalName, revokePreviousAfterMs?: number): Promise<CertificateRotation> {
    return this.call("POST", "/credentials/rotate", { principal, ...(revokePreviousAfterMs === undefined ? {} : { revokePreviousAfterMs }) });
  }

  /**
   * Revokes a client certificate: Entra refuses it from now on.
   *
   * @param serialNumber - The certificate's serial number.
   * @returns Whether a principal held it.
   */
  async revokeCertificate(serialNumber: string): Promise<boolean> {
    return (await this.call<{ revoked: boolean }>("POST", "/credentials/revoke", { serialNumber })).revoked;
  }

  /** @returns The clusters the data plane serves, with identity URLs and current certificate serials. */
  listDataPlaneClusters(): Promise<DataPlaneCluster[]> {
    return this.call("GET", "/dataplane/clusters");
  }

  /**
   * Issues a new SMI certificate for a cluster; the data plane hands it out from now on.
   *
   * @param clusterResourceId - The cluster.
   * @param revokePreviousAfterMs - Revoke the previous certificate after this delay (0: now); never when omitted.
   * @returns The new and previous certificates' identifiers.
   */
  rotateClusterCredential(clusterResourceId: string, revokePreviousAfterMs?: number): Promise<CertificateRotation> {
    return this.call("POST", "/dataplane/clusters/rotate", {
      clusterResourceId,
      ...(revokePreviousAfterMs === undefined ? {} : { revokePreviousAfterMs }),
    });
  }

  /**
   * @param clusterResourceId - The cluster.
   * @param secretFormat - `pkcs12` (default: base64 of a passwordless PKCS #12) or `pem` (base64 of a PEM bundle).
   * @returns The cluster.
   */
  setSecretFormat(clusterResourceId: string, secretFormat: SecretFormat): Promise<DataPlaneCluster> {
    return this.call("PUT", "/dataplane/clusters/secretFormat", { clusterResourceId, secretFormat });
  }

  /**
   * @param principalObjectId - Only this principal's; all when omitted.
   * @returns Role assignments (read access to user-assigned identities at or below `scope`).
   */
  listRoleAssignments(principalObjectId?: string): Promise<RoleAssignment[]> {
    return this.call("GET", `/roleAssignments${principalObjectId === undefined ? "" : `?principalObjectId=${encodeURIComponent(principalObjectId)}`}`);
  }

  /**
   * Lets a principal read user-assigned identities at or below a scope (`/` for all).
   *
   * @param assignment - The principal's object ID and the scope.
   * @returns The assignment.
   */
  assignRole(assignment: RoleAssignment): Promise<RoleAssignment> {
    return this.call("POST", "/roleAssignments", assignment);
  }

  /**
   * @param principalObjectId - The principal.
   * @param scope - Only this scope; all the principal's when omitted.
   * @returns How many were removed.
   */
  async removeRoleAssignments(principalObjectId: string, scope?: string): Promise<number> {
    const query = `principalObjectId=${encodeURIComponent(principalObjectId)}${scope === undefined ? "" : `&scope=${encodeURIComponent(scope)}`}`;
    return (await this.call<{ removed: number }>("DELETE", `/roleAssignments?${query}`)).removed;
  }

  /**
   * Replaces the identities assigned to a cluster at the data plane besides its SMI (its control
   * plane operator identities); the data plane answers for these and the SMI, and 404 for others.
   *
   * @param clusterResourceId - The cluster.
   * @param identityIds - The identities' ARM IDs.
   * @returns The cluster, with `assignedIdentities`.
   */
  setAssignedIdentities(clusterResourceId: string, identityIds: readonly string[]): Promise<DataPlaneCluster> {
    return this.call("PUT", "/dataplane/clusters/identities", { clusterResourceId, identityIds });
  }

  /**
   * Makes the data plane's bearer challenge name another tenant than each cluster's own (its
   * identity URL's `tid`), for some clusters or for every cluster without one of its own; the
   * first-party application gets a service principal there, and the data plane accepts its token
   * of that tenant only. A cluster's own tenant sets it back for that cluster.
   *
   * @param tenantId - The tenant.
   * @param clusterResourceIds - Only these clusters.
   * @returns The clusters changed.
   */
  setChallengeTenant(tenantId: string, clusterResourceIds?: readonly string[]): Promise<DataPlaneCluster[]> {
    return this.call("PUT", "/dataplane/challengeTenant", { tenantId, ...(clusterResourceIds === undefined ? {} : { clusterResourceIds }) });
  }

  /** @returns How the data plane varies its answers. */
  getAnswerVariation(): Promise<DataPlaneAnswerVariation> {
    return this.call("GET", "/dataplane/answers");
  }

  /**
   * @param variation - `shuffleOrder` (entries in another order than asked), `changeResourceIdCasing` (each `resource_id` in other casing); omitted keys keep their value.
   * @returns The variation in force.
   */
  setAnswerVariation(variation: Partial<DataPlaneAnswerVariation>): Promise<DataPlaneAnswerVariation> {
    return this.call("PUT", "/dataplane/answers", variation);
  }

  /** @returns The subscriptions with a recorded tenant (others are the sandbox tenant's). */
  listSubscriptions(): Promise<Array<{ subscriptionId: string; tenantId: string }>> {
    return this.call("GET", "/subscriptions");
  }

  /**
   * @param subscriptionId - The subscription.
   * @param tenantId - Its tenant: ARM answers a token of another tenant with 401 InvalidAuthenticationTokenTenant.
   * @returns The subscription and tenant, lowercased.
   */
  setSubscriptionTenant(subscriptionId: string, tenantId: string): Promise<{ subscriptionId: string; tenantId: string }> {
    return this.call("PUT", `/subscriptions/${encodeURIComponent(subscriptionId)}`, { tenantId });
  }

  /** Starts a new recording of what the data plane, Entra and ARM receive (the previous one is dropped). */
  async startRecording(): Promise<void> {
    await this.call("POST", "/recording/start");
  }

  /** @returns The recording, which stops. */
  stopRecording(): Promise<RequestRecording> {
    return this.call("POST", "/recording/stop");
  }

  /** @returns The recording so far (it goes on). */
  getRecording(): Promise<RequestRecording> {
    return this.call("GET", "/recording");
  }
}

/** What the admin API answers for a recording. */
export interface RequestRecording {
  recording: boolean;
  requests: RecordedRequest[];
  /** Requests not kept once the recording was full. */
  dropped: number;
}
