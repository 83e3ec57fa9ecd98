import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import { Readable } from "node:stream";
import Account from "@vercel/cosmosdb-server/lib/account";
import routes from "@vercel/cosmosdb-server/lib/routes";
import type { SandboxCertificate } from "./certificate";
import { authorizeCosmosRequest } from "./cosmosAuthorization";
import { CosmosDocumentStore } from "./cosmosDocumentStore";
import type { FaultInjector, FaultRule } from "./faultInjector";
import { delay, listenOnLoopback, type ListeningServer, loopbackHost, readBody, resetConnection, sendJson, trackInFlight } from "./httpUtilities";
import { increment, type SandboxStatistics } from "./sandboxStatistics";
import type { TokenRegistry } from "./tokenRegistry";

/** What the Cosmos server needs from the rest of the sandbox. */
export interface CosmosServerOptions {
  certificate: SandboxCertificate;
  /** The account master key (base64) clients must sign with. */
  masterKey: string;
  tokens: TokenRegistry;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  databaseName: string;
  containerName: string;
}

/** A running Cosmos server. */
export interface CosmosServer extends ListeningServer {
  /** `https://127.0.0.1:<port>`, the CosmosClient `endpoint`. */
  endpoint: string;
  /** Direct document access that bypasses HTTP, faults and counters. */
  documents: CosmosDocumentStore;
}

type RouteHandler = (account: Account, request: IncomingMessage, response: ServerResponse, parameters: unknown) => Promise<Record<string, unknown> | undefined>;

/** What a request does to documents, from its method, path and headers. */
interface DocumentRequest {
  operation: "read" | "write" | "other";
  documentId?: string;
  partitionKey?: string;
  /** The ids of a batch made only of Read operations. */
  batchReadIds?: string[];
}

