/**
 * The Managed Identities data plane client: asks a cluster's identity URL for the credentials of
 * identities assigned to the cluster, sending what upstream's client (github.com/Azure/msi-dataplane)
 * sends:
 *
 * - `POST` at the identity URL with `api-version=2024-01-01` added to its own query, URL and body
 *   written byte for byte as the Go client writes them (core/dataPlaneRequestUrl.ts);
 * - every request goes out first without a token; the service answers 401 with
 *   `WWW-Authenticate: Bearer authorization="<authority>/<tenant GUID>"`, and the request is sent
 *   again with the first-party credential's token for `<audience>/.default` in that tenant, which
 *   need not be the first party's home tenant.
 *
 * Where this client deliberately differs from upstream's: before anything is sent, the identity
 * URL must be on a data plane host of the configured cloud and name its tenant (`tid`), and the
 * challenge must name that same tenant (core/identityUrl.ts). Upstream's client asks for a token
 * in whatever tenant a challenge names; here a challenge for another tenant fails the cluster
 * before the first party asks for any token, so an identity URL cannot steer the first party into
 * a tenant that is not the cluster's.
 *
 * The request goes through @azure/core-rest-pipeline: its retry policies (429/5xx with
 * Retry-After), the keep-alive agent, and its bearer token policy with challenge callbacks (no
 * token on the first attempt, the challenge's tenant on the second). The callback asks the
 * first-party credential itself rather than the policy's token cycler: the cycler holds one token,
 * and a refresh for one tenant in flight is handed to a caller that asked for another tenant, while
 * the first-party credential (sharedTokenCredential.ts) keeps one token per tenant.
 *
 * Failures are {@link DataPlaneError}: `firstParty` set (with the tenant) when the first-party
 * credential could not get its token in the challenge's tenant; `field` set when the identity URL
 * or the challenge at it is refused; neither when the data plane answered something unusable.
 */
import type { TokenCredential } from "@azure/identity";
import type { Agent } from "node:https";
import type { PipelinePolicy, PipelineResponse } from "@azure/core-rest-pipeline";
import { guidPattern } from "../core/azureResourceId";
import { dataPlaneRequestBody, dataPlaneRequestUrl } from "../core/dataPlaneRequestUrl";
import type { DataPlaneHosts } from "../core/identityUrl";
import { identityUrlField, readIdentityUrl } from "../core/identityUrl";
import { shortMessage } from "../core/retrievalError";
import type { DataPlaneIdentity, ServiceManagedIdentityCredential } from "./dataPlaneAnswer";
import { credentialOf, DataPlaneError, entryFor, readDataPlaneAnswer } from "./dataPlaneAnswer";

export { DataPlaneError } from "./dataPlaneAnswer";
export type { DataPlaneIdentity, ServiceManagedIdentityCredential } from "./dataPlaneAnswer";

/** The API version of the credentials call, as upstream's client sends it. */
export const dataPlaneApiVersion = "2024-01-01";

/** Asks one identity URL for the credentials of identities assigned to its cluster. */
export interface ManagedIdentitiesDataPlane {
  /** One request for `identityIds`; resolves to the answer's entries as given (order and casing not assumed). */
  requestCredentials(
    identityUrl: string,
    identityIds: readonly string[],
    options: { readonly abortSignal?: AbortSignal },
  ): Promise<readonly DataPlaneIdentity[]>;
}

/** What the client needs: the first-party credential, the audience, the hosts it may call, and the process's agent. */
export interface DataPlaneClientOptions {
  readonly firstPartyCredential: TokenCredential;
  readonly audience: string;
  /** The configured cloud's data plane hosts (and loopback ones in a sandbox run): core/identityUrl.ts. */
  readonly hosts: DataPlaneHosts;
  readonly agent?: Agent;
  readonly userAgentPrefix?: string;
}

/**
 * The credential of a cluster's service managed identity: one request for it alone, as upstream's
 * data plane operators controller makes it.
 * @throws DataPlaneError when the answer holds no usable credential for it.
 */
export async function fetchServiceManagedIdentityCredential(
  dataPlane: ManagedIdentitiesDataPlane,
  identityUrl: string,
  serviceManagedIdentity: string,
  options: { readonly abortSignal?: AbortSignal },
): Promise<ServiceManagedIdentityCredential> {
  const identities = await dataPlane.requestCredentials(identityUrl, [serviceManagedIdentity], options);
  const identity = entryFor(identities, serviceManagedIdentity);
  if (identity === undefined) {
    throw new DataPlaneError(`the Managed Identities data plane's answer holds no credential for ${serviceManagedIdentity}`);
  }
  return credentialOf(identity);
}

