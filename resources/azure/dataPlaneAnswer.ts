/**
 * The Managed Identities data plane's answer: `explicit_identities`, one snake_case entry per identity
 * with its IDs and certificate credential, or `{"error":{"code","message"}}`. Messages never carry a
 * bundle, a token or a key.
 */
import { describeType } from "../core/azureResourceId";
import { parseTimestamp } from "../core/goJson";
import { goToLower } from "../core/goStrings";
import { parsedJsonText } from "../core/json";
import type { MsiAnswerEntry } from "../core/msiManagedIdentities";
import { shortMessage } from "../core/retrievalError";
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { CertificateBundleError, parseCertificateBundle } from "./certificateBundle";
import { withCause } from "../core/errors";

/** Why a data plane answer, or the first party's token for it, could not be had. */
export class DataPlaneError extends Error {
  readonly statusCode: number | undefined;
  /** The first-party credential failed (in the challenge's tenant): not about the cluster's identities. */
  readonly firstParty: boolean;
  /** The cluster document field at fault, when the hook refused to call the data plane or to follow its challenge. */
  readonly field: string | undefined;

  constructor(message: string, options: { statusCode?: number; firstParty?: boolean; field?: string; cause?: unknown } = {}) {
    super(message);
    this.statusCode = options.statusCode;
    this.firstParty = options.firstParty ?? false;
    this.field = options.field;
    withCause(this, options.cause);
  }
}
DataPlaneError.prototype.name = "DataPlaneError";

/** One entry of `explicit_identities` (`client_id` and `object_id` are null for an identity that no longer exists), and the entry as sent. */
export interface DataPlaneIdentity extends MsiAnswerEntry {
  readonly entry: Readonly<Record<string, unknown>>;
}

export interface ServiceManagedIdentityCredential {
  readonly resourceId: string;
  readonly clientId: string;
  /** The answer's `tenant_id` as spelled there (the pin's tenant, in any case: upstream's client sends it as given), at the configured authority. */
  readonly tenantId: string;
  readonly authorityHost: string;
  readonly material: CertificateCredentialMaterial;
  readonly renewAfter: Date | undefined;
  readonly notAfter: Date | undefined;
}

/**
 * The entries of an answer (`explicit_identities`), as strict as upstream's client (Go's
 * encoding/json into msi-dataplane's structs): a field of another type anywhere refuses the whole
 * answer. Stricter where "the identity is gone" is at stake: each entry must carry `resource_id`,
 * and `client_id` and `object_id` (null or a string).
 */
export function readDataPlaneAnswer(status: number, body: string, host: string): DataPlaneIdentity[] {
  const parsed = parsedJsonText(body);
  if (status !== 200) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const detail = typeof error?.code === "string" ? `${error.code}: ${shortMessage(typeof error.message === "string" ? error.message : "")}` : "no error body";
    throw new DataPlaneError(`the Managed Identities data plane at ${host} answered HTTP ${status} (${detail})`, { statusCode: status });
  }
  const refused = (problem: string): DataPlaneError => new DataPlaneError(`the Managed Identities data plane at ${host} answered ${problem}`);
  if (parsed === undefined && body.length > 0) throw refused("a body that is not JSON");
  const typeProblem = goTypeProblem(parsed, managedIdentityCredentials, "");
  if (typeProblem !== undefined) throw refused(`what upstream's client refuses whole: ${typeProblem}`);
  const identities = (parsed as { explicit_identities?: unknown } | null | undefined)?.explicit_identities;
  if (!Array.isArray(identities)) throw refused("with no explicit_identities");
  return identities.map((candidate: unknown, index): DataPlaneIdentity => {
    // A null entry decodes in Go as an entry with every field empty.
    const entry = typeof candidate === "object" && candidate !== null ? (candidate as Record<string, unknown>) : {};
    const resourceId = entry.resource_id;
    if (typeof resourceId !== "string" || resourceId.length === 0) {
      throw refused(`an entry without resource_id (explicit_identities[${index}])`);
    }
    for (const name of ["client_id", "object_id"]) {
      if (!(name in entry)) throw refused(`an entry that has no ${name} (explicit_identities[${index}], ${resourceId})`);
    }
    return { resourceId, clientId: entry.client_id as string | null, objectId: entry.object_id as string | null, entry };
  });
}

/** A JSON shape as Go's encoding/json decodes into upstream's types: a *string, a struct (pointer), or a slice. */
type GoShape = "string" | { readonly fields: Readonly<Record<string, GoShape>> } | { readonly items: GoShape };

const text = "string" as const;
/** Fields that are strings; the order of the fields decides which problem is named first. */
const strings = (...names: string[]): Record<string, GoShape> => Object.fromEntries(names.map((name) => [name, text]));
const credentialFields = {
  ...strings("authentication_endpoint", "cannot_renew_after", "client_id", "client_secret", "client_secret_url"),
  custom_claims: { fields: { xms_az_nwperimid: { items: text }, xms_az_tm: text } },
  ...strings("mtls_authentication_endpoint", "not_after", "not_before", "object_id", "renew_after", "tenant_id"),
};
/** msi-dataplane's UserAssignedIdentityCredentials, DelegatedResource and ManagedIdentityCredentials (the whole answer). */
const userAssignedIdentityCredentials: GoShape = { fields: { ...credentialFields, resource_id: text } };
const delegatedResource: GoShape = {
  fields: {
    ...strings("delegation_id", "delegation_url"),
    explicit_identities: { items: userAssignedIdentityCredentials },
    implicit_identity: userAssignedIdentityCredentials,
    ...strings("internal_id", "resource_id"),
  },
};
const managedIdentityCredentials: GoShape = {
  fields: {
    ...credentialFields,
    delegated_resources: { items: delegatedResource },
    delegation_url: text,
    explicit_identities: { items: userAssignedIdentityCredentials },
    internal_id: text,
  },
};

