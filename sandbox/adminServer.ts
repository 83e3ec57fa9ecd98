import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type CosmosDocumentStore, DocumentNotFoundError } from "./cosmosDocumentStore";
import { type FaultInjector, FaultRuleError, type FaultRuleInput, type FaultTarget } from "./faultInjector";
import { listenOnLoopback, type ListeningServer, loopbackHost, readBody, sendJson } from "./httpUtilities";
import { type IdentityStore, InvalidIdentityIdError } from "./identityStore";
import { JsonPointerError } from "./jsonPointer";
import type { RequestRecorder } from "./requestRecorder";
import type { FilePrincipalName, SandboxCredentials, SecretFormat } from "./sandboxCredentials";
import type { SandboxStatistics } from "./sandboxStatistics";
import { advanceFleetClock, seedUpstreamStatus } from "./upstreamSeed";
import { seedDemoFleet, seedFleet, seedTenantFleet } from "./seed";
import type { TokenRegistry } from "./tokenRegistry";

/** What the admin API operates on. */
export interface AdminServerOptions {
  adminToken: string;
  identities: IdentityStore;
  documents: CosmosDocumentStore;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  tokens: TokenRegistry;
  credentials: SandboxCredentials;
  recorder: RequestRecorder;
}

/** A running admin API. */
export interface AdminServer extends ListeningServer {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
}

/** An admin request error with its HTTP status. */
class AdminError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;
type Route = (request: AdminRequest) => unknown;

const filePrincipalNames: readonly FilePrincipalName[] = ["firstPartyApplication", "fixedIdentity"];

interface AdminRequest {
  parameters: string[];
  query: URLSearchParams;
  body: Json;
}

function requiredString(source: Json | URLSearchParams, name: string): string {
  const value = source instanceof URLSearchParams ? source.get(name) : source[name];
  if (typeof value !== "string" || value === "") {
    throw new AdminError(400, "InvalidRequest", `'${name}' is required and must be a non-empty string`);
  }
  return value;
}

function optionalString(source: Json, name: string): string | undefined {
  const value = source[name];
  if (value !== undefined && typeof value !== "string") {
    throw new AdminError(400, "InvalidRequest", `'${name}' must be a string`);
  }
  return value;
}

function optionalNumber(source: Json, name: string): number | undefined {
  const value = source[name];
  if (value !== undefined && typeof value !== "number") {
    throw new AdminError(400, "InvalidRequest", `'${name}' must be a number`);
  }
  return value;
}

function optionalBoolean(source: Json, name: string): boolean | undefined {
  const value = source[name];
  if (value !== undefined && typeof value !== "boolean") {
    throw new AdminError(400, "InvalidRequest", `'${name}' must be true or false`);
  }
  return value;
}

function optionalStringList(source: Json, name: string): string[] | undefined {
  const value = source[name];
  if (value !== undefined && (!Array.isArray(value) || !value.every((entry) => typeof entry === "string" && entry !== ""))) {
    throw new AdminError(400, "InvalidRequest", `'${name}' must be a list of non-empty strings`);
  }
  return value as string[] | undefined;
}

function orNotFound<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new AdminError(404, "NotFound", `${what} does not exist`);
  }
  return value;
}

function latencyBody(faults: FaultInjector): Record<string, number> {
  const latency = faults.getLatency();
  return { armMs: latency.arm, cosmosMs: latency.cosmos, tokenMs: latency.token, entraMs: latency.entra, dataPlaneMs: latency.dataPlane };
}

