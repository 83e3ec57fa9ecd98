/**
 * The Managed Identities data plane request as upstream's Go client (Azure/msi-dataplane) builds it
 * from an identity URL: its scheme, host and path, the query re-encoded as Go's url.Values with
 * `api-version` added, and the body as Go's encoding/json writes it. Checked against Go vectors.
 */
import { compareGoMapKeys } from "./goJson";

const hex = "0123456789ABCDEF";

/** Go's `url.QueryEscape`: everything but letters, digits and `-_.~` escaped, a space as `+`. */
function goQueryEscape(text: string): string {
  return escapeBytes(text, (byte) => isUnreserved(byte), true);
}

/** Go's escaping of a URL path (`encodePath` mode): also keeps `$&+,/:;=@`. */
function goPathEscape(text: string): string {
  return escapeBytes(text, (byte) => isUnreserved(byte) || pathKept.has(byte), false);
}

export function dataPlaneRequestUrl(identityUrl: string, apiVersion: string): string {
  const authority = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/.exec(identityUrl);
  if (authority === null) throw new TypeError("the identity URL is not an absolute URL with a host");
  const [, scheme, host, rawPath, rawQuery] = authority;
  const path = goPathEscape(goUnescape(rawPath, false) ?? rawPath);
  const pairs: Array<[string, string]> = [["api-version", apiVersion], ...goParseQuery(rawQuery ?? "")];
  // Values.Encode: keys in Go's byte order; a key's values keep their order (sort is stable).
  const sorted = pairs.sort(([left], [right]) => compareGoMapKeys(left, right)).map(([key, value]) => `${goQueryEscape(key)}=${goQueryEscape(value)}`);
  return `${scheme.toLowerCase()}://${host}${path}?${sorted.join("&")}`;
}

/** The request body as Go's `json.Marshal` writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function dataPlaneRequestBody(identityIds: readonly string[]): string {
  return JSON.stringify({ identityIds }).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go's `url.ParseQuery`, keeping the pairs it keeps, in order. */
function goParseQuery(query: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const part of query.split("&")) {
    if (part.length === 0 || part.includes(";")) continue;
    const equals = part.indexOf("=");
    const key = goUnescape(equals < 0 ? part : part.slice(0, equals), true);
    const value = goUnescape(equals < 0 ? "" : part.slice(equals + 1), true);
    if (key !== undefined && value !== undefined) pairs.push([key, value]);
  }
  return pairs;
}

/** Percent-decoding as Go's unescape does it; `+` is a space in a query; undefined for a bad escape. */
function goUnescape(text: string, query: boolean): string | undefined {
  const bytes: number[] = [];
  const input = Buffer.from(text, "utf8");
  for (let index = 0; index < input.length; index += 1) {
    const byte = input[index];
    if (byte === 0x25) {
      const digits = input.subarray(index + 1, index + 3).toString("latin1");
      if (!/^[0-9A-Fa-f]{2}$/.test(digits)) return undefined;
      bytes.push(Number.parseInt(digits, 16));
      index += 2;
    } else {
      bytes.push(query && byte === 0x2b ? 0x20 : byte);
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

function isUnreserved(byte: number): boolean {
  return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || unreservedMarks.has(byte);
}

const unreservedMarks = new Set([..."-_.~"].map((character) => character.charCodeAt(0)));
const pathKept = new Set([..."$&+,/:;=@"].map((character) => character.charCodeAt(0)));

/** The kept runs copied whole, each escaped byte as `%XX` (or `+`): no string per byte. */
function escapeBytes(text: string, keep: (byte: number) => boolean, spaceAsPlus: boolean): string {
  const bytes = Buffer.from(text, "utf8");
  const parts: string[] = [];
  let start = 0;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index] ?? 0;
    const plus = spaceAsPlus && byte === 0x20;
    if (!plus && keep(byte)) continue;
    if (index > start) parts.push(bytes.toString("latin1", start, index));
    parts.push(plus ? "+" : `%${hex[byte >> 4]}${hex[byte & 15]}`);
    start = index + 1;
  }
  if (start < bytes.length) parts.push(bytes.toString("latin1", start));
  return parts.join("");
}
