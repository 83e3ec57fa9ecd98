/**
 * The identity URL of a cluster's service managed identity: what the first party checks before asking
 * the data plane (`https://` on a data plane host of the configured cloud, loopback only in a sandbox
 * run; exactly one `tid` GUID, the only tenant it asks a token in, unlike upstream's client, which
 * follows any challenge), and the request upstream's Go client (Azure/msi-dataplane) builds from it.
 */
import type { AzureCloudName } from "./azureClouds";
import { azureClouds, isLoopbackHost } from "./azureClouds";
import { guidPattern } from "./azureResourceId";
import { compareGoMapKeys } from "./goJson";

/** The cluster document field that holds the identity URL, as messages name it. */
export const identityUrlField = "managedIdentitiesDataPlaneIdentityURL";

/** Where the first party may send its data plane token. */
export interface DataPlaneHosts {
  readonly cloud: AzureCloudName;
  /** Loopback hosts as well: a sandbox run. */
  readonly loopback: boolean;
}

/** The hosts of a configuration: its cloud's, and loopback ones when its authority host is a loopback host. */
export function dataPlaneHostsOf(settings: { readonly azureCloud: AzureCloudName; readonly authorityHost: string }): DataPlaneHosts {
  const authority = URL.canParse(settings.authorityHost) ? new URL(settings.authorityHost).hostname : "";
  return { cloud: settings.azureCloud, loopback: authority !== "" && isLoopbackHost(authority) };
}

/** An identity URL the first party may call, with the tenant it names; or what is wrong with it. */
export type IdentityUrlReading = { readonly ok: true; readonly host: string; readonly tenantId: string } | { readonly ok: false; readonly problem: string };

const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The host and lowercased tenant of the URL the data plane is asked at, or the problem naming the field and value. */
export function readIdentityUrl(identityUrl: string, hosts: DataPlaneHosts): IdentityUrlReading {
  const problem = (what: string): IdentityUrlReading => ({
    ok: false,
    problem: `the cluster's identity URL (properties.serviceProviderProperties.${identityUrlField}) ${what}`,
  });
  if (!URL.canParse(identityUrl)) return problem("is not an absolute URL");
  const url = new URL(identityUrl);
  if (url.protocol !== "https:") return problem(`uses ${url.protocol}//; the first party sends its token over https:// only`);
  const suffix = azureClouds[hosts.cloud].dataPlaneSuffix;
  const hostname = url.hostname.toLowerCase();
  const cloudHost = url.port === "" && hostname.endsWith(suffix) && label.test(hostname.slice(0, -suffix.length));
  if (!cloudHost && !(hosts.loopback && isLoopbackHost(hostname))) {
    return problem(
      `is on host '${url.host}', which is not a Managed Identities data plane host of ${hosts.cloud} (the setting azureCloud): expected https://<region>${suffix}/…`,
    );
  }
  const tenants = url.searchParams.getAll("tid");
  if (tenants.length === 0) return problem("names no tenant: it has no tid query parameter");
  if (tenants.length > 1) return problem(`has ${tenants.length} tid query parameters; expected one, the tenant of the cluster's identities`);
  const tenantId = tenants[0];
  const shown = tenantId.length > 64 ? `${tenantId.slice(0, 64)}…` : tenantId;
  if (!guidPattern.test(tenantId)) return problem(`has tid '${shown}', which is not a tenant ID (a GUID)`);
  return { ok: true, host: url.host, tenantId: tenantId.toLowerCase() };
}

export function dataPlaneRequestUrl(identityUrl: string, apiVersion: string): string {
  const authority = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/.exec(identityUrl);
  if (authority === null) throw new TypeError("the identity URL is not an absolute URL with a host");
  const [, scheme, host, rawPath, rawQuery] = authority;
  const path = goEscape(goUnescape(rawPath, false) ?? rawPath, pathKept, false);
  // Values.Encode: keys in Go's byte order; a key's values keep their order (sort is stable).
  const query = [["api-version", apiVersion] as const, ...goParseQuery(rawQuery ?? "")]
    .sort(([left], [right]) => compareGoMapKeys(left, right))
    .map(([key, value]) => `${goEscape(key, unreserved, true)}=${goEscape(value, unreserved, true)}`);
  return `${scheme.toLowerCase()}://${host}${path}?${query.join("&")}`;
}

/** The request body as Go's `json.Marshal` writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function dataPlaneRequestBody(identityIds: readonly string[]): string {
  return JSON.stringify({ identityIds }).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go's `url.ParseQuery`, keeping the pairs it keeps, in order. */
function goParseQuery(query: string): Array<readonly [string, string]> {
  return query.split("&").flatMap((part) => {
    if (part.length === 0 || part.includes(";")) return [];
    const equals = part.indexOf("=");
    const key = goUnescape(equals < 0 ? part : part.slice(0, equals), true);
    const value = goUnescape(equals < 0 ? "" : part.slice(equals + 1), true);
    return key === undefined || value === undefined ? [] : [[key, value] as const];
  });
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

/** The bytes Go's `url.QueryEscape` keeps; escaping a path (`encodePath` mode) also keeps `$&+,/:;=@`. */
const unreserved: ReadonlySet<number> = new Set(Buffer.from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~"));
const pathKept: ReadonlySet<number> = new Set([...unreserved, ...Buffer.from("$&+,/:;=@")]);

/** Go's escaping: bytes outside `kept` as `%XX`, a space as `+` in a query. */
function goEscape(text: string, kept: ReadonlySet<number>, spaceAsPlus: boolean): string {
  let escaped = "";
  for (const byte of Buffer.from(text, "utf8")) {
    escaped += spaceAsPlus && byte === 0x20 ? "+" : kept.has(byte) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return escaped;
}
