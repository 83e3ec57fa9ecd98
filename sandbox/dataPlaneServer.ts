import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { SandboxCertificate } from "./certificate";
import type { FaultInjector, FaultRule } from "./faultInjector";
import { editDataPlaneAnswer } from "./answerEdits";
import { applyFaults, listenOnLoopback, type ListeningServer, loopbackHost, readBody, sendBareStatus, sendJson } from "./httpUtilities";
import type { IdentityStore } from "./identityStore";
import { recordedExchange, recordedToken, type RequestRecorder } from "./requestRecorder";
import { type DataPlaneCluster, dataPlaneApiVersion, rfc3339, type SandboxCredentials } from "./sandboxCredentials";
import { increment, type SandboxStatistics } from "./sandboxStatistics";
import type { IssuedToken, TokenRegistry } from "./tokenRegistry";

/** What the data plane needs from the rest of the sandbox. */
export interface DataPlaneServerOptions {
  certificate: SandboxCertificate;
  credentials: SandboxCredentials;
  tokens: TokenRegistry;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  /** The identities that exist (an assigned identity deleted since is answered with nulls). */
  identities: IdentityStore;
  /** Where requests are recorded (the body, and of the token only its audience, tenant and client), when a recording runs. */
  recorder?: RequestRecorder;
}

/** A running Managed Identities data plane. */
export interface DataPlaneServer extends ListeningServer {
  /** `https://127.0.0.1:<port>`. */
  endpoint: string;
}

// Exactly the identity URL's path: upstream's client (msi-dataplane v0.4.3) appends nothing to it.
// How the real service routes a trailing '/' is not known, so the sandbox answers it as any other
// path no cluster is registered at (404), and a client that adds one fails here first.
const identitiesPathPattern =
  /^(\/subscriptions\/[^/]+\/resourcegroups\/[^/]+\/providers\/microsoft\.redhatopenshift\/hcpopenshiftclusters\/[^/]+)\/credentials\/v2\/identities$/i;

function dataPlaneError(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function bearerToken(request: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "");
  return match?.[1];
}

function faultStatus(rule: FaultRule): { statusCode: number; code: string; headers: Record<string, string> } {
  const retryAfter = rule.retryAfterSeconds ?? (rule.kind === "throttle" ? 1 : undefined);
  const headers: Record<string, string> = retryAfter === undefined ? {} : { "retry-after": String(retryAfter) };
  if (rule.kind === "throttle") return { statusCode: 429, code: rule.errorCode ?? "TooManyRequests", headers };
  if (rule.kind === "unavailable") return { statusCode: 503, code: rule.errorCode ?? "ServiceUnavailable", headers };
  return { statusCode: rule.statusCode ?? 500, code: rule.errorCode ?? "InternalServerError", headers };
}

/** Inverts the case of every letter: the same ARM ID, cased as no client asked for it. */
function invertedCase(text: string): string {
  return text.replace(/[A-Za-z]/g, (letter) => (letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()));
}

/** The 401 of a request without a token usable here, with the cluster's bearer challenge. */
function unauthorized(
  verification: ReturnType<TokenRegistry["verify"]>,
  audience: string,
  challengeTenantId: string,
  issued?: IssuedToken,
): { code: string; message: string } {
  if (!verification.valid) {
    return {
      missing: { code: "Unauthorized", message: "The request has no bearer token." },
      unknown: { code: "InvalidAuthenticationToken", message: "The access token is invalid." },
      expired: { code: "InvalidAuthenticationToken", message: "The access token has expired." },
    }[verification.reason];
  }
  if (issued !== undefined && issued.resource.replace(/\/+$/, "") !== audience.replace(/\/+$/, "")) {
    return { code: "InvalidAuthenticationToken", message: `The access token was issued for the wrong audience '${issued.resource}'.` };
  }
  return {
    code: "InvalidAuthenticationToken",
    message: `The access token was issued in tenant '${issued?.principal?.tenantId ?? "none"}'; this resource accepts tokens of tenant '${challengeTenantId}' only.`,
  };
}

