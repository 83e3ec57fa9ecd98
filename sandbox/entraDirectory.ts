/** What kind of principal a service principal of the sandbox directory stands for. */
export type PrincipalKind = "application" | "managedIdentity";

/** A certificate registered as a credential of a principal (its key credential). */
export interface RegisteredCertificate {
  serialNumber: string;
  thumbprint: string;
  thumbprintSha256: string;
  notBefore: string;
  notAfter: string;
  /** The certificate (public), PEM: lets an assertion without `x5c` be checked by its thumbprint. */
  certificatePem: string;
}

/** A service principal of one tenant: an application or a managed identity. */
export interface SandboxPrincipal {
  tenantId: string;
  /** The application (client) ID. */
  clientId: string;
  /** The service principal's object ID (`oid` of its tokens, the principal ID of role assignments). */
  objectId: string;
  kind: PrincipalKind;
  displayName: string;
  /** Certificates it may sign client assertions with (for a multi-tenant application's service principal: its application's). */
  certificates: RegisteredCertificate[];
  /**
   * Set on the service principal of a multi-tenant application in a tenant other than the
   * application's own: the tenant where the application, and so its certificates, are registered.
   */
  applicationTenantId?: string;
}

/** A role assignment: the principal may read user-assigned identities at or below the scope. */
export interface RoleAssignment {
  principalObjectId: string;
  /** An ARM ID prefix; `/` for everything. Compared case-insensitively, on segment boundaries. */
  scope: string;
}

/** The ARM action the fake ARM authorizes. */
export const identityReadAction = "Microsoft.ManagedIdentity/userAssignedIdentities/read";

function principalKey(tenantId: string, clientId: string): string {
  return `${tenantId.toLowerCase()}/${clientId.toLowerCase()}`;
}

function withinScope(scope: string, resourceId: string): boolean {
  const normalizedScope = scope.replace(/\/+$/, "").toLowerCase();
  const id = resourceId.toLowerCase();
  return normalizedScope === "" || id === normalizedScope || id.startsWith(`${normalizedScope}/`);
}

/**
 * The sandbox's Entra directory: tenants, their service principals with registered certificates,
 * and the role assignments the fake ARM checks. Shared by the Entra token endpoint, the Managed
 * Identities data plane, the fake ARM and the admin API; changes apply to the next request.
 */
export class EntraDirectory {
  private readonly tenants = new Set<string>();
  private readonly principals = new Map<string, SandboxPrincipal>();
  /** Role assignments by lowercased principal object ID. */
  private readonly roleAssignments = new Map<string, RoleAssignment[]>();

  /** @param tenantId - A tenant to create (idempotent). */
  addTenant(tenantId: string): void {
    this.tenants.add(tenantId.toLowerCase());
  }

  /**
   * @param tenantId - A tenant ID, any casing.
   * @returns Whether the tenant exists.
   */
  hasTenant(tenantId: string): boolean {
    return this.tenants.has(tenantId.toLowerCase());
  }

  /**
   * Registers (or replaces) a service principal; its tenant is created when missing.
   *
   * @param principal - The principal, without certificates (see {@link EntraDirectory.addCertificate}).
   * @returns A copy of the stored principal.
   */
  register(principal: Omit<SandboxPrincipal, "certificates">): SandboxPrincipal {
    this.addTenant(principal.tenantId);
    const stored: SandboxPrincipal = { ...principal, certificates: [] };
    this.principals.set(principalKey(principal.tenantId, principal.clientId), stored);
    return structuredClone(stored);
  }

  /**
   * @param tenantId - The tenant.
   * @param clientId - The application (client) ID.
   * @returns A copy of the principal, or undefined.
   */
  get(tenantId: string, clientId: string): SandboxPrincipal | undefined {
    const principal = this.principals.get(principalKey(tenantId, clientId));
    if (principal === undefined) return undefined;
    const copy = structuredClone(principal);
    if (principal.applicationTenantId !== undefined) {
      copy.certificates = structuredClone(this.principals.get(principalKey(principal.applicationTenantId, clientId))?.certificates ?? []);
    }
    return copy;
  }

