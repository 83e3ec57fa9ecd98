/**
 * The Managed Identities data plane client, sending what upstream's client (Azure/msi-dataplane)
 * sends: `POST <identity URL>` first without a token, then with the first party's token in the
 * tenant of the 401 challenge. Unlike upstream, that tenant must be the identity URL's `tid`
 * (docs/design.md, "Whose credential reads a cluster's identities").
 */
import type { TokenCredential } from "@azure/identity";
import type { Agent } from "node:https";
import type { HttpClient, Pipeline, PipelinePolicy, PipelineRequest, PipelineRequestOptions, PipelineResponse } from "@azure/core-rest-pipeline";
import { guidPattern } from "../core/azureResourceId";
import type { DataPlaneHosts } from "../core/identityUrl";
import { dataPlaneRequestBody, dataPlaneRequestUrl, identityUrlField, readIdentityUrl } from "../core/identityUrl";
import { shortMessage, withoutFinalPeriod } from "../core/retrievalError";
import type { DataPlaneIdentity } from "./dataPlaneAnswer";
import { DataPlaneError, readDataPlaneAnswer } from "./dataPlaneAnswer";
import type { MsiAnswerEntry, StandIn } from "../core/msiManagedIdentities";
import { standInAnswer } from "../core/msiManagedIdentities";

/** The API version of the credentials call, as upstream's client sends it. */
const dataPlaneApiVersion = "2024-01-01";

/** The pipeline of the hand-written clients (this one, and each SMI's token requests). */
export interface TokenRequestPipeline {
  readonly core: typeof import("@azure/core-rest-pipeline");
  readonly pipeline: Pipeline;
  readonly httpClient: HttpClient;
}

/** A pipeline with the SDK's retries; @azure/core-rest-pipeline loads at the first call. */
export function createTokenRequestPipeline(options: {
  readonly agent?: Agent;
  readonly userAgentPrefix: string;
  readonly maxRetries?: number;
}): TokenRequestPipeline {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use
  const core = require("@azure/core-rest-pipeline") as typeof import("@azure/core-rest-pipeline");
  const pipeline = core.createPipelineFromOptions({
    agent: options.agent,
    // A redirect is an answer, never followed: these requests carry a client assertion or the first party's token.
    redirectOptions: { maxRetries: 0 },
    ...(options.maxRetries === undefined ? {} : { retryOptions: { maxRetries: options.maxRetries } }),
    userAgentOptions: { userAgentPrefix: options.userAgentPrefix },
  });
  return { core, pipeline, httpClient: core.createDefaultHttpClient() };
}

/** Sends one request (`prepare` sees it first); a failure to get an answer, other than an abort, becomes `unreachable(reason, error)`. */
export async function sendPipelineRequest(
  { core, pipeline, httpClient }: TokenRequestPipeline,
  options: Omit<PipelineRequestOptions, "headers"> & { readonly headers: Record<string, string> },
  unreachable: (reason: string, error: unknown) => Error,
  prepare?: (request: PipelineRequest) => void,
): Promise<PipelineResponse> {
  const request = core.createPipelineRequest({ ...options, headers: core.createHttpHeaders(options.headers) });
  prepare?.(request);
  try {
    return await pipeline.sendRequest(httpClient, request);
  } catch (error) {
    const like = error as { name?: unknown; code?: unknown; message?: unknown };
    if (like.name === "AbortError") throw error;
    throw unreachable(typeof like.code === "string" ? like.code : shortMessage(typeof like.message === "string" ? like.message : "error"), error);
  }
}

/** Asks one identity URL for the credentials of identities assigned to its cluster. */
export interface ManagedIdentitiesDataPlane {
  /** One request for `identityIds`; resolves to the answer's entries as given (order and casing not assumed) and the tenant the identity URL names (its `tid`, lowercased). */
  requestCredentials(
    identityUrl: string,
    identityIds: readonly string[],
    options: { readonly abortSignal?: AbortSignal },
  ): Promise<{ readonly tenantId: string; readonly identities: readonly DataPlaneIdentity[] }>;
}