function credentialRoutes(credentials: SandboxCredentials): Array<[string, RegExp, Route]> {
  const cluster = (body: Json): string => {
    const clusterResourceId = requiredString(body, "clusterResourceId");
    orNotFound(credentials.getCluster(clusterResourceId), `data plane cluster ${clusterResourceId}`);
    return clusterResourceId;
  };
  return [
    // Principals without their certificates' PEM (public, but long): identifiers and validity only.
    [
      "GET",
      /^\/credentials\/principals$/,
      () =>
        credentials.directory.list().map((principal) => ({
          ...principal,
          certificates: principal.certificates.map(({ certificatePem: _pem, ...identifiers }) => identifiers),
        })),
    ],
    [
      "POST",
      /^\/credentials\/rotate$/,
      ({ body }) => {
        const principal = requiredString(body, "principal") as FilePrincipalName;
        if (!filePrincipalNames.includes(principal)) throw new AdminError(400, "InvalidRequest", `'principal' must be one of ${filePrincipalNames.join(", ")}`);
        const revokePreviousAfterMs = optionalNumber(body, "revokePreviousAfterMs");
        return credentials.rotateFilePrincipal(principal, revokePreviousAfterMs === undefined ? {} : { revokePreviousAfterMs });
      },
    ],
    ["POST", /^\/credentials\/revoke$/, ({ body }) => ({ revoked: credentials.revokeCertificate(requiredString(body, "serialNumber")) })],
    ["GET", /^\/dataplane\/clusters$/, () => credentials.listClusters()],
    [
      "POST",
      /^\/dataplane\/clusters\/rotate$/,
      ({ body }) => {
        const revokePreviousAfterMs = optionalNumber(body, "revokePreviousAfterMs");
        return credentials.rotateClusterCredential(cluster(body), revokePreviousAfterMs === undefined ? {} : { revokePreviousAfterMs });
      },
    ],
    [
      "PUT",
      /^\/dataplane\/clusters\/secretFormat$/,
      ({ body }) => credentials.setSecretFormat(cluster(body), requiredString(body, "secretFormat") as SecretFormat),
    ],
    [
      "PUT",
      /^\/dataplane\/clusters\/identities$/,
      ({ body }) => credentials.setAssignedIdentities(cluster(body), optionalStringList(body, "identityIds") ?? []),
    ],
    [
      "PUT",
      /^\/dataplane\/challengeTenant$/,
      ({ body }) => {
        const clusterResourceIds = optionalStringList(body, "clusterResourceIds");
        clusterResourceIds?.forEach((id) => orNotFound(credentials.getCluster(id), `data plane cluster ${id}`));
        return credentials.setChallengeTenant(requiredString(body, "tenantId"), clusterResourceIds);
      },
    ],
    ["GET", /^\/dataplane\/answers$/, () => credentials.answerVariation],
    [
      "PUT",
      /^\/dataplane\/answers$/,
      ({ body }) => {
        const shuffleOrder = optionalBoolean(body, "shuffleOrder");
        const changeResourceIdCasing = optionalBoolean(body, "changeResourceIdCasing");
        credentials.answerVariation = {
          shuffleOrder: shuffleOrder ?? credentials.answerVariation.shuffleOrder,
          changeResourceIdCasing: changeResourceIdCasing ?? credentials.answerVariation.changeResourceIdCasing,
        };
        return credentials.answerVariation;
      },
    ],
    ["GET", /^\/subscriptions$/, () => credentials.listSubscriptions()],
    [
      "PUT",
      /^\/subscriptions\/([^/]+)$/,
      ({ parameters, body }) => {
        const subscriptionId = parameters[0] ?? "";
        const tenantId = requiredString(body, "tenantId");
        credentials.setSubscriptionTenant(subscriptionId, tenantId);
        return { subscriptionId: subscriptionId.toLowerCase(), tenantId: tenantId.toLowerCase() };
      },
    ],
    ["GET", /^\/roleAssignments$/, ({ query }) => credentials.directory.listRoleAssignments(query.get("principalObjectId") ?? undefined)],
    [
      "POST",
      /^\/roleAssignments$/,
      ({ body }) => {
        const assignment = { principalObjectId: requiredString(body, "principalObjectId"), scope: requiredString(body, "scope") };
        credentials.directory.assignRole(assignment);
        return assignment;
      },
    ],
    [
      "DELETE",
      /^\/roleAssignments$/,
      ({ query }) => ({ removed: credentials.directory.removeRoleAssignments(requiredString(query, "principalObjectId"), query.get("scope") ?? undefined) }),
    ],
  ];
}

