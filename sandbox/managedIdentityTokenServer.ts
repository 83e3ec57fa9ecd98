import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { FaultInjector } from "./faultInjector";
import { delay, listenOnLoopback, type ListeningServer, loopbackHost, resetConnection, sendJson } from "./httpUtilities";
import { increment, type SandboxStatistics } from "./sandboxStatistics";
import type { TokenRegistry } from "./tokenRegistry";

/** The path the token endpoint serves; `IDENTITY_ENDPOINT` is `http://127.0.0.1:<port>` + this. */
export const tokenEndpointPath = "/msi/token";

/** What the token server needs from the rest of the sandbox. */
export interface ManagedIdentityTokenServerOptions {
  tokens: TokenRegistry;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  /** The secret clients must send as `x-identity-header` (the value of `IDENTITY_HEADER`). */
  identityHeader: string;
}

/** A running token endpoint. */
export interface ManagedIdentityTokenServer extends ListeningServer {
  /** The full token URL, to use as `IDENTITY_ENDPOINT`. */
  endpoint: string;
}

function reply(statistics: SandboxStatistics, response: ServerResponse, statusCode: number, body: unknown, headers: Record<string, string> = {}): void {
  increment(statistics.token.responsesByStatus, String(statusCode));
  sendJson(response, statusCode, body, headers);
}

async function handle(options: ManagedIdentityTokenServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { statistics } = options;
  statistics.token.requests += 1;
  const url = new URL(request.url ?? "/", `http://${loopbackHost}`);
  const fired = options.faults.take({ target: "token", method: request.method ?? "GET", path: url.pathname });
  await delay(fired.delayInMs);
  if (url.pathname !== tokenEndpointPath || request.method !== "GET") {
    reply(statistics, response, 404, { error: "not_found", error_description: `no route ${request.method} ${url.pathname}` });
    return;
  }
  if (request.headers["x-identity-header"] !== options.identityHeader) {
    reply(statistics, response, 401, {
      error: "invalid_request",
      error_description: "The x-identity-header header is missing or does not match IDENTITY_HEADER.",
    });
    return;
  }
  const rule = fired.rule;
  if (rule !== undefined) {
    if (rule.kind === "connectionReset") {
      increment(statistics.token.responsesByStatus, "0");
      resetConnection(request);
      return;
    }
    const statusCode = rule.kind === "throttle" ? 429 : rule.kind === "unavailable" ? 503 : (rule.statusCode ?? 500);
    const headers: Record<string, string> =
      rule.retryAfterSeconds !== undefined || rule.kind === "throttle" ? { "retry-after": String(rule.retryAfterSeconds ?? 1) } : {};
    reply(
      statistics,
      response,
      statusCode,
      {
        error: rule.errorCode ?? "temporarily_unavailable",
        error_description: rule.message ?? `sandbox fault ${rule.kind}`,
      },
      headers,
    );
    return;
  }
  const resource = url.searchParams.get("resource");
  if (resource === null || resource === "") {
    reply(statistics, response, 400, { error: "invalid_request", error_description: "The resource parameter is required." });
    return;
  }
  const clientId = url.searchParams.get("client_id") ?? undefined;
  const issued = options.tokens.issue(resource, clientId);
  statistics.token.tokensIssued += 1;
  reply(statistics, response, 200, {
    access_token: issued.token,
    expires_on: String(Math.floor(issued.expiresOnInMs / 1000)),
    resource,
    token_type: "Bearer",
    ...(clientId === undefined ? {} : { client_id: clientId }),
  });
}

/**
 * Starts an App Service style managed-identity token endpoint (plain HTTP, as on App Service) on
 * 127.0.0.1. `@azure/identity`'s ManagedIdentityCredential uses it when `IDENTITY_ENDPOINT` and
 * `IDENTITY_HEADER` are set: `GET <endpoint>?api-version=2019-08-01&resource=<resource>[&client_id=…]`
 * with header `x-identity-header`. Tokens come from the shared {@link TokenRegistry}.
 *
 * @param options - Shared sandbox state and the expected identity header.
 * @returns The running server and its token URL.
 */
export async function startManagedIdentityTokenServer(options: ManagedIdentityTokenServerOptions): Promise<ManagedIdentityTokenServer> {
  const server = createServer({ keepAlive: true }, (request, response) => {
    handle(options, request, response).catch((error: unknown) => {
      reply(options.statistics, response, 500, { error: "server_error", error_description: String(error) });
    });
  });
  const listening = await listenOnLoopback(server);
  return { ...listening, endpoint: `http://${loopbackHost}:${listening.port}${tokenEndpointPath}` };
}
