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
}

const documentsPathPattern = /^\/*dbs\/[^/]+\/colls\/[^/]+\/docs(?:\/([^/]+))?\/*$/;

function isTrueHeader(request: IncomingMessage, name: string): boolean {
  return String(request.headers[name] ?? "").toLowerCase() === "true";
}

function classify(request: IncomingMessage, pathname: string, body: Buffer): DocumentRequest {
  const match = documentsPathPattern.exec(pathname);
  if (match === null) {
    return { operation: "other" };
  }
  const partitionHeader = request.headers["x-ms-documentdb-partitionkey"];
  let partitionKey: string | undefined;
  try {
    const parsed: unknown = typeof partitionHeader === "string" ? JSON.parse(partitionHeader) : undefined;
    const value: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
    partitionKey = typeof value === "string" ? value : undefined;
  } catch {
    partitionKey = undefined;
  }
  const documentId = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
  const base = { ...(documentId === undefined ? {} : { documentId }), ...(partitionKey === undefined ? {} : { partitionKey }) };
  if (request.method === "GET") {
    return { operation: "read", ...base };
  }
  if (request.method === "POST" && (isTrueHeader(request, "x-ms-documentdb-isquery") || request.headers["content-type"] === "application/query+json")) {
    return { operation: "other", ...base };
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

function count(statistics: SandboxStatistics, request: IncomingMessage, pathname: string, documentRequest: DocumentRequest): void {
  const cosmos = statistics.cosmos;
  if (documentRequest.operation === "read") {
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

/** Runs the cosmosdb-server route for a request whose body was already read, as its own handler would. */
async function forward(account: Account, request: IncomingMessage, response: ServerResponse, body: Buffer): Promise<void> {
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
  const documentRequest = classify(request, pathname, body);
  count(options.statistics, request, pathname, documentRequest);
  const fired = options.faults.take({
    target: "cosmos",
    method: request.method ?? "GET",
    path: pathname,
    operation: documentRequest.operation,
    ...(documentRequest.documentId === undefined ? {} : { documentId: documentRequest.documentId }),
  });
  await delay(fired.delayInMs);
  const rule = fired.rule;
  if (rule?.kind === "connectionReset") {
    resetConnection(request);
    return;
  }
  if (rule?.kind === "race" || rule?.kind === "deleteBeforeWrite") {
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
  await forward(account, request, response, body);
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