function routeTable(options: AdminServerOptions): Array<[string, RegExp, Route]> {
  const { identities, documents, faults, statistics, tokens, credentials, recorder } = options;
  const document = (request: AdminRequest): [string, string] => [request.parameters[0] ?? "", request.parameters[1] ?? ""];
  return [
    ["GET", /^\/health$/, () => ({ status: "ok" })],
    [
      "GET",
      /^\/identities$/,
      (request) => {
        const resourceId = request.query.get("resourceId");
        if (resourceId === null) {
          return identities.list();
        }
        return orNotFound(identities.get(resourceId), `identity ${resourceId}`);
      },
    ],
    [
      "POST",
      /^\/identities$/,
      ({ body }) => {
        const clientId = optionalString(body, "clientId");
        const principalId = optionalString(body, "principalId");
        // The identity's tenant (its ARM `properties.tenantId`); the sandbox tenant when omitted.
        const tenantId = optionalString(body, "tenantId");
        return identities.create(requiredString(body, "resourceId"), {
          ...(clientId === undefined ? {} : { clientId }),
          ...(principalId === undefined ? {} : { principalId }),
          ...(tenantId === undefined ? {} : { tenantId }),
        });
      },
    ],
    ["DELETE", /^\/identities$/, ({ query }) => ({ deleted: identities.delete(requiredString(query, "resourceId")) })],
    [
      "POST",
      /^\/identities\/rotate$/,
      ({ body }) => {
        const resourceId = requiredString(body, "resourceId");
        return orNotFound(identities.rotate(resourceId), `identity ${resourceId}`);
      },
    ],
    ["GET", /^\/documents$/, ({ query }) => documents.list(query.get("partitionKey") ?? undefined)],
    [
      "GET",
      /^\/documents\/([^/]+)\/([^/]+)$/,
      (request) => {
        const [partitionKey, id] = document(request);
        return orNotFound(documents.read(partitionKey, id), `document ${partitionKey}/${id}`);
      },
    ],
    [
      "PUT",
      /^\/documents\/([^/]+)\/([^/]+)$/,
      (request) => {
        const [partitionKey, id] = document(request);
        return documents.put({ ...request.body, id, partitionKey });
      },
    ],
    [
      "PATCH",
      /^\/documents\/([^/]+)\/([^/]+)$/,
      (request) => {
        const [partitionKey, id] = document(request);
        return documents.patch(partitionKey, id, requiredString(request.body, "path"), request.body.value);
      },
    ],
    [
      "DELETE",
      /^\/documents\/([^/]+)\/([^/]+)$/,
      (request) => {
        const [partitionKey, id] = document(request);
        return { deleted: documents.delete(partitionKey, id) };
      },
    ],
    ["GET", /^\/faults$/, () => faults.list()],
    ["POST", /^\/faults$/, ({ body }) => faults.add(body as unknown as FaultRuleInput)],
    ["DELETE", /^\/faults$/, ({ query }) => ({ removed: faults.clear((query.get("target") ?? undefined) as FaultTarget | undefined) })],
    ["GET", /^\/latency$/, () => latencyBody(faults)],
    [
      "PUT",
      /^\/latency$/,
      ({ body }) => {
        const arm = optionalNumber(body, "armMs");
        const cosmos = optionalNumber(body, "cosmosMs");
        const token = optionalNumber(body, "tokenMs");
        const entra = optionalNumber(body, "entraMs");
        const dataPlane = optionalNumber(body, "dataPlaneMs");
        faults.setLatency({
          ...(arm === undefined ? {} : { arm }),
          ...(cosmos === undefined ? {} : { cosmos }),
          ...(token === undefined ? {} : { token }),
          ...(entra === undefined ? {} : { entra }),
          ...(dataPlane === undefined ? {} : { dataPlane }),
        });
        return latencyBody(faults);
      },
    ],
    ["GET", /^\/stats$/, () => statistics.snapshot()],
    [
      "POST",
      /^\/stats\/reset$/,
      () => {
        statistics.reset();
        return statistics.snapshot();
      },
    ],
    [
      "POST",
      /^\/recording\/start$/,
      () => {
        recorder.start();
        return recorder.snapshot();
      },
    ],
    [
      "POST",
      /^\/recording\/stop$/,
      () => {
        recorder.stop();
        return recorder.snapshot();
      },
    ],
    ["GET", /^\/recording$/, () => recorder.snapshot()],
    ["POST", /^\/tokens\/expire$/, () => ({ expired: tokens.expireAll() })],
    [
      "PUT",
      /^\/tokens\/lifetime$/,
      ({ body }) => {
        tokens.setTokenLifetime(optionalNumber(body, "lifetimeInMs") ?? Number.NaN);
        return { lifetimeInMs: tokens.tokenLifetimeInMs };
      },
    ],
    ["POST", /^\/seed\/demo$/, () => seedDemoFleet({ identities, documents, credentials })],
    [
      "POST",
      /^\/seed\/upstream$/,
      () => {
        const fleet = seedDemoFleet({ identities, documents, credentials });
        seedUpstreamStatus({ identities, documents }, fleet);
        return fleet;
      },
    ],
    [
      "POST",
      /^\/clock\/advance$/,
      ({ body }) => {
        const hours = optionalNumber(body, "hours") ?? 0;
        const minutes = optionalNumber(body, "minutes") ?? 0;
        return { moved: advanceFleetClock(documents, (hours * 60 + minutes) * 60_000) };
      },
    ],
    [
      "POST",
      /^\/seed\/tenants$/,
      ({ body }) =>
        seedTenantFleet(
          { identities, documents, credentials },
          { clusters: optionalNumber(body, "clusters") ?? 1, identitiesPerCluster: optionalNumber(body, "identitiesPerCluster") ?? 1 },
        ),
    ],
    [
      "POST",
      /^\/seed\/fleet$/,
      ({ body }) => {
        const subscriptions = optionalNumber(body, "subscriptions");
        return seedFleet(
          { identities, documents, credentials },
          {
            clusters: optionalNumber(body, "clusters") ?? 1,
            identitiesPerCluster: optionalNumber(body, "identitiesPerCluster") ?? 1,
            ...(subscriptions === undefined ? {} : { subscriptions }),
          },
        );
      },
    ],
    ...credentialRoutes(credentials),
  ];
}