const documentsPathPattern = /^\/*dbs\/[^/]+\/colls\/[^/]+\/docs(?:\/([^/]+))?\/*$/;

function isTrueHeader(request: IncomingMessage, name: string): boolean {
  return String(request.headers[name] ?? "").toLowerCase() === "true";
}

/** The single string value of the partition key header, when there is one. */
function partitionKeyOf(request: IncomingMessage): string | undefined {
  const header = request.headers["x-ms-documentdb-partitionkey"];
  try {
    const parsed: unknown = typeof header === "string" ? JSON.parse(header) : undefined;
    const value: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function isQuery(request: IncomingMessage): boolean {
  return isTrueHeader(request, "x-ms-documentdb-isquery") || request.headers["content-type"] === "application/query+json";
}

/** The operations of a batch request (`x-ms-cosmos-is-batch-request`), parsed once; undefined for any other request. */
function batchOperationsOf(request: IncomingMessage, body: Buffer): unknown[] | undefined {
  if (request.method !== "POST" || !isTrueHeader(request, "x-ms-cosmos-is-batch-request")) {
    return undefined;
  }
  try {
    const operations: unknown = JSON.parse(body.toString("utf8"));
    return Array.isArray(operations) ? operations : undefined;
  } catch {
    return undefined;
  }
}

function classify(request: IncomingMessage, pathname: string, body: Buffer, batch: unknown[] | undefined): DocumentRequest {
  const match = documentsPathPattern.exec(pathname);
  if (match === null) {
    return { operation: "other" };
  }
  const partitionKey = partitionKeyOf(request);
  const documentId = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
  const base = { ...(documentId === undefined ? {} : { documentId }), ...(partitionKey === undefined ? {} : { partitionKey }) };
  if (request.method === "GET") {
    return { operation: "read", ...base };
  }
  if (request.method === "POST" && isQuery(request)) {
    return { operation: "other", ...base };
  }
  if (batch !== undefined) {
    const batchReadIds = readOperationIds(batch);
    return batchReadIds === undefined ? { operation: "write", ...base } : { operation: "read", ...base, batchReadIds };
  }
  if (request.method === "POST" && documentId === undefined) {
    try {
      const parsed: unknown = JSON.parse(body.toString("utf8"));
      if (typeof parsed === "object" && parsed !== null && "id" in parsed && typeof parsed.id === "string") {
        const created = parsed as { id: string; partitionKey?: unknown };
        return { operation: "write", documentId: created.id, ...(typeof created.partitionKey === "string" ? { partitionKey: created.partitionKey } : {}) };
      }
    } catch {
      // Batch bodies and malformed JSON are counted without a document id.
    }
  }
  return { operation: "write", ...base };
}

/** The ids of a batch whose every operation is a Read; undefined for any other batch. */
function readOperationIds(operations: readonly unknown[]): string[] | undefined {
  const ids = operations.map((operation: unknown) => {
    const { operationType, id } = (operation ?? {}) as { operationType?: unknown; id?: unknown };
    return operationType === "Read" && typeof id === "string" ? id : undefined;
  });
  return ids.length > 0 && ids.every((id): id is string => id !== undefined) ? ids : undefined;
}

function count(statistics: SandboxStatistics, request: IncomingMessage, pathname: string, documentRequest: DocumentRequest): void {
  const cosmos = statistics.cosmos;
  if (documentRequest.batchReadIds !== undefined) {
    cosmos.documentReadBatches += 1;
    cosmos.documentReads += documentRequest.batchReadIds.length;
    for (const id of documentRequest.batchReadIds) {
      increment(cosmos.documentReadsByDocument, id);
    }
  } else if (documentRequest.operation === "read") {
    cosmos.documentReads += 1;
    if (documentRequest.documentId !== undefined) {
      increment(cosmos.documentReadsByDocument, documentRequest.documentId);
    }
  } else if (documentRequest.operation === "write") {
    const method = request.method ?? "UNKNOWN";
    increment(cosmos.documentWritesByMethod, method);
    increment(cosmos.documentWritesByDocument, documentRequest.documentId ?? "(unknown)");
    if (request.headers["if-match"] === undefined) {
      cosmos.writesWithoutIfMatch.push({ method, path: pathname });
    }
  } else if (documentsPathPattern.test(pathname) && request.method === "POST") {
    cosmos.documentQueries += 1;
  }
}

function faultBody(rule: FaultRule): { statusCode: number; body: Record<string, string>; headers: Record<string, string> } {
  const retryAfterInMs = rule.retryAfterInMs ?? (rule.kind === "throttle" ? 10 : undefined);
  const headers: Record<string, string> = retryAfterInMs === undefined ? {} : { "x-ms-retry-after-ms": String(retryAfterInMs) };
  if (rule.kind === "throttle") {
    return {
      statusCode: 429,
      headers: { ...headers, "x-ms-substatus": "3200" },
      body: {
        code: "TooManyRequests",
        message: rule.message ?? "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later.",
      },
    };
  }
  if (rule.kind === "unavailable") {
    return { statusCode: 503, headers, body: { code: "ServiceUnavailable", message: rule.message ?? "Service is currently unavailable." } };
  }
  return {
    statusCode: rule.statusCode ?? 500,
    headers,
    body: { code: rule.errorCode ?? "InternalServerError", message: rule.message ?? `Sandbox fault (rule ${rule.id}).` },
  };
}

const collectionPathPattern = /^\/*dbs\/([^/]+)\/colls\/([^/]+)\/docs\/*$/;

/**
 * Runs a document query that names a partition key over that logical partition only, as Cosmos
 * does; cosmosdb-server ignores the header and runs every query over the whole container. Same
 * query engine (its compiled-query cache), same paging headers and response body as its route.
 *
 * @returns The response body, or undefined when the request is not such a query.
 */
function queryOnePartition(
  account: Account,
  request: IncomingMessage,
  pathname: string,
  body: Buffer,
  response: ServerResponse,
): Record<string, unknown> | undefined {
  const path = collectionPathPattern.exec(pathname);
  const partitionKey = partitionKeyOf(request);
  if (path === null || partitionKey === undefined || request.method !== "POST" || !isQuery(request)) {
    return undefined;
  }
  const collection = account.database(decodeURIComponent(path[1] ?? "")).collection(decodeURIComponent(path[2] ?? ""));
  const container = collection.read() as { partitionKey?: { paths?: string[] } } | null | undefined;
  if (!container) {
    response.statusCode = 404;
    return { code: "NotFound", message: "the container does not exist" };
  }
  const keyPath = (container.partitionKey?.paths?.[0] ?? "/id").slice(1).split("/");
  let parsed: { query?: unknown; parameters?: Array<{ name: string; value: unknown }> };
  try {
    parsed = JSON.parse(body.toString("utf8")) as typeof parsed;
  } catch {
    response.statusCode = 400;
    return { code: "BadRequest", message: "the query body is not JSON" };
  }
  if (typeof parsed.query !== "string") {
    response.statusCode = 400;
    return { code: "BadRequest", message: "missing query" };
  }
  const items = collection.documents;
  const inPartition = [...items._data.values()]
    .map((item) => item.read() as Record<string, unknown>)
    .filter((document) => keyPath.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], document) === partitionKey);
  const maxItemCount = typeof request.headers["x-ms-max-item-count"] === "string" ? Number.parseInt(request.headers["x-ms-max-item-count"], 10) : undefined;
  let continuation: { token: string } | undefined;
  try {
    continuation =
      typeof request.headers["x-ms-continuation"] === "string" ? (JSON.parse(request.headers["x-ms-continuation"]) as { token: string }) : undefined;
  } catch {
    continuation = undefined;
  }
  let result: { result: unknown[]; continuation?: unknown };
  try {
    result = items._getQuery(parsed.query).exec(inPartition, { parameters: parsed.parameters, maxItemCount, continuation }) as typeof result;
  } catch (error) {
    response.statusCode = 400;
    return { code: "BadRequest", message: error instanceof Error ? error.message : String(error) };
  }
  if (result.continuation) {
    response.setHeader("x-ms-continuation", JSON.stringify(result.continuation));
  }
  response.setHeader("x-ms-item-count", String(result.result.length));
  return { Documents: result.result, _count: result.result.length };
}

