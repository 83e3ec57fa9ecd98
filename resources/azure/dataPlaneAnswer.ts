/**
 * What the Managed Identities data plane answers to `POST <identity URL>` with `identityIds`
 * (docs/operations.md, "Credential modes"): `explicit_identities`, one entry per requested
 * identity, snake_case, each with the identity's `resource_id`, `client_id`, `object_id` (null for
 * an identity that no longer exists) and its certificate credential (`client_secret`, base64
 * PKCS#12 or PEM; `tenant_id`; `authentication_endpoint`; validity times). Errors are
 * `{"error":{"code","message"}}`.
 *
 * Messages never carry a bundle, a token or a key.
 */
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { CertificateBundleError, parseCertificateBundle } from "./certificateBundle";
import { goToLower } from "../core/goStrings";
import { shortMessage } from "../core/identityStatus";

/** Why a data plane answer, or the first party's token for it, could not be had. */
export class DataPlaneError extends Error {
  /** The data plane's HTTP status, when it answered with an error. */
  readonly statusCode: number | undefined;
  /** True when the first-party credential failed (in {@link tenantId}): not about the cluster's identities. */
  readonly firstParty: boolean;
  /** The tenant the data plane's challenge named, when the first party failed in it. */
  readonly tenantId: string | undefined;
  /** The cluster document field at fault, when the hook refused to call the data plane or to follow its challenge. */
  readonly field: string | undefined;

  constructor(message: string, options: { statusCode?: number; firstParty?: boolean; tenantId?: string; field?: string; cause?: unknown } = {}) {
    super(message);
    this.statusCode = options.statusCode;
    this.firstParty = options.firstParty ?? false;
    this.tenantId = options.tenantId;
    this.field = options.field;
    if (options.cause !== undefined) Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true, enumerable: false });
  }
}
DataPlaneError.prototype.name = "DataPlaneError";

/** One entry of `explicit_identities`, as answered. */
export interface DataPlaneIdentity {
  /** `resource_id` as answered (casing not assumed). */
  readonly resourceId: string;
  /** `client_id`; null when the answer has none (the identity no longer exists). */
  readonly clientId: string | null;
  /** `object_id` (the principal ID); null when the answer has none. */
  readonly objectId: string | null;
  /** The whole entry, for {@link credentialOf}. */
  readonly entry: Readonly<Record<string, unknown>>;
}

/** A service managed identity's credential, as the data plane handed it over. */
export interface ServiceManagedIdentityCredential {
  readonly resourceId: string;
  readonly clientId: string;
  readonly tenantId: string;
  /** The Entra ID authority host to authenticate at (possibly regional). */
  readonly authenticationEndpoint: string;
  readonly material: CertificateCredentialMaterial;
  /** When a new credential would be issued; undefined when the answer did not say. */
  readonly renewAfter: Date | undefined;
  /** When this credential stops working; undefined when the answer did not say. */
  readonly notAfter: Date | undefined;
}

/**
 * The entries of an answer.
 * @throws DataPlaneError for an error status, a body that is not JSON, or no `explicit_identities` array.
 */
export function readDataPlaneAnswer(status: number, body: string, host: string): DataPlaneIdentity[] {
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? undefined : JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (status !== 200) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const detail = typeof error?.code === "string" ? `${error.code}: ${shortMessage(typeof error.message === "string" ? error.message : "")}` : "no error body";
    throw new DataPlaneError(`the Managed Identities data plane at ${host} answered HTTP ${status} (${detail})`, { statusCode: status });
  }
  const identities = (parsed as { explicit_identities?: unknown } | undefined)?.explicit_identities;
  if (!Array.isArray(identities)) {
    throw new DataPlaneError(`the Managed Identities data plane at ${host} answered with no explicit_identities`);
  }
  return identities.map((candidate: unknown, index): DataPlaneIdentity => {
    const entry = typeof candidate === "object" && candidate !== null ? (candidate as Record<string, unknown>) : {};
    const text = (name: string): string | null => (typeof entry[name] === "string" ? entry[name] : null);
    const resourceId = text("resource_id");
    if (resourceId === null || resourceId.length === 0) {
      throw new DataPlaneError(`the Managed Identities data plane at ${host} answered an entry without resource_id (explicit_identities[${index}])`);
    }
    return { resourceId, clientId: text("client_id"), objectId: text("object_id"), entry };
  });
}

/** The entry of `identityId` (matched by its lowercased ID), or undefined. */
export function entryFor(identities: readonly DataPlaneIdentity[], identityId: string): DataPlaneIdentity | undefined {
  const wanted = goToLower(identityId);
  return identities.find((identity) => goToLower(identity.resourceId) === wanted);
}

/**
 * The certificate credential an entry carries.
 * @param now - The clock, for the `not_after` check.
 * @throws DataPlaneError naming the missing or unusable field.
 */
export function credentialOf(identity: DataPlaneIdentity, now: number = Date.now()): ServiceManagedIdentityCredential {
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
  const authenticationEndpoint = field("authentication_endpoint");
  if (!/^https:\/\//i.test(authenticationEndpoint)) {
    throw new DataPlaneError(`the data plane's credential for ${resourceId} has an authentication_endpoint that is not an https:// URL`);
  }
  let material: CertificateCredentialMaterial;
  try {
    material = parseCertificateBundle(Buffer.from(field("client_secret"), "base64"), `the client_secret of the data plane's credential for ${resourceId}`);
  } catch (error) {
    if (error instanceof CertificateBundleError) throw new DataPlaneError(`unusable certificate: ${error.message}`, { cause: error });
    throw error;
  }
  const time = (name: string): Date | undefined => {
    const value = entry[name];
    const date = typeof value === "string" ? new Date(value) : undefined;
    return date !== undefined && !Number.isNaN(date.getTime()) ? date : undefined;
  };
  const notAfter = time("not_after");
  if (notAfter !== undefined && notAfter.getTime() <= now) {
    throw new DataPlaneError(`the data plane's credential for ${resourceId} expired at ${notAfter.toISOString()} (not_after)`);
  }
  return { resourceId, clientId, tenantId, authenticationEndpoint, material, renewAfter: time("renew_after"), notAfter };
}