/** One entry of `explicit_identities` for a requested identity. */
async function explicitIdentity(
  options: DataPlaneServerOptions,
  cluster: DataPlaneCluster,
  requestedId: string,
  rule: FaultRule | undefined,
): Promise<Record<string, unknown>> {
  const { credentials } = options;
  const isServiceManagedIdentity = requestedId.toLowerCase() === cluster.serviceManagedIdentity.toLowerCase();
  const identity = options.identities.get(requestedId);
  const resourceId = credentials.answerVariation.changeResourceIdCasing ? invertedCase(requestedId) : requestedId;
  const common = {
    tenant_id: cluster.tenantId,
    resource_id: resourceId,
    authentication_endpoint: `${credentials.entraAuthorityHost}/`,
    mtls_authentication_endpoint: `${credentials.entraAuthorityHost}/`,
    client_secret_url: new URL(cluster.identityUrl).toString(),
  };
  if (identity === undefined) {
    // An assigned identity deleted since: the service answers it with nulls and no credential.
    return {
      client_id: null,
      client_secret: null,
      object_id: null,
      ...common,
      not_before: null,
      not_after: null,
      renew_after: null,
      cannot_renew_after: null,
      custom_claims: null,
    };
  }
  const certificate = isServiceManagedIdentity
    ? await credentials.clusterCredential(cluster.clusterResourceId)
    : await credentials.identityCredential(cluster.tenantId, identity);
  const clientSecret =
    rule?.kind === "unusableCertificate" ? randomBytes(96).toString("base64") : await credentials.encodeSecret(certificate, cluster.secretFormat);
  const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
  return {
    client_id: isServiceManagedIdentity ? cluster.clientId : identity.clientId,
    client_secret: clientSecret,
    object_id: isServiceManagedIdentity ? cluster.objectId : identity.principalId,
    ...common,
    not_before: rfc3339(certificate.notBefore),
    not_after: rfc3339(certificate.notAfter),
    renew_after: rfc3339(new Date(certificate.notBefore.getTime() + lifetime / 2)),
    cannot_renew_after: rfc3339(certificate.notAfter),
    custom_claims: { xms_az_rid: cluster.clusterResourceId, xms_az_nwperimid: [] },
  };
}

async function handle(options: DataPlaneServerOptions, endpoint: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { credentials } = options;
  const statistics = options.statistics.dataPlane;
  statistics.requests += 1;
  let body: Buffer = Buffer.alloc(0);
  let presented: IssuedToken | undefined;
  const reply = (statusCode: number, answer: unknown, headers: Record<string, string> = {}): void => {
    increment(statistics.responsesByStatus, String(statusCode));
    sendJson(response, statusCode, answer, headers);
    if (options.recorder?.active === true) {
      const code = (answer as { error?: { code?: unknown } } | undefined)?.error?.code;
      const text = body.toString("utf8");
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: the text is recorded
      }
      options.recorder.record({
        ...recordedExchange("dataPlane", request, statusCode, code),
        ...(text === "" ? {} : { body: parsed }),
        ...(presented === undefined ? {} : { token: recordedToken(presented) }),
      });
    }
  };
  const url = new URL(request.url ?? "/", endpoint);
  const pathMatch = identitiesPathPattern.exec(decodeURIComponent(url.pathname));
  const clusterPath = pathMatch?.[1];
  const cluster = clusterPath === undefined ? undefined : credentials.getCluster(clusterPath);
  if (cluster !== undefined) increment(statistics.requestsByCluster, cluster.clusterResourceId.toLowerCase());
  body = await readBody(request);

  const challengeTenantId = cluster?.challengeTenantId ?? credentials.unregisteredChallengeTenantId(url.searchParams.get("tid"));
  const challenge = { "www-authenticate": `Bearer authorization="${credentials.entraAuthorityHost}/${challengeTenantId}"` };
  const verification = options.tokens.verify(bearerToken(request));
  const issued = verification.valid ? verification.issued : undefined;
  if (issued !== undefined) presented = issued;
  const audience = credentials.settings.dataPlaneAudience;
  const sameAudience = issued !== undefined && issued.resource.replace(/\/+$/, "") === audience.replace(/\/+$/, "");
  // A token of the first-party application's service principal in another tenant than the challenge's is not accepted here.
  const firstParty = credentials.filePrincipal("firstPartyApplication");
  const isFirstParty = issued?.principal !== undefined && issued.principal.clientId.toLowerCase() === firstParty.clientId.toLowerCase();
  const wrongTenant = isFirstParty && issued.principal?.tenantId.toLowerCase() !== challengeTenantId.toLowerCase();
  if (!verification.valid || !sameAudience || wrongTenant) {
    if (!verification.valid && verification.reason === "missing") statistics.challenges += 1;
    const refusal = unauthorized(verification, audience, challengeTenantId, issued);
    reply(401, dataPlaneError(refusal.code, refusal.message), challenge);
    return;
  }
  const principal = issued.principal;
  if (principal === undefined || !isFirstParty) {
    const who = principal === undefined ? "a managed-identity endpoint token" : `client '${principal.clientId}' of tenant '${principal.tenantId}'`;
    reply(403, dataPlaneError("Forbidden", `The caller (${who}) is not authorized to read credentials; only the first-party application is.`));
    return;
  }

  const rule = await applyFaults(
    options.faults,
    {
      target: "dataPlane",
      method: request.method ?? "GET",
      path: url.pathname,
      ...(cluster === undefined ? {} : { clusterResourceId: cluster.clusterResourceId }),
      requestedIdentityIds: requestedIdentityIds(body),
    },
    request,
    statistics.responsesByStatus,
  );
  if (rule === "reset") {
    return;
  }
  if (rule?.kind === "bareStatus") {
    const statusCode = sendBareStatus(response, rule, statistics.responsesByStatus);
    if (options.recorder?.active === true) options.recorder.record(recordedExchange("dataPlane", request, statusCode, undefined));
    return;
  }
  if (rule !== undefined && rule.kind !== "noExplicitIdentities" && rule.kind !== "unusableCertificate" && rule.kind !== "malformedAnswer") {
    const fault = faultStatus(rule);
    reply(fault.statusCode, dataPlaneError(fault.code, rule.message ?? `Sandbox fault '${rule.kind}' (rule ${rule.id}).`), fault.headers);
    return;
  }

  const apiVersion = url.searchParams.get("api-version");
  if (apiVersion === null) {
    reply(400, dataPlaneError("MissingApiVersionParameter", "The api-version query parameter is required."));
    return;
  }
  if (apiVersion !== dataPlaneApiVersion) {
    reply(400, dataPlaneError("InvalidApiVersionParameter", `The api-version '${apiVersion}' is not supported; use '${dataPlaneApiVersion}'.`));
    return;
  }
  if (cluster === undefined) {
    reply(404, dataPlaneError("NotFound", `No resource is registered at '${url.pathname}'.`));
    return;
  }
  const registeredQuery = new URL(cluster.identityUrl).searchParams;
  for (const [name, value] of registeredQuery) {
    if ((url.searchParams.get(name) ?? "").toLowerCase() !== value.toLowerCase()) {
      reply(400, dataPlaneError("BadRequest", `The query parameter '${name}' does not match the resource's identity URL.`));
      return;
    }
  }
  if (request.method !== "POST") {
    reply(405, dataPlaneError("MethodNotAllowed", "The identities endpoint accepts POST only."));
    return;
  }
  let identityIds: string[];
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { identityIds?: unknown };
    if (!Array.isArray(parsed.identityIds) || parsed.identityIds.length === 0 || !parsed.identityIds.every((id) => typeof id === "string")) {
      throw new TypeError("identityIds");
    }
    identityIds = parsed.identityIds;
  } catch {
    reply(400, dataPlaneError("BadRequest", 'The body must be {"identityIds": ["<user-assigned identity ARM ID>", …]}.'));
    return;
  }
  const assigned = new Set(cluster.assignedIdentities.map((id) => id.toLowerCase()));
  const foreign = identityIds.find((id) => !assigned.has(id.toLowerCase()));
  if (foreign !== undefined) {
    reply(404, dataPlaneError("NotFound", `The user-assigned identity '${foreign}' is not assigned to the resource '${cluster.clusterResourceId}'.`));
    return;
  }
  if (rule?.kind === "noExplicitIdentities") {
    reply(200, {});
    return;
  }
  const explicitIdentities = await Promise.all(identityIds.map((id) => explicitIdentity(options, cluster, id, rule)));
  if (credentials.answerVariation.shuffleOrder && explicitIdentities.length > 1) {
    explicitIdentities.push(explicitIdentities.shift() as Record<string, unknown>);
  }
  statistics.credentialsIssued += explicitIdentities.filter((entry) => entry.client_secret !== null).length;
  const answer = { explicit_identities: explicitIdentities };
  reply(200, rule?.kind === "malformedAnswer" ? editDataPlaneAnswer(answer, rule.answerEdits ?? []) : answer);
}