/** Builds the client; `hosts` are the configured cloud's data plane hosts (core/identityUrl.ts). */
export function createManagedIdentitiesDataPlane(options: {
  readonly firstPartyCredential: TokenCredential;
  readonly audience: string;
  readonly hosts: DataPlaneHosts;
  readonly agent?: Agent;
  readonly userAgentPrefix: string;
}): ManagedIdentitiesDataPlane {
  const scope = `${options.audience.replace(/\/+$/, "")}/.default`;
  // The tenant each request's identity URL names: the only one its challenge may name.
  const urlTenants = new WeakMap<PipelineRequest, string>();
  let client: TokenRequestPipeline | undefined;
  const build = (): TokenRequestPipeline => {
    const built = createTokenRequestPipeline({ agent: options.agent, maxRetries: 2, userAgentPrefix: options.userAgentPrefix });
    built.pipeline.addPolicy(challengePolicy(built.core, options.firstPartyCredential, scope, urlTenants), { phase: "Sign" });
    return built;
  };
  return {
    async requestCredentials(identityUrl, identityIds, { abortSignal }) {
      client ??= build();
      const target = requestTarget(identityUrl, options.hosts);
      const url = new URL(target.url);
      const response = await sendPipelineRequest(
        client,
        {
          url: url.toString(),
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: dataPlaneRequestBody(identityIds),
          abortSignal,
        },
        (reason, error) =>
          error instanceof DataPlaneError
            ? error
            : new DataPlaneError(`the Managed Identities data plane at ${url.host} could not be reached (${reason})`, { cause: error }),
        (request) => urlTenants.set(request, target.tenantId),
      );
      if (response.status === 401) {
        throw new DataPlaneError(
          `the Managed Identities data plane at ${url.host} answered 401 ${response.headers.has("www-authenticate") ? "to the first party's token" : "without a bearer challenge"}`,
          { statusCode: 401 },
        );
      }
      return { tenantId: target.tenantId, identities: readDataPlaneAnswer(response.status, response.bodyAsText ?? "", url.host) };
    },
  };
}

/** The request URL of an identity URL, with its tenant; a DataPlaneError naming the field when the first party may not call it. */
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

/**
 * The SDK's bearer token policy: no token at first, then the first party's token in the challenge's tenant, when it is the
 * identity URL's, asked of the credential itself: the policy's token cycler holds one token and could hand one tenant's to another.
 */
function challengePolicy(
  core: TokenRequestPipeline["core"],
  credential: TokenCredential,
  scope: string,
  urlTenants: WeakMap<PipelineRequest, string>,
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
            `${withoutFinalPeriod(shortMessage(String(like.message)))} (the first-party credential, asked for a token for ${scope} in tenant ${tenantId})`,
            { firstParty: true, cause: error },
          );
        }
        if (token === null) {
          throw new DataPlaneError(`the first-party credential returned no token for ${scope} in tenant ${tenantId}`, { firstParty: true });
        }
        request.headers.set("authorization", `Bearer ${token.token}`);
        return true;
      },
    },
  });
}

/** The tenant of a `Bearer authorization="https://<authority>/<tenant>"` challenge, when it is a GUID. */
function challengeTenant(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /authorization(?:_uri)?\s*=\s*"?([^",\s]+)"?/i.exec(header);
  if (match === null || !URL.canParse(match[1])) return undefined;
  const tenant = new URL(match[1]).pathname.replace(/^\/+|\/+$/g, "").toLowerCase();
  return guidPattern.test(tenant) ? tenant : undefined;
}

/** The MSI half's one answer about a cluster's identities, naming every identity asked for (upstream's FetchMSIIdentitiesInfo). */
export interface MsiAnswerSource {
  answer(identityUrl: string, identityIds: readonly string[], options: { readonly abortSignal: AbortSignal }): Promise<readonly MsiAnswerEntry[]>;
  /** Set for upstream's stand-in: the IDs it answers for every identity. */
  readonly standIn?: StandIn;
}

/** The data plane as the first party asks it; each entry's IDs only, never its credential. */
export function dataPlaneMsiAnswers(dataPlane: ManagedIdentitiesDataPlane): MsiAnswerSource {
  return {
    async answer(identityUrl, identityIds, options) {
      const { identities } = await dataPlane.requestCredentials(identityUrl, identityIds, options);
      return identities.map(({ resourceId, clientId, objectId }) => ({ resourceId, clientId, objectId }));
    },
  };
}

/** Upstream's stand-in in `fixedIdentity` mode: the fixed identity's IDs for every identity, without a call. */
export function standInMsiAnswers(fixed: { readonly clientId: string; readonly principalId: string; readonly overwriteAllowed?: boolean }): MsiAnswerSource {
  const standIn = { clientId: fixed.clientId, principalId: fixed.principalId, overwriteAllowed: fixed.overwriteAllowed ?? false };
  return { answer: (_identityUrl, identityIds) => Promise.resolve(standInAnswer(identityIds, standIn)), standIn };
}