/**
 * A transactional batch runs in the partition its request header names, and its operations carry
 * no partition key of their own (the SDK sends it once, in the header); cosmosdb-server wants one
 * per operation, so each operation without one gets the header's.
 */
function withBatchPartitionKey(request: IncomingMessage, body: Buffer, batch: readonly unknown[] | undefined): Buffer {
  const header = request.headers["x-ms-documentdb-partitionkey"];
  if (batch === undefined || typeof header !== "string") {
    return body;
  }
  const completed = batch.map((operation: unknown) =>
    typeof operation === "object" && operation !== null && !("partitionKey" in operation) ? { ...operation, partitionKey: header } : operation,
  );
  return Buffer.from(JSON.stringify(completed), "utf8");
}

/** Cosmos's substatus for a request below a database or container that does not exist. */
const ownerResourceNotFoundSubstatus = 1003;

/**
 * Which owner of the addressed resource does not exist: the database for anything below
 * `/dbs/<database>/` (its containers), the container for anything below
 * `/dbs/<database>/colls/<container>/` (documents, batches, queries, partition key ranges).
 * Undefined when both exist, or when the request addresses a database or container itself (a
 * missing one of those is the resource, answered by its route with a plain 404).
 */
function missingOwnerOf(account: Account, pathname: string): "database" | "container" | undefined {
  const segments = pathname.split("/").filter((segment) => segment.length > 0);
  if (segments[0] !== "dbs" || segments.length < 3) {
    return undefined;
  }
  const database = account.database(decodeURIComponent(segments[1]));
  if (!database.read()) {
    return "database";
  }
  if (segments[2] !== "colls" || segments.length < 5) {
    return undefined;
  }
  return database.collection(decodeURIComponent(segments[3])).read() ? undefined : "container";
}

