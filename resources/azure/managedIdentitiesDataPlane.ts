/**
 * The Managed Identities data plane client: asks a cluster's identity URL for the credential of
 * that cluster's service managed identity (docs/operations.md, "Credential modes"; the protocol
 * as upstream's msi-dataplane client speaks it):
 *
 * - `POST <identity URL, its own query kept, api-version=2024-01-01 added>` with
 *   `{"identityIds":["<SMI resource ID>"]}`, the URL written exactly as upstream's Go client
 *   writes it (core/dataPlaneRequestUrl.ts);
 * - every request goes out first without a token; the service answers 401 with
 *   `WWW-Authenticate: Bearer authorization="<authority>/<tenant GUID>"`, and the request is sent
 *   again with the first-party credential's token for `<audience>/.default` in that tenant
 *   (cached per tenant by the caller's credential, sharedTokenCredential.ts);
 * - the answer's `explicit_identities` entry for the SMI carries a certificate bundle
 *   (`client_secret`, base64 PKCS#12 or PEM), its tenant, client ID, authority host and validity.
 *
 * Sent through @azure/core-rest-pipeline (the Azure SDK's own pipeline: retries of 429/5xx with
 * Retry-After, the keep-alive agent, user agent), with one policy of ours for the challenge.
 * Failures are {@link DataPlaneError}: `firstParty` set when the first-party credential could not
 * get its token (every cluster's pass would fail the same way), unset when the data plane answered
 * something unusable for this cluster. Messages never carry the bundle, a token or the key.
 */
import type { TokenCredential } from "@azure/identity";
import type { Agent } from "node:https";
import type { CertificateCredentialMaterial } from "./certificateBundle";
import { CertificateBundleError, parseCertificateBundle } from "./certificateBundle";
import { guidPattern } from "../core/azureResourceId";
import { dataPlaneRequestUrl } from "../core/dataPlaneRequestUrl";
import { shortMessage } from "../core/identityStatus";

/** The API version of the credentials call, as upstream's client sends it. */
export const dataPlaneApiVersion = "2024-01-01";

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

/** Why a cluster's credential could not be had. */
export class DataPlaneError extends Error {
  /** The data plane's HTTP status, when it answered with an error. */
  readonly statusCode: number | undefined;
  /** True when the first-party credential failed: not about this cluster. */
  readonly firstParty: boolean;

  constructor(message: string, options: { statusCode?: number; firstParty?: boolean; cause?: unknown } = {}) {
    super(message);
    this.statusCode = options.statusCode;
    this.firstParty = options.firstParty ?? false;
    if (options.cause !== undefined) Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true, enumerable: false });
  }
}
DataPlaneError.prototype.name = "DataPlaneError";

/** Asks one identity URL for one service managed identity's credential. */
export interface ManagedIdentitiesDataPlane {
  fetchCredential(
    identityUrl: string,
    serviceManagedIdentity: string,
    options: { readonly abortSignal?: AbortSignal },
  ): Promise<ServiceManagedIdentityCredential>;
}

/** What the client needs: the first-party credential, the audience, and the process's agent. */
export interface DataPlaneClientOptions {
  readonly firstPartyCredential: TokenCredential;
  readonly audience: string;
  readonly agent?: Agent;
  readonly userAgentPrefix?: string;
}

/** Builds the client; @azure/core-rest-pipeline is loaded at the first call. */
export function createManagedIdentitiesDataPlane(options: DataPlaneClientOptions): ManagedIdentitiesDataPlane {
  type Core = typeof import("@azure/core-rest-pipeline");
  const scope = `${options.audience.replace(/\/+$/, "")}/.default`;
  let client:
    | {
        readonly core: Core;
        readonly pipeline: import("@azure/core-rest-pipeline").Pipeline;
        readonly httpClient: import("@azure/core-rest-pipeline").HttpClient;
      }
    | undefined;
  const build = (): NonNullable<typeof client> => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first data plane call
    const core = require("@azure/core-rest-pipeline") as Core;
    const pipeline = core.createPipelineFromOptions({
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      retryOptions: { maxRetries: 2 },
      userAgentOptions: { userAgentPrefix: options.userAgentPrefix ?? "aro-hcp-identity-status" },
    });
    pipeline.addPolicy(challengePolicy(options.firstPartyCredential, scope), { phase: "Sign" });
    return { core, pipeline, httpClient: core.createDefaultHttpClient() };
  };
  return {
    async fetchCredential(identityUrl, serviceManagedIdentity, { abortSignal }) {
      client ??= build();
      const { core, pipeline, httpClient } = client;
      // As upstream's Go client builds it (core/dataPlaneRequestUrl.ts, checked against Go's vectors).
      const url = new URL(dataPlaneRequestUrl(identityUrl, dataPlaneApiVersion));
      const request = core.createPipelineRequest({
        url: url.toString(),
        method: "POST",
        headers: core.createHttpHeaders({ "content-type": "application/json", accept: "application/json" }),
        body: JSON.stringify({ identityIds: [serviceManagedIdentity] }),
        ...(abortSignal === undefined ? {} : { abortSignal }),
      });
      let response: import("@azure/core-rest-pipeline").PipelineResponse;
      try {
        response = await pipeline.sendRequest(httpClient, request);
      } catch (error) {
        if (error instanceof DataPlaneError) throw error;
        const like = error as { name?: unknown; code?: unknown; message?: unknown };
        if (like.name === "AbortError") throw error;
        const reason = typeof like.code === "string" ? like.code : shortMessage(typeof like.message === "string" ? like.message : "error");
        throw new DataPlaneError(`the Managed Identities data plane at ${url.host} could not be reached: ${reason}`, { cause: error });
      }
      return readAnswer(response.status, response.bodyAsText ?? "", serviceManagedIdentity, url.host);
    },
  };
}

