/**
 * What the first party checks of an identity URL before it sends anything there: a data plane host
 * of the configured cloud (loopback hosts in a sandbox run only) and one tenant GUID in `tid`.
 */
import { describe, expect, it } from "vitest";
import type { DataPlaneHosts } from "../../../resources/core/identityUrl";
import { dataPlaneHostsOf, readIdentityUrl } from "../../../resources/core/identityUrl";

const tenant = "4B6D8F0A-2C4E-4A6B-8D0F-1A3C5E7A9B11";
const path =
  "/subscriptions/1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/resourcegroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c/credentials/v2/identities";
const query = `arpid=a&tid=${tenant}&oid=o&aid=x`;
const publicCloud: DataPlaneHosts = { cloud: "AzurePublicCloud", loopback: false };

describe("readIdentityUrl", () => {
  it.each([
    ["AzurePublicCloud", "https://eastus.identity.azure.net"],
    ["AzurePublicCloud", "https://control-westcentralus.IDENTITY.azure.net"],
    ["AzureUSGovernment", "https://usgovvirginia.identity.usgovcloudapi.net"],
    ["AzureChinaCloud", "https://control-chinanorth.identity.chinacloudapi.cn"],
  ] as const)("accepts a data plane host of %s (%s), with its tid lowercased", (cloud, origin) => {
    expect(readIdentityUrl(`${origin}${path}?${query}`, { cloud, loopback: false })).toEqual({
      ok: true,
      host: new URL(origin).host,
      tenantId: tenant.toLowerCase(),
    });
  });

  it.each([
    ["another cloud's data plane", "https://eastus.identity.usgovcloudapi.net"],
    ["the bare data plane domain", "https://identity.azure.net"],
    ["two labels under it", "https://a.b.identity.azure.net"],
    ["a look-alike domain", "https://eastus.identity.azure.net.example.com"],
    ["a suffix without the dot", "https://eastusidentity.azure.net"],
    ["another port", "https://eastus.identity.azure.net:8443"],
    ["a loopback host outside a sandbox run", "https://127.0.0.1:8443"],
  ])("refuses %s, naming the host, the cloud and the expected form", (_title, origin) => {
    const reading = readIdentityUrl(`${origin}${path}?${query}`, publicCloud);
    expect(reading).toEqual({
      ok: false,
      problem:
        `the cluster's identity URL (properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL) is on host '${new URL(origin).host}', ` +
        "which is not a Managed Identities data plane host of AzurePublicCloud (the setting azureCloud): expected https://<region>.identity.azure.net/…",
    });
  });

  it("accepts loopback hosts in a sandbox run only", () => {
    const sandbox: DataPlaneHosts = { cloud: "AzurePublicCloud", loopback: true };
    for (const origin of ["https://127.0.0.1:8443", "https://localhost:1", "https://[::1]:2"]) {
      expect(readIdentityUrl(`${origin}${path}?${query}`, sandbox)).toMatchObject({ ok: true, tenantId: tenant.toLowerCase() });
    }
    expect(readIdentityUrl(`https://eastus.identity.azure.net${path}?${query}`, sandbox)).toMatchObject({ ok: true });
    expect(readIdentityUrl(`https://10.0.0.1${path}?${query}`, sandbox)).toMatchObject({ ok: false });
  });

  it.each([
    ["not a URL", "eastus.identity.azure.net/x", /is not an absolute URL$/],
    ["http", `http://eastus.identity.azure.net${path}?${query}`, /uses http:\/\/; the first party sends its token over https:\/\/ only$/],
    ["no tid", `https://eastus.identity.azure.net${path}?arpid=a&oid=o`, /names no tenant: it has no tid query parameter$/],
    ["an empty tid", `https://eastus.identity.azure.net${path}?tid=`, /has tid '', which is not a tenant ID \(a GUID\)$/],
    [
      "a tid that is a name",
      `https://eastus.identity.azure.net${path}?tid=contoso.onmicrosoft.com`,
      /has tid 'contoso\.onmicrosoft\.com', which is not a tenant ID/,
    ],
    ["two tids", `https://eastus.identity.azure.net${path}?${query}&tid=${tenant}`, /has 2 tid query parameters; expected one/],
    ["a TID in capitals only", `https://eastus.identity.azure.net${path}?TID=${tenant}`, /names no tenant/],
  ])("refuses %s, naming the field", (_title, url, problem) => {
    const reading = readIdentityUrl(url, publicCloud);
    expect(reading.ok).toBe(false);
    expect(!reading.ok && reading.problem).toMatch(
      /^the cluster's identity URL \(properties\.serviceProviderProperties\.managedIdentitiesDataPlaneIdentityURL\) /,
    );
    expect(!reading.ok && reading.problem).toMatch(problem);
  });

  it("shortens a long tid in its message", () => {
    const reading = readIdentityUrl(`https://eastus.identity.azure.net${path}?tid=${"x".repeat(500)}`, publicCloud);
    expect(!reading.ok && reading.problem.length).toBeLessThan(400);
  });
});

describe("dataPlaneHostsOf", () => {
  it("accepts loopback hosts when the authority host is a loopback host (a sandbox's Entra), and only then", () => {
    expect(dataPlaneHostsOf({ azureCloud: "AzureUSGovernment", authorityHost: "https://login.microsoftonline.us" })).toEqual({
      cloud: "AzureUSGovernment",
      loopback: false,
    });
    expect(dataPlaneHostsOf({ azureCloud: "AzurePublicCloud", authorityHost: "https://127.0.0.1:4443" })).toEqual({
      cloud: "AzurePublicCloud",
      loopback: true,
    });
    expect(dataPlaneHostsOf({ azureCloud: "AzurePublicCloud", authorityHost: "not a url" })).toEqual({ cloud: "AzurePublicCloud", loopback: false });
  });
});
