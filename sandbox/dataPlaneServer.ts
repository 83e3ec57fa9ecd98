import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { SandboxCertificate } from "./certificate";
import type { FaultInjector, FaultRule } from "./faultInjector";
import { applyFaults, listenOnLoopback, type ListeningServer, loopbackHost, readBody, sendJson } from "./httpUtilities";
import { dataPlaneApiVersion, rfc3339, type SandboxCredentials, serviceTenantId } from "./sandboxCredentials";
import { increment, type SandboxStatistics } from "./sandboxStatistics";
import type { TokenRegistry } from "./tokenRegistry";

/** What the data plane needs from the rest of the sandbox. */
export interface DataPlaneServerOptions {
  certificate: SandboxCertificate;
  credentials: SandboxCredentials;
  tokens: TokenRegistry;
  faults: FaultInjector;
  statistics: SandboxStatistics;
}

/** A running Managed Identities data plane. */
export interface DataPlaneServer extends ListeningServer {
  /** `https://127.0.0.1:<port>`. */
  endpoint: string;
}

// The trailing slash is optional: upstream's Go client (and so the hook) asks at the identity URL's path plus "/".
const identitiesPathPattern =
  /^(\/subscriptions\/[^/]+\/resourcegroups\/[^/]+\/providers\/microsoft\.redhatopenshift\/hcpopenshiftclusters\/[^/]+)\/credentials\/v2\/identities\/?$/i;

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

async function handle(options: DataPlaneServerOptions, endpoint: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { credentials } = options;
  const statistics = options.statistics.dataPlane;
  statistics.requests += 1;
  const reply = (statusCode: number, body: unknown, headers: Record<string, string> = {}): void => {
    increment(statistics.responsesByStatus, String(statusCode));
    sendJson(response, statusCode, body, headers);
  };
  const url = new URL(request.url ?? "/", endpoint);
  const pathMatch = identitiesPathPattern.exec(decodeURIComponent(url.pathname));
  const clusterPath = pathMatch?.[1];
  const cluster = clusterPath === undefined ? undefined : credentials.getCluster(clusterPath);
  if (cluster !== undefined) increment(statistics.requestsByCluster, cluster.clusterResourceId.toLowerCase());
  const body = await readBody(request);

  const challenge = { "www-authenticate": `Bearer authorization="${credentials.entraAuthorityHost}/${serviceTenantId}"` };
  const verification = options.tokens.verify(bearerToken(request));
  if (!verification.valid) {
    if (verification.reason === "missing") statistics.challenges += 1;
    const message = {
      missing: "The request has no bearer token.",
      unknown: "The access token is invalid.",
      expired: "The access token has expired.",
    }[verification.reason];
    reply(401, dataPlaneError(verification.reason === "missing" ? "Unauthorized" : "InvalidAuthenticationToken", message), challenge);
    return;
  }
  const { issued } = verification;
  if (issued.resource.replace(/\/+$/, "") !== credentials.settings.dataPlaneAudience.replace(/\/+$/, "")) {
    reply(401, dataPlaneError("InvalidAuthenticationToken", `The access token was issued for the wrong audience '${issued.resource}'.`), challenge);
    return;
  }
  const firstParty = credentials.filePrincipal("firstPartyApplication");
  const principal = issued.principal;
  if (
    principal === undefined ||
    principal.tenantId.toLowerCase() !== serviceTenantId ||
    principal.clientId.toLowerCase() !== firstParty.clientId.toLowerCase()
  ) {
    const who = principal === undefined ? "a managed-identity endpoint token" : `client '${principal.clientId}' of tenant '${principal.tenantId}'`;
    reply(
      403,
      dataPlaneError("Forbidden", `The caller (${who}) is not authorized to read credentials; only the first-party application of the service tenant is.`),
    );
    return;
  }

  const rule = await applyFaults(
    options.faults,
    {
      target: "dataPlane",
      method: request.method ?? "GET",
      path: url.pathname,
      ...(cluster === undefined ? {} : { clusterResourceId: cluster.clusterResourceId }),
    },
    request,
    statistics.responsesByStatus,
  );
  if (rule === "reset") {
    return;
  }
  if (rule !== undefined && rule.kind !== "noExplicitIdentities" && rule.kind !== "unusableCertificate") {
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
  const foreign = identityIds.find((id) => id.toLowerCase() !== cluster.serviceManagedIdentity.toLowerCase());
  if (foreign !== undefined) {
    reply(404, dataPlaneError("NotFound", `The user-assigned identity '${foreign}' is not assigned to the resource '${cluster.clusterResourceId}'.`));
    return;
  }
  if (rule?.kind === "noExplicitIdentities") {
    reply(200, {});
    return;
  }
  const certificate = await credentials.clusterCredential(cluster.clusterResourceId);
  const clientSecret =
    rule?.kind === "unusableCertificate" ? randomBytes(96).toString("base64") : await credentials.encodeSecret(certificate, cluster.secretFormat);
  const lifetime = certificate.notAfter.getTime() - certificate.notBefore.getTime();
  const secretUrl = new URL(cluster.identityUrl);
  const explicitIdentities = identityIds.map((id) => ({
    client_id: cluster.clientId,
    client_secret: clientSecret,
    tenant_id: cluster.tenantId,
    object_id: cluster.objectId,
    resource_id: id,
    authentication_endpoint: `${credentials.entraAuthorityHost}/`,
    mtls_authentication_endpoint: `${credentials.entraAuthorityHost}/`,
    client_secret_url: secretUrl.toString(),
    not_before: rfc3339(certificate.notBefore),
    not_after: rfc3339(certificate.notAfter),
    renew_after: rfc3339(new Date(certificate.notBefore.getTime() + lifetime / 2)),
    cannot_renew_after: rfc3339(certificate.notAfter),
    custom_claims: { xms_az_rid: cluster.clusterResourceId, xms_az_nwperimid: [] },
  }));
  statistics.credentialsIssued += explicitIdentities.length;
  reply(200, { explicit_identities: explicitIdentities });
}

/**
 * Starts the Managed Identities data plane over HTTPS on 127.0.0.1. Each registered cluster has an
 * identity URL; `POST <identity URL>&api-version=2024-01-01` with `{"identityIds": [<SMI>]}` and a
 * bearer token of the first-party application (service tenant, data plane audience) answers the
 * SMI's credential. Without a token: 401 with `WWW-Authenticate: Bearer authorization="<Entra>/<service tenant>"`.
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