/** Where `value` does not fit `shape` as Go's decoder sees it (null fits all; unknown fields are ignored), or undefined. */
function goTypeProblem(value: unknown, shape: GoShape, path: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  const where = path === "" ? "the answer" : path;
  if (shape === "string") {
    return typeof value === "string" ? undefined : `${where} is ${describeType(value)}, expected a string or null`;
  }
  if ("items" in shape) {
    if (!Array.isArray(value)) return `${where} is ${describeType(value)}, expected an array or null`;
    for (const [index, item] of value.entries()) {
      const problem = goTypeProblem(item, shape.items, `${path}[${index}]`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  if (typeof value !== "object" || Array.isArray(value)) return `${where} is ${describeType(value)}, expected an object or null`;
  for (const [name, fieldShape] of Object.entries(shape.fields)) {
    const problem = goTypeProblem((value as Record<string, unknown>)[name], fieldShape, path === "" ? name : `${path}.${name}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Where a cluster's SMI credential may be used: the tenant its identity URL names (`tid`), at the configured cloud's Entra ID
 * authority. The data plane's answer names both too; an answer naming any other would have the hook sign an assertion for the
 * cluster's SMI and send it to that tenant or host, so it is refused before anything is signed.
 */
export interface CredentialPin {
  readonly tenantId: string;
  readonly authorityHost: string;
}

/** Why the answer's `tenant_id` or `authentication_endpoint` is not the pin's (tenants as GUIDs, any case; authorities by scheme, host and port), or undefined. */
export function pinProblem(answer: { readonly tenantId: string; readonly authenticationEndpoint: string }, pin: CredentialPin): string | undefined {
  // An answer's values may be long or hostile: messages show their start only.
  const shown = (value: string): string => JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);
  if (answer.tenantId.toLowerCase() !== pin.tenantId.toLowerCase()) {
    return `names tenant_id ${shown(answer.tenantId)}, but the cluster's identity URL names tenant ${pin.tenantId} (its tid)`;
  }
  const origin = (url: string): string | undefined => (URL.canParse(url) ? new URL(url).origin : undefined);
  const expected = origin(pin.authorityHost);
  const received = origin(answer.authenticationEndpoint);
  if (received === undefined || !received.startsWith("https://") || received !== expected) {
    return `names authentication_endpoint ${shown(answer.authenticationEndpoint)}, but the configured Entra ID authority is ${pin.authorityHost} (the setting authorityHost, or azureCloud's)`;
  }
  return undefined;
}

/**
 * The certificate credential of `identityId` in an answer, pinned to the cluster's tenant and the configured authority; a
 * DataPlaneError naming a missing, unusable, expired or foreign field.
 */
export function credentialFor(
  identities: readonly DataPlaneIdentity[],
  identityId: string,
  pin: CredentialPin,
  now: number = Date.now(),
): ServiceManagedIdentityCredential {
  const identity = identities.find((candidate) => goToLower(candidate.resourceId) === goToLower(identityId));
  if (identity === undefined) throw new DataPlaneError(`the Managed Identities data plane's answer holds no credential for ${identityId}`);
  const { entry, resourceId } = identity;
  const field = (name: string): string => {
    const value = entry[name];
    if (typeof value !== "string" || value.length === 0) {
      throw new DataPlaneError(`the data plane's credential for ${resourceId} has no ${name}`);
    }
    return value;
  };
  const clientId = field("client_id");
  const tenantId = field("tenant_id");
  const foreign = pinProblem({ tenantId, authenticationEndpoint: field("authentication_endpoint") }, pin);
  if (foreign !== undefined) {
    throw new DataPlaneError(`the data plane's credential for ${resourceId} ${foreign}: it is used nowhere else, so no assertion was signed`);
  }
  let material: CertificateCredentialMaterial;
  try {
    material = parseCertificateBundle(Buffer.from(field("client_secret"), "base64"), `the client_secret of the data plane's credential for ${resourceId}`);
  } catch (error) {
    if (error instanceof CertificateBundleError) throw new DataPlaneError(`unusable certificate: ${error.message}`, { cause: error });
    throw error;
  }
  const notAfter = parseTimestamp(entry.not_after);
  if (notAfter !== undefined && notAfter.getTime() <= now) {
    throw new DataPlaneError(`the data plane's credential for ${resourceId} expired at ${notAfter.toISOString()} (not_after)`);
  }
  return { resourceId, clientId, tenantId, authorityHost: pin.authorityHost, material, renewAfter: parseTimestamp(entry.renew_after), notAfter };
}