/** Builds the client; @azure/core-rest-pipeline is loaded at the first call. */
export function createManagedIdentitiesDataPlane(options: DataPlaneClientOptions): ManagedIdentitiesDataPlane {
  type Core = typeof import("@azure/core-rest-pipeline");
  const scope = `${options.audience.replace(/\/+$/, "")}/.default`;
  // The tenant each request's identity URL names: the only one its challenge may name.
  const urlTenants = new WeakMap<import("@azure/core-rest-pipeline").PipelineRequest, string>();
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
    pipeline.addPolicy(challengePolicy(core, options.firstPartyCredential, scope, urlTenants), { phase: "Sign" });
    return { core, pipeline, httpClient: core.createDefaultHttpClient() };
  };
  return {
    async requestCredentials(identityUrl, identityIds, { abortSignal }) {
      client ??= build();
      const { core, pipeline, httpClient } = client;
      const target = requestTarget(identityUrl, options.hosts);
      const url = new URL(target.url);
      const request = core.createPipelineRequest({
        url: url.toString(),
        method: "POST",
        headers: core.createHttpHeaders({ "content-type": "application/json", accept: "application/json" }),
        body: dataPlaneRequestBody(identityIds),
        ...(abortSignal === undefined ? {} : { abortSignal }),
      });
      urlTenants.set(request, target.tenantId);
      let response: PipelineResponse;
      try {
        response = await pipeline.sendRequest(httpClient, request);
      } catch (error) {
        if (error instanceof DataPlaneError) throw error;
        const like = error as { name?: unknown; code?: unknown; message?: unknown };
        if (like.name === "AbortError") throw error;
        const reason = typeof like.code === "string" ? like.code : shortMessage(typeof like.message === "string" ? like.message : "error");
        throw new DataPlaneError(`the Managed Identities data plane at ${url.host} could not be reached (${reason})`, { cause: error });
      }
      if (response.status === 401) {
        throw new DataPlaneError(
          `the Managed Identities data plane at ${url.host} answered 401 ${response.headers.has("www-authenticate") ? "to the first party's token" : "without a bearer challenge"}`,
          { statusCode: 401 },
        );
      }
      return readDataPlaneAnswer(response.status, response.bodyAsText ?? "", url.host);
    },
  };
}

/**
 * The request URL of an identity URL, with the tenant it names.
 * @throws DataPlaneError naming the field when the first party may not call it (core/identityUrl.ts); nothing was sent.
 */
function requestTarget(identityUrl: string, hosts: DataPlaneHosts): { readonly url: string; readonly tenantId: string } {
  let url: string;
  try {
    url = dataPlaneRequestUrl(identityUrl, dataPlaneApiVersion);
  } catch {
    url = "";
  }
  const reading = readIdentityUrl(url, hosts);
  if (!reading.ok) throw new DataPlaneError(`${reading.problem}; the Managed Identities data plane was not asked`, { field: identityUrlField });
  return { url, tenantId: reading.tenantId };
}

/** The SDK's bearer token policy: no token at first, then the first party's token in the challenge's tenant, when it is the identity URL's. */
function challengePolicy(
  core: typeof import("@azure/core-rest-pipeline"),
  credential: TokenCredential,
  scope: string,
  urlTenants: WeakMap<import("@azure/core-rest-pipeline").PipelineRequest, string>,
): PipelinePolicy {
  return core.bearerTokenAuthenticationPolicy({
    credential,
    scopes: scope,
    challengeCallbacks: {
      authorizeRequest: () => Promise.resolve(),
      async authorizeRequestOnChallenge({ request, response }) {
        const tenantId = challengeTenant(response.headers.get("www-authenticate"));
        if (tenantId === undefined) {
          throw new DataPlaneError(
            'the Managed Identities data plane answered 401 without a usable bearer challenge (expected authorization="<authority>/<tenant GUID>")',
            { statusCode: 401 },
          );
        }
        const urlTenant = urlTenants.get(request);
        if (tenantId !== urlTenant) {
          throw new DataPlaneError(
            `the Managed Identities data plane at ${new URL(request.url).host} challenged for a token in tenant ${tenantId}, ` +
              `but the cluster's identity URL (${identityUrlField}) names tenant ${urlTenant ?? "none"} (its tid): ` +
              "the first party asks for tokens only in the identity URL's tenant, so it asked for none",
            { statusCode: 401, field: identityUrlField },
          );
        }
        let token: Awaited<ReturnType<TokenCredential["getToken"]>>;
        try {
          token = await credential.getToken(scope, { tenantId, ...(request.abortSignal === undefined ? {} : { abortSignal: request.abortSignal }) });
        } catch (error) {
          const like = error as { name?: unknown; message?: unknown };
          if (like.name === "AbortError") throw error;
          throw new DataPlaneError(
            `${shortMessage(String(like.message)).replace(/[.\s]+$/, "")} (the first-party credential, asked for a token for ${scope} in tenant ${tenantId})`,
            {
              firstParty: true,
              tenantId,
              cause: error,
            },
          );
        }
        if (token === null) {
          throw new DataPlaneError(`the first-party credential returned no token for ${scope} in tenant ${tenantId}`, { firstParty: true, tenantId });
        }
        request.headers.set("authorization", `Bearer ${token.token}`);
        return true;
      },
    },
  });
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
