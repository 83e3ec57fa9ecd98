import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { TokenRegistry } from "./tokenRegistry";

/** The resource type and resource link Cosmos signs, derived from the request path. */
export interface CosmosResource {
  /** E.g. `docs`, `colls`, `dbs`, `pkranges`, or `""` for the account. */
  resourceType: string;
  /** E.g. `dbs/arohcp/colls/Resources/docs/<id>` for an item, `dbs/arohcp/colls/Resources` for a feed. */
  resourceLink: string;
}

/** What the Cosmos server accepts as credentials. */
export interface CosmosCredentials {
  /** The account master key, base64. */
  masterKey: string;
  /** Tokens for `type=aad` authorization. */
  tokens: TokenRegistry;
  /** Audiences accepted for Entra ID tokens (the account endpoint and `https://cosmos.azure.com`). */
  audiences: string[];
}

/** The outcome of checking a request's Authorization header. */
export type CosmosAuthorizationResult = { authorized: true; kind: "master" | "aad" } | { authorized: false; message: string };

const allowedClockSkewInMs = 15 * 60 * 1000;

/**
 * Derives what Cosmos signs from a request path: an even number of segments names an item (type is
 * the second last segment, link is the whole path); an odd number names a feed (type is the last
 * segment, link is the path without it).
 *
 * @param pathname - The URL path, e.g. `/dbs/arohcp/colls/Resources/docs`.
 * @returns The resource type and link, with segments URL-decoded.
 */
export function cosmosResourceFromPath(pathname: string): CosmosResource {
  const segments = pathname
    .split("/")
    .filter((segment) => segment !== "")
    .map(decodeURIComponent);
  if (segments.length === 0) {
    return { resourceType: "", resourceLink: "" };
  }
  if (segments.length % 2 === 0) {
    return { resourceType: segments[segments.length - 2] ?? "", resourceLink: segments.join("/") };
  }
  return { resourceType: segments[segments.length - 1] ?? "", resourceLink: segments.slice(0, -1).join("/") };
}

/**
 * The text a master-key signature covers, exactly as `@azure/cosmos` 4.9.3 builds it
 * (`utils/headers.js`): `lower(verb)\nlower(resourceType)\nresourceLink\nlower(x-ms-date)\n\n`.
 *
 * @param verb - The HTTP method.
 * @param resource - The resource type and link.
 * @param date - The `x-ms-date` header value (RFC 1123).
 * @returns The payload to HMAC.
 */
export function masterKeyPayload(verb: string, resource: CosmosResource, date: string): string {
  return `${verb.toLowerCase()}\n${resource.resourceType.toLowerCase()}\n${resource.resourceLink}\n${date.toLowerCase()}\n\n`;
}

/**
 * Signs a payload with a master key: base64 HMAC-SHA256 keyed with the base64-decoded key.
 *
 * @param masterKey - The base64 key.
 * @param payload - From {@link masterKeyPayload}.
 * @returns The base64 signature.
 */
export function signMasterKeyPayload(masterKey: string, payload: string): string {
  return createHmac("sha256", Buffer.from(masterKey, "base64")).update(payload).digest("base64");
}

function unauthorizedMessage(detail: string): string {
  return `The input authorization token can't serve the request. ${detail}\r\nActivityId: ${randomUUID()}`;
}

function parseAuthorization(header: string): { type: string; version: string; signature: string } | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(header);
  } catch {
    return undefined;
  }
  const match = /^type=([^&]+)&ver=([^&]+)&sig=(.+)$/.exec(decoded);
  if (match === null || match[1] === undefined || match[2] === undefined || match[3] === undefined) {
    return undefined;
  }
  return { type: match[1], version: match[2], signature: match[3] };
}

/**
 * Checks a Cosmos request's `authorization` header: `type=master&ver=1.0&sig=<HMAC>` (URL-encoded,
 * as the SDK sends it) against the master key, or `type=aad&ver=1.0&sig=<token>` (not encoded)
 * against the sandbox token registry.
 *
 * @param credentials - The key, token registry and accepted audiences.
 * @param method - The HTTP method.
 * @param pathname - The URL path.
 * @param headers - The request headers.
 * @returns Whether the request is authorized and, if not, a Cosmos-style message.
 */
export function authorizeCosmosRequest(
  credentials: CosmosCredentials,
  method: string,
  pathname: string,
  headers: IncomingHttpHeaders,
): CosmosAuthorizationResult {
  const header = headers.authorization;
  const parsed = header === undefined ? undefined : parseAuthorization(header);
  if (parsed === undefined) {
    return { authorized: false, message: "Required Header authorization is missing or malformed. Ensure a valid Authorization token is passed." };
  }
  if (parsed.type === "aad") {
    const verification = credentials.tokens.verify(parsed.signature);
    if (!verification.valid) {
      return { authorized: false, message: unauthorizedMessage(`The Entra ID token is ${verification.reason}.`) };
    }
    const audience = verification.issued.resource.replace(/\/+$/, "");
    if (!credentials.audiences.includes(audience)) {
      return { authorized: false, message: unauthorizedMessage(`The Entra ID token was issued for the wrong audience '${verification.issued.resource}'.`) };
    }
    return { authorized: true, kind: "aad" };
  }
  if (parsed.type !== "master") {
    return { authorized: false, message: unauthorizedMessage(`Authorization type '${parsed.type}' is not supported by the sandbox.`) };
  }
  const dateHeader = headers["x-ms-date"];
  const date = Array.isArray(dateHeader) ? dateHeader[0] : dateHeader;
  if (date === undefined || Number.isNaN(Date.parse(date)) || Math.abs(Date.now() - Date.parse(date)) > allowedClockSkewInMs) {
    return { authorized: false, message: "The authorization token is not valid at the current time. Please provide a valid x-ms-date header." };
  }
  const payload = masterKeyPayload(method, cosmosResourceFromPath(pathname), date);
  const expected = Buffer.from(signMasterKeyPayload(credentials.masterKey, payload));
  const presented = Buffer.from(parsed.signature);
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) {
    const shownPayload = payload.replace(/\n/g, "\\n");
    return {
      authorized: false,
      message: unauthorizedMessage(
        `The wrong key is being used or the expected payload is not built as per the protocol. Server used the following payload to sign: '${shownPayload}'`,
      ),
    };
  }
  return { authorized: true, kind: "master" };
}