/**
 * Answers a request below a missing database or container as Cosmos DB does: 404 with substatus
 * 1003 and its "Owner resource does not exist" body, where cosmosdb-server answers a plain 404,
 * the answer for a missing document. The two must differ: a client that reads this 404 as
 * "document absent" turns a database typo into data loss.
 */
function answerMissingOwner(request: IncomingMessage, response: ServerResponse): void {
  const activityId = randomUUID();
  const message =
    `Message: {"Errors":["Owner resource does not exist"]}\r\nActivityId: ${activityId}, ` +
    `Request URI: /apps/sandbox/services/sandbox/partitions/sandbox/replicas/1p/, RequestStats: \r\n` +
    `RequestStartTime: ${new Date().toISOString()}, Number of regions attempted:1\r\n, SDK: aro-hcp-identity-status sandbox`;
  sendJson(
    response,
    404,
    { code: "NotFound", message },
    {
      "x-ms-substatus": String(ownerResourceNotFoundSubstatus),
      "x-ms-activity-id": activityId,
      "x-ms-request-charge": "1",
      "content-location": `https://${request.headers.host ?? loopbackHost}${request.url ?? "/"}`,
    },
  );
}

/** Runs the cosmosdb-server route for a request whose body was already read, as its own handler would. */
async function forward(
  account: Account,
  request: IncomingMessage,
  response: ServerResponse,
  received: Buffer,
  pathname: string,
  batch: readonly unknown[] | undefined,
): Promise<void> {
  if (missingOwnerOf(account, pathname) !== undefined) {
    answerMissingOwner(request, response);
    return;
  }
  const scoped = queryOnePartition(account, request, pathname, received, response);
  if (scoped !== undefined) {
    respond(request, response, scoped);
    return;
  }
  const body = withBatchPartitionKey(request, received, batch);
  const replay = Object.assign(Readable.from(body.length > 0 ? [body] : []), {
    headers: request.headers,
    method: request.method,
    url: request.url,
  }) as unknown as IncomingMessage;
  const route = routes(replay) as [unknown, RouteHandler] | undefined;
  let result: Record<string, unknown> | undefined;
  if (route === undefined) {
    response.statusCode = 400;
    result = { message: "no route" };
  } else {
    try {
      result = await route[1](account, replay, response, route[0]);
    } catch (error) {
      response.statusCode = 500;
      result = { message: error instanceof Error ? error.message : String(error) };
    }
    if (response.statusCode > 399 && result !== undefined && result.message === undefined) {
      result.message = "";
    }
  }
  respond(request, response, result);
}

/** Sends a route's result with the headers every Cosmos response carries. */
function respond(request: IncomingMessage, response: ServerResponse, result: Record<string, unknown> | undefined): void {
  if (typeof result?._etag === "string") {
    response.setHeader("etag", result._etag);
  }
  response.setHeader("content-type", "application/json");
  response.setHeader("content-location", `https://${request.headers.host ?? loopbackHost}${request.url ?? "/"}`);
  response.setHeader("x-ms-activity-id", randomUUID());
  response.setHeader("x-ms-request-charge", "1");
  if (request.headers["a-im"] !== undefined && response.statusCode === 200) {
    if (request.headers["if-none-match"] !== undefined) {
      response.statusCode = 304;
    }
    response.setHeader("etag", "1");
  }
  response.end(JSON.stringify(result));
}