/**
 * Starts the Managed Identities data plane over HTTPS on 127.0.0.1. Each registered cluster has an
 * identity URL; `POST <identity URL>&api-version=2024-01-01` with `{"identityIds": [<IDs>]}` and a
 * bearer token of the first-party application (of the challenge's tenant, data plane audience)
 * answers a credential for each requested identity assigned to the cluster (its control plane
 * operator identities and its SMI). Without a token: 401 with
 * `WWW-Authenticate: Bearer authorization="<Entra>/<challenge tenant>"`: the cluster's own tenant,
 * which its identity URL names (`tid`), unless set otherwise (`SandboxCredentials.setChallengeTenant`).
 *
 * @param options - The TLS certificate and the shared sandbox state.
 * @returns The running server and its endpoint.
 */
export async function startDataPlaneServer(options: DataPlaneServerOptions): Promise<DataPlaneServer> {
  let endpoint = "";
  const server = createServer({ key: options.certificate.privateKeyPem, cert: options.certificate.certificatePem, keepAlive: true }, (request, response) => {
    handle(options, endpoint, request, response).catch(() => {
      increment(options.statistics.dataPlane.responsesByStatus, "500");
      sendJson(response, 500, dataPlaneError("InternalServerError", "The sandbox data plane failed to handle the request."));
    });
  });
  const listening = await listenOnLoopback(server);
  endpoint = `https://${loopbackHost}:${listening.port}`;
  options.credentials.dataPlaneEndpoint = endpoint;
  return { ...listening, endpoint };
}

/** The identity IDs a request body names, for fault matching; none when the body is not the expected shape. */
function requestedIdentityIds(body: Buffer): string[] {
  try {
    const ids = (JSON.parse(body.toString("utf8")) as { identityIds?: unknown }).identityIds;
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}
