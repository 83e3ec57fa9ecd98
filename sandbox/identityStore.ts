import { randomUUID } from "node:crypto";

/** The tenant every sandbox identity belongs to. */
export const sandboxTenantId = "5a4ad9d2-7c1e-4b6f-9a54-0c3f1e2d8b71";

/** The location every sandbox identity reports. */
export const sandboxLocation = "eastus";

/** The ARM resource type of a user-assigned managed identity. */
export const userAssignedIdentityType = "Microsoft.ManagedIdentity/userAssignedIdentities";

/** A user-assigned managed identity held by the fake ARM. */
export interface SandboxIdentity {
  /** The full ARM ID, in the casing it was created with. */
  id: string;
  name: string;
  subscriptionId: string;
  resourceGroupName: string;
  clientId: string;
  principalId: string;
  tenantId: string;
  location: string;
}

/** Optional explicit values for a new identity; random GUIDs are used otherwise. */
export interface IdentityOverrides {
  clientId?: string;
  principalId?: string;
  /** The tenant the identity reports; the sandbox tenant otherwise. */
  tenantId?: string;
}

/** The parts of a user-assigned identity ARM ID. */
export interface IdentityResourceIdParts {
  subscriptionId: string;
  resourceGroupName: string;
  name: string;
}

const identityIdPattern = /^\/subscriptions\/([^/]+)\/resourcegroups\/([^/]+)\/providers\/microsoft\.managedidentity\/userassignedidentities\/([^/]+)$/i;

/**
 * Parses a user-assigned identity ARM ID; segment names are matched case-insensitively.
 *
 * @param resourceId - The ID, e.g. `/subscriptions/…/resourceGroups/…/providers/Microsoft.ManagedIdentity/userAssignedIdentities/…`.
 * @returns The parts, or undefined when the string is not such an ID.
 */
export function parseIdentityResourceId(resourceId: string): IdentityResourceIdParts | undefined {
  const match = identityIdPattern.exec(resourceId);
  if (match === null) {
    return undefined;
  }
  const [, subscriptionId, resourceGroupName, name] = match;
  if (subscriptionId === undefined || resourceGroupName === undefined || name === undefined) {
    return undefined;
  }
  return { subscriptionId, resourceGroupName, name };
}

/**
 * Builds a user-assigned identity ARM ID in the canonical casing.
 *
 * @param subscriptionId - The subscription GUID.
 * @param resourceGroupName - The resource group name.
 * @param name - The identity name.
 * @returns The ARM ID.
 */
export function identityResourceId(subscriptionId: string, resourceGroupName: string, name: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroupName}/providers/${userAssignedIdentityType}/${name}`;
}

/** Thrown when an identity ARM ID cannot be parsed. */
export class InvalidIdentityIdError extends Error {
  override readonly name = "InvalidIdentityIdError";
}

/**
 * The identities the fake ARM serves, keyed by the lowercased ARM ID (ARM IDs are
 * case-insensitive). Changes are visible to the next ARM request at once.
 */
export class IdentityStore {
  private readonly identities = new Map<string, SandboxIdentity>();

  /**
   * Creates an identity, or replaces the one with the same (case-insensitive) ID.
   *
   * @param resourceId - The identity's ARM ID; its casing is kept for the `id` ARM returns.
   * @param overrides - Explicit clientId / principalId; random GUIDs otherwise.
   * @returns The stored identity.
   * @throws InvalidIdentityIdError when the ID is not a user-assigned identity ID.
   */
  create(resourceId: string, overrides: IdentityOverrides = {}): SandboxIdentity {
    const parts = parseIdentityResourceId(resourceId);
    if (parts === undefined) {
      throw new InvalidIdentityIdError(`not a user-assigned identity ARM ID: ${resourceId}`);
    }
    const identity: SandboxIdentity = {
      id: resourceId,
      ...parts,
      clientId: overrides.clientId ?? randomUUID(),
      principalId: overrides.principalId ?? randomUUID(),
      tenantId: overrides.tenantId ?? sandboxTenantId,
      location: sandboxLocation,
    };
    this.identities.set(resourceId.toLowerCase(), identity);
    return { ...identity };
  }

  /**
   * @param resourceId - The identity's ARM ID, any casing.
   * @returns A copy of the identity, or undefined.
   */
  get(resourceId: string): SandboxIdentity | undefined {
    const identity = this.identities.get(resourceId.toLowerCase());
    return identity === undefined ? undefined : { ...identity };
  }

  /** @returns Copies of all identities. */
  list(): SandboxIdentity[] {
    return [...this.identities.values()].map((identity) => ({ ...identity }));
  }

  /**
   * @param resourceId - The identity's ARM ID, any casing.
   * @returns Whether an identity was deleted.
   */
  delete(resourceId: string): boolean {
    return this.identities.delete(resourceId.toLowerCase());
  }

  /**
   * Gives an identity new random clientId and principalId values, as if it had been deleted and
   * recreated with the same name.
   *
   * @param resourceId - The identity's ARM ID, any casing.
   * @returns The updated identity, or undefined when it does not exist.
   */
  rotate(resourceId: string): SandboxIdentity | undefined {
    const identity = this.identities.get(resourceId.toLowerCase());
    if (identity === undefined) {
      return undefined;
    }
    identity.clientId = randomUUID();
    identity.principalId = randomUUID();
    return { ...identity };
  }

  /** Removes every identity. */
  clear(): void {
    this.identities.clear();
  }
}