function isAuthorized(request: IncomingMessage, adminToken: string): boolean {
  const presented = Buffer.from(request.headers.authorization ?? "");
  const expected = Buffer.from(`Bearer ${adminToken}`);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

async function handle(options: AdminServerOptions, routes: Array<[string, RegExp, Route]>, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (!isAuthorized(request, options.adminToken)) {
    sendJson(response, 401, { error: { code: "Unauthorized", message: "Send 'Authorization: Bearer <adminToken>'." } });
    return;
  }
  const url = new URL(request.url ?? "/", `http://${loopbackHost}`);
  const pathname = url.pathname.replace(/\/+$/, "") || "/";
  const text = (await readBody(request)).toString("utf8");
  let body: Json;
  try {
    const parsed: unknown = text === "" ? {} : JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new SyntaxError("the body must be a JSON object");
    }
    body = parsed as Json;
  } catch (error) {
    sendJson(response, 400, { error: { code: "InvalidJson", message: String(error) } });
    return;
  }
  let pathMatched = false;
  for (const [method, pattern, route] of routes) {
    const match = pattern.exec(pathname);
    if (match === null) {
      continue;
    }
    pathMatched = true;
    if (method !== request.method) {
      continue;
    }
    const result: unknown = await route({ parameters: match.slice(1).map(decodeURIComponent), query: url.searchParams, body });
    sendJson(response, request.method === "POST" && pathname !== "/stats/reset" ? 201 : 200, result);
    return;
  }
  sendJson(response, pathMatched ? 405 : 404, {
    error: { code: pathMatched ? "MethodNotAllowed" : "NotFound", message: `no route ${request.method} ${pathname}` },
  });
}

function errorStatus(error: unknown): AdminError {
  if (error instanceof AdminError) {
    return error;
  }
  if (error instanceof DocumentNotFoundError) {
    return new AdminError(404, "NotFound", error.message);
  }
  if (
    error instanceof FaultRuleError ||
    error instanceof InvalidIdentityIdError ||
    error instanceof JsonPointerError ||
    error instanceof TypeError ||
    error instanceof RangeError
  ) {
    return new AdminError(400, "InvalidRequest", error.message);
  }
  return new AdminError(500, "InternalError", error instanceof Error ? error.message : String(error));
}

/**
 * Starts the sandbox admin API (plain HTTP, 127.0.0.1 only). Every call needs
 * `Authorization: Bearer <adminToken>`. Routes are listed in docs/sandbox.md.
 *
 * @param options - The admin token and the sandbox state the API operates on.
 * @returns The running server and its endpoint.
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const routes = routeTable(options);
  const server = createServer({ keepAlive: true }, (request, response) => {
    handle(options, routes, request, response).catch((error: unknown) => {
      const adminError = errorStatus(error);
      sendJson(response, adminError.statusCode, { error: { code: adminError.code, message: adminError.message } });
    });
  });
  const listening = await listenOnLoopback(server);
  return { ...listening, endpoint: `http://${loopbackHost}:${listening.port}` };
}