  /**
   * Adds, in another tenant, the service principal of a multi-tenant application registered in its
   * own tenant (as consenting to the application there does): it signs in there with the
   * application's certificates, under an object ID of its own. Idempotent.
   *
   * @param tenantId - The tenant to add it to (created when missing).
   * @param applicationTenantId - The application's own tenant.
   * @param clientId - The application (client) ID.
   * @param objectId - The new service principal's object ID.
   * @throws RangeError when the application is not registered in its own tenant.
   */
  addApplicationServicePrincipal(tenantId: string, applicationTenantId: string, clientId: string, objectId: string): void {
    const application = this.principals.get(principalKey(applicationTenantId, clientId));
    if (application === undefined) throw new RangeError(`no application ${clientId} in tenant ${applicationTenantId}`);
    if (tenantId.toLowerCase() === applicationTenantId.toLowerCase() || this.principals.has(principalKey(tenantId, clientId))) return;
    this.addTenant(tenantId);
    this.principals.set(principalKey(tenantId, clientId), {
      tenantId,
      clientId: application.clientId,
      objectId,
      kind: application.kind,
      displayName: application.displayName,
      certificates: [],
      applicationTenantId: application.tenantId,
    });
  }

  /** @returns Copies of every principal. */
  list(): SandboxPrincipal[] {
    return [...this.principals.values()].map((principal) => this.get(principal.tenantId, principal.clientId) ?? structuredClone(principal));
  }

  /**
   * Adds a certificate credential to a principal; earlier ones stay valid.
   *
   * @param tenantId - The principal's tenant.
   * @param clientId - The principal's client ID.
   * @param certificate - The certificate's identifiers and validity.
   * @throws RangeError when the principal does not exist.
   */
  addCertificate(tenantId: string, clientId: string, certificate: RegisteredCertificate): void {
    const principal = this.principals.get(principalKey(tenantId, clientId));
    if (principal === undefined) throw new RangeError(`no principal ${clientId} in tenant ${tenantId}`);
    principal.certificates.push({ ...certificate });
  }

  /**
   * Removes a certificate credential from whichever principal holds it.
   *
   * @param serialNumber - The certificate's serial number (hex, any case).
   * @returns Whether a credential was removed.
   */
  removeCertificate(serialNumber: string): boolean {
    const wanted = serialNumber.toUpperCase();
    let removed = false;
    for (const principal of this.principals.values()) {
      const before = principal.certificates.length;
      principal.certificates = principal.certificates.filter((certificate) => certificate.serialNumber.toUpperCase() !== wanted);
      removed ||= principal.certificates.length !== before;
    }
    return removed;
  }

  /**
   * Grants a principal read access to user-assigned identities at or below a scope.
   *
   * @param assignment - The principal's object ID and the scope.
   */
  assignRole(assignment: RoleAssignment): void {
    const key = assignment.principalObjectId.toLowerCase();
    const assignments = this.roleAssignments.get(key) ?? [];
    if (!assignments.some((existing) => existing.scope.toLowerCase() === assignment.scope.toLowerCase())) assignments.push({ ...assignment });
    this.roleAssignments.set(key, assignments);
  }

  /**
   * @param principalObjectId - Only this principal's assignments; all when omitted.
   * @returns Copies of the role assignments.
   */
  listRoleAssignments(principalObjectId?: string): RoleAssignment[] {
    const lists = principalObjectId === undefined ? [...this.roleAssignments.values()] : [this.roleAssignments.get(principalObjectId.toLowerCase()) ?? []];
    return lists.flat().map((assignment) => ({ ...assignment }));
  }

  /**
   * Removes role assignments.
   *
   * @param principalObjectId - The principal.
   * @param scope - Only the assignment at this scope; all of the principal's when omitted.
   * @returns How many were removed.
   */
  removeRoleAssignments(principalObjectId: string, scope?: string): number {
    const key = principalObjectId.toLowerCase();
    const before = this.roleAssignments.get(key) ?? [];
    const kept = scope === undefined ? [] : before.filter((assignment) => assignment.scope.toLowerCase() !== scope.toLowerCase());
    if (kept.length === 0) this.roleAssignments.delete(key);
    else this.roleAssignments.set(key, kept);
    return before.length - kept.length;
  }

  /**
   * @param principalObjectId - The caller's object ID.
   * @param resourceId - The identity's ARM ID.
   * @returns Whether an assignment lets the principal read it.
   */
  canRead(principalObjectId: string, resourceId: string): boolean {
    return (this.roleAssignments.get(principalObjectId.toLowerCase()) ?? []).some((assignment) => withinScope(assignment.scope, resourceId));
  }
}