async function handle(
  options: CosmosServerOptions,
  account: Account,
  documents: CosmosDocumentStore,
  endpoint: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const cosmos = options.statistics.cosmos;
  cosmos.requests += 1;
  const pathname = new URL(request.url ?? "/", endpoint).pathname.replace(/^\/\/+/, "/");
  const body = await readBody(request);
  const authorization = authorizeCosmosRequest(
    { masterKey: options.masterKey, tokens: options.tokens, audiences: [endpoint, "https://cosmos.azure.com"] },
    request.method ?? "GET",
    pathname,
    request.headers,
  );
  if (!authorization.authorized) {
    cosmos.unauthorized += 1;
    await delay(options.faults.getLatency().cosmos);
    sendJson(response, 401, { code: "Unauthorized", message: authorization.message }, { "x-ms-activity-id": randomUUID() });
    return;
  }
  increment(cosmos.authorizedByKind, authorization.kind);
  const batch = batchOperationsOf(request, body);
  const documentRequest = classify(request, pathname, body, batch);
  count(options.statistics, request, pathname, documentRequest);
  const fired = options.faults.take({
    target: "cosmos",
    method: request.method ?? "GET",
    path: pathname,
    operation: documentRequest.operation,
    ...(documentRequest.documentId === undefined ? {} : { documentId: documentRequest.documentId }),
    ...(documentRequest.batchReadIds === undefined ? {} : { documentIds: documentRequest.batchReadIds }),
  });
  await delay(fired.delayInMs);
  const rule = fired.rule;
  if (rule?.kind === "connectionReset") {
    resetConnection(request);
    return;
  }
  if (rule?.kind === "resetAfterWrite") {
    // The write goes to the store as any other; its answer never leaves.
    response.end = (() => {
      resetConnection(request);
      return response;
    }) as ServerResponse["end"];
  } else if (rule?.kind === "race" || rule?.kind === "deleteBeforeWrite") {
    const { documentId, partitionKey } = documentRequest;
    if (documentId !== undefined && partitionKey !== undefined) {
      if (rule.kind === "race") {
        documents.applyForeignEdit(partitionKey, documentId, rule.foreignEdit);
      } else {
        documents.delete(partitionKey, documentId);
      }
    }
  } else if (rule !== undefined) {
    const fault = faultBody(rule);
    sendJson(response, fault.statusCode, fault.body, { ...fault.headers, "x-ms-activity-id": randomUUID() });
    return;
  }
  await forward(account, request, response, body, pathname, batch);
}

/**
 * Starts @vercel/cosmosdb-server's request routes behind our own HTTPS server on 127.0.0.1 (its
 * bundled certificate expired in 2021). Our handler runs first: it checks the Authorization header
 * (master key or sandbox Entra ID token), counts document reads and writes, and applies faults;
 * then it hands the request to the cosmosdb-server route. The account is created here so that the
 * sandbox can reach the stored documents directly ({@link CosmosDocumentStore}).
 *
 * @param options - The certificate, key, and shared sandbox state.
 * @returns The running server, its endpoint and direct document access.
 */
export async function startCosmosServer(options: CosmosServerOptions): Promise<CosmosServer> {
  let endpoint = "";
  // Filled once the server listens; a request before that gets 503.
  const started: { account?: Account; documents?: CosmosDocumentStore } = {};
  const server = createServer({ key: options.certificate.privateKeyPem, cert: options.certificate.certificatePem, keepAlive: true }, (request, response) => {
    response.statusCode = 200;
    trackInFlight(
      response,
      () => options.statistics.cosmos,
      () => {
        increment(options.statistics.cosmos.responsesByStatus, response.headersSent ? String(response.statusCode) : "0");
      },
    );
    const { account, documents } = started;
    if (account === undefined || documents === undefined) {
      sendJson(response, 503, { code: "ServiceUnavailable", message: "starting" });
      return;
    }
    handle(options, account, documents, endpoint, request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, { code: "InternalServerError", message: String(error) });
      }
    });
  });
  const listening = await listenOnLoopback(server);
  endpoint = `https://${loopbackHost}:${listening.port}`;
  const account = new Account(loopbackHost, listening.port);
  const documents = new CosmosDocumentStore(account, options.databaseName, options.containerName);
  Object.assign(started, { account, documents });
  return { ...listening, endpoint, documents };
}