/** Sends each request without a token first, and again with one for the tenant the challenge names. */
function challengePolicy(credential: TokenCredential, scope: string): import("@azure/core-rest-pipeline").PipelinePolicy {
  return {
    name: "managedIdentitiesDataPlaneChallenge",
    async sendRequest(request, next) {
      request.headers.delete("authorization");
      const first = await next(request);
      if (first.status !== 401) return first;
      const tenantId = challengeTenant(first.headers.get("www-authenticate"));
      if (tenantId === undefined) {
        throw new DataPlaneError(
          `the Managed Identities data plane answered 401 without a usable bearer challenge (expected authorization="<authority>/<tenant GUID>")`,
          {
            statusCode: 401,
          },
        );
      }
      let token: Awaited<ReturnType<TokenCredential["getToken"]>>;
      try {
        token = await credential.getToken(scope, { tenantId, ...(request.abortSignal === undefined ? {} : { abortSignal: request.abortSignal }) });
      } catch (error) {
        const like = error as { name?: unknown; message?: unknown };
        if (like.name === "AbortError") throw error;
        throw new DataPlaneError(`the first-party credential could not get a token for ${scope} in tenant ${tenantId}: ${shortMessage(String(like.message))}`, {
          firstParty: true,
          cause: error,
        });
      }
      if (token === null) throw new DataPlaneError(`the first-party credential returned no token for ${scope} in tenant ${tenantId}`, { firstParty: true });
      request.headers.set("authorization", `Bearer ${token.token}`);
      return next(request);
    },
  };
}

/** The tenant of a `Bearer authorization="https://<authority>/<tenant>"` challenge, when it is a GUID. */
export function challengeTenant(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /authorization(?:_uri)?\s*=\s*"?([^",\s]+)"?/i.exec(header);
  if (match === null) return undefined;
  let path: string;
  try {
    path = new URL(match[1]).pathname;
  } catch {
    return undefined;
  }
  const tenant = path.replace(/^\/+|\/+$/g, "").toLowerCase();
  return guidPattern.test(tenant) ? tenant : undefined;
}

function readAnswer(status: number, body: string, serviceManagedIdentity: string, host: string): ServiceManagedIdentityCredential {
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? undefined : JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (status !== 200) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const detail =
      typeof error?.code === "string" ? `${error.code}: ${shortMessage(typeof error.message === "string" ? error.message : "")}` : `HTTP ${status}`;
    throw new DataPlaneError(`the Managed Identities data plane at ${host} answered HTTP ${status} for ${serviceManagedIdentity} (${detail})`, {
      statusCode: status,
    });
  }
  const identities = (parsed as { explicit_identities?: unknown } | undefined)?.explicit_identities;
  if (!Array.isArray(identities) || identities.length === 0) {
    throw new DataPlaneError(`the Managed Identities data plane's answer holds no explicit_identities for ${serviceManagedIdentity}`);
  }
  const entry = identities.find(
    (candidate: unknown): candidate is Record<string, unknown> =>
      typeof candidate === "object" &&
      candidate !== null &&
      typeof (candidate as { resource_id?: unknown }).resource_id === "string" &&
      (candidate as { resource_id: string }).resource_id.toLowerCase() === serviceManagedIdentity.toLowerCase(),
  );
  if (entry === undefined) {
    throw new DataPlaneError(`the Managed Identities data plane's answer holds no credential for ${serviceManagedIdentity}`);
  }
  const field = (name: string): string => {
    const value = entry[name];
    if (typeof value !== "string" || value.length === 0) {
      throw new DataPlaneError(`the Managed Identities data plane's credential for ${serviceManagedIdentity} has no ${name}`);
    }
    return value;
  };
  const clientId = field("client_id");
  const tenantId = field("tenant_id");
  const authenticationEndpoint = field("authentication_endpoint");
  if (!/^https:\/\//i.test(authenticationEndpoint)) {
    throw new DataPlaneError(
      `the Managed Identities data plane's credential for ${serviceManagedIdentity} has an authentication_endpoint that is not an https:// URL`,
    );
  }
  let material: CertificateCredentialMaterial;
  try {
    material = parseCertificateBundle(
      Buffer.from(field("client_secret"), "base64"),
      `the client_secret of the data plane's credential for ${serviceManagedIdentity}`,
    );
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
  if (notAfter !== undefined && notAfter.getTime() <= Date.now()) {
    throw new DataPlaneError(`the Managed Identities data plane's credential for ${serviceManagedIdentity} expired at ${notAfter.toISOString()} (not_after)`);
  }
  return { resourceId: serviceManagedIdentity, clientId, tenantId, authenticationEndpoint, material, renewAfter: time("renew_after"), notAfter };
}
