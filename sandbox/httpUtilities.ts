import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { Server as HttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { FaultInjector, FaultRequestContext, FaultRule } from "./faultInjector";
import { increment } from "./sandboxStatistics";

/** Either kind of Node HTTP server the sandbox runs. */
export type AnyServer = HttpServer | HttpsServer;

/** The only address sandbox servers bind to. */
export const loopbackHost = "127.0.0.1";

/**
 * Sends a JSON response with `content-type: application/json` and an `x-ms-request-id`.
 *
 * @param response - The response to write.
 * @param statusCode - The HTTP status code.
 * @param body - The value to serialize; `undefined` sends an empty body.
 * @param headers - Extra response headers.
 */
export function sendJson(response: ServerResponse, statusCode: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  response.writeHead(statusCode, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text).toString(),
    "x-ms-request-id": randomUUID(),
    ...headers,
  });
  response.end(text);
}

/**
 * Sends a plain-text response with no Azure error envelope, as an endpoint that does not route to
 * the service answers (a `bareStatus` fault).
 */
export function sendText(response: ServerResponse, statusCode: number, text: string): void {
  response.writeHead(statusCode, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text).toString() });
  response.end(text);
}

/**
 * A `bareStatus` fault's answer: its status with a plain-text body and no Azure error, as an
 * endpoint that does not route to the service answers; counted by status. Returns the status.
 */
export function sendBareStatus(response: ServerResponse, rule: FaultRule, responsesByStatus: Record<string, number>): number {
  const statusCode = rule.statusCode ?? 404;
  increment(responsesByStatus, String(statusCode));
  sendText(response, statusCode, rule.body ?? "");
  return statusCode;
}

/**
 * Reads a whole request body.
 *
 * @param request - The incoming request.
 * @returns The raw body bytes.
 */
export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(chunks);
}

/**
 * Waits for a number of milliseconds; returns at once for zero or less.
 *
 * @param milliseconds - How long to wait.
 */
export async function delay(milliseconds: number): Promise<void> {
  if (milliseconds > 0) {
    await sleep(milliseconds);
  }
}

/**
 * Destroys the connection under a request without answering, as a network reset would.
 *
 * @param request - The request whose socket to destroy.
 */
export function resetConnection(request: IncomingMessage): void {
  request.socket.destroy();
}

/**
 * The faults of one request, as every server applies them: waits out their delay, and for a
 * `connectionReset` drops the connection (counted as status 0 in `responsesByStatus`).
 * @returns The rule the server answers with, none, or `"reset"` when the connection is gone.
 */
export async function applyFaults(
  faults: FaultInjector,
  context: FaultRequestContext,
  request: IncomingMessage,
  responsesByStatus: Record<string, number>,
): Promise<FaultRule | undefined | "reset"> {
  const fired = faults.take(context);
  await delay(fired.delayInMs);
  if (fired.rule?.kind === "connectionReset") {
    increment(responsesByStatus, "0");
    resetConnection(request);
    return "reset";
  }
  return fired.rule;
}

/** A started server, with a way to stop it that does not wait for idle keep-alive sockets. */
export interface ListeningServer {
  /** The port the server listens on, on 127.0.0.1. */
  port: number;
  /** Closes the server and destroys every open socket. */
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1 with an OS-assigned port and tracks its sockets so that `close()`
 * can destroy them (keep-alive clients would otherwise keep it open and tests would hang).
 *
 * @param server - The server to start; keep-alive should already be configured.
 * @param port - The port to use; 0 (the default) lets the OS choose.
 * @returns The port and a close function.
 */
export async function listenOnLoopback(server: AnyServer, port = 0): Promise<ListeningServer> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, loopbackHost, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) {
          socket.destroy();
        }
        server.closeAllConnections();
      }),
  };
}

/**
 * Counts a request as in flight until the server has answered it (`response.end()`), or its
 * connection closes. Not until `finish`: that event follows the socket write and can be handled
 * after the client's next request on the same connection, which would count both at once and make
 * a client that never exceeds N concurrent requests look like it sent N + 2.
 *
 * @param response - The response to watch.
 * @param counters - Returns the server's current counters (`inFlight` now, `maxInFlight` ever); a
 *   function, because a statistics reset replaces the counter objects mid-request.
 * @param onEnd - Called exactly once when the request is over, after the count went down.
 */
export function trackInFlight(response: ServerResponse, counters: () => { inFlight: number; maxInFlight: number }, onEnd: () => void = () => undefined): void {
  const started = counters();
  started.inFlight += 1;
  started.maxInFlight = Math.max(started.maxInFlight, started.inFlight);
  let ended = false;
  const end = (): void => {
    if (!ended) {
      ended = true;
      counters().inFlight -= 1;
      onEnd();
    }
  };
  const originalEnd = response.end.bind(response) as (...parameters: unknown[]) => ServerResponse;
  response.end = (...parameters: unknown[]) => {
    const result = originalEnd(...parameters);
    end();
    return result;
  };
  response.once("finish", end);
  response.once("close", end);
}
