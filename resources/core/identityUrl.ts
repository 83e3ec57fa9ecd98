/**
 * What the first party checks of an identity URL before asking the data plane: `https://` on a data
 * plane host of the configured cloud (loopback only in a sandbox run), and exactly one `tid` GUID,
 * the only tenant it asks a token in (unlike upstream's client, which follows any challenge).
 */
import type { AzureCloudName } from "./azureClouds";
import { azureClouds, isLoopbackHost } from "./azureClouds";
import { guidPattern } from "./azureResourceId";

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
  let authority: string;
  try {
    authority = new URL(settings.authorityHost).hostname;
  } catch {
    authority = "";
  }
  return { cloud: settings.azureCloud, loopback: authority !== "" && isLoopbackHost(authority) };
}

/** An identity URL the first party may call, with the tenant it names; or what is wrong with it. */
export type IdentityUrlReading = { readonly ok: true; readonly host: string; readonly tenantId: string } | { readonly ok: false; readonly problem: string };

const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The host and lowercased tenant of the URL the data plane is asked at, or the problem naming the field and value. */
export function readIdentityUrl(identityUrl: string, hosts: DataPlaneHosts): IdentityUrlReading {
  const subject = `the cluster's identity URL (properties.serviceProviderProperties.${identityUrlField})`;
  let url: URL;
  try {
    url = new URL(identityUrl);
  } catch {
    return { ok: false, problem: `${subject} is not an absolute URL` };
  }
  if (url.protocol !== "https:") {
    return { ok: false, problem: `${subject} uses ${url.protocol}//; the first party sends its token over https:// only` };
  }
  const suffix = azureClouds[hosts.cloud].dataPlaneSuffix;
  const hostname = url.hostname.toLowerCase();
  const cloudHost = url.port === "" && hostname.endsWith(suffix) && label.test(hostname.slice(0, -suffix.length));
  if (!cloudHost && !(hosts.loopback && isLoopbackHost(hostname))) {
    return {
      ok: false,
      problem:
        `${subject} is on host '${url.host}', which is not a Managed Identities data plane host of ${hosts.cloud} ` +
        `(the setting azureCloud): expected https://<region>${suffix}/…`,
    };
  }
  const tenants = url.searchParams.getAll("tid");
  if (tenants.length !== 1) {
    return {
      ok: false,
      problem:
        tenants.length === 0
          ? `${subject} names no tenant: it has no tid query parameter`
          : `${subject} has ${tenants.length} tid query parameters; expected one, the tenant of the cluster's identities`,
    };
  }
  const [tenantId] = tenants as [string];
  if (!guidPattern.test(tenantId)) {
    const shown = tenantId.length > 64 ? `${tenantId.slice(0, 64)}…` : tenantId;
    return { ok: false, problem: `${subject} has tid '${shown}', which is not a tenant ID (a GUID)` };
  }
  return { ok: true, host: url.host, tenantId: tenantId.toLowerCase() };
}
