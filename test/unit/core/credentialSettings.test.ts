/** The credential mode settings (resources/core/settings.ts): each mode's keys, validated, every problem naming its key. */
import { describe, expect, it } from "vitest";
import { SettingsError, readSettings } from "../../../resources/core/settings";

const required = { ARO_HCP_COSMOS_ENDPOINT: "https://aro-hcp.documents.azure.com:443/", ARO_HCP_COSMOS_DATABASE: "aro-hcp" };
const clientId = "0f0e0d0c-0b0a-4909-8807-060504030201";
const tenantId = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const firstParty = {
  ARO_HCP_FIRST_PARTY_CLIENT_ID: clientId,
  ARO_HCP_FIRST_PARTY_TENANT_ID: tenantId,
  ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE: "/etc/aro-hcp/first-party.pem",
};

function problemOf(environment: Record<string, string>): string {
  try {
    readSettings(undefined, { ...required, ...environment });
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as Error).message;
  }
  throw new Error("the settings were accepted");
}

describe("credential mode settings", () => {
  it("reads clusterServiceManagedIdentity with a first-party certificate and the data plane audience", () => {
    const settings = readSettings(
      { get: (key) => ({ credentialMode: "clusterServiceManagedIdentity", dataPlaneAudience: "https://dataplane.example/" })[key] },
      { ...required, ...firstParty },
    );
    expect(settings).toMatchObject({
      credentialMode: "clusterServiceManagedIdentity",
      dataPlaneAudience: "https://dataplane.example",
      firstParty: { clientId, tenantId, certificateFile: "/etc/aro-hcp/first-party.pem" },
      fixedIdentity: undefined,
    });
    expect(settings.firstParty?.certificateFileSetting).toContain(
      "'aro-hcp-identity-status:firstPartyCertificateFile' (or ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE)",
    );
  });

  it("lets clusterServiceManagedIdentity use the process credential as the first party when no certificate is set", () => {
    const settings = readSettings(undefined, {
      ...required,
      ARO_HCP_CREDENTIAL_MODE: "clusterServiceManagedIdentity",
      ARO_HCP_DATA_PLANE_AUDIENCE: "https://dp.example",
    });
    expect(settings.firstParty).toBeUndefined();
  });

  it.each([
    [
      "an unknown mode",
      { ARO_HCP_CREDENTIAL_MODE: "cluster" },
      /credentialMode' \(or ARO_HCP_CREDENTIAL_MODE\) is 'cluster'; expected one of processCredential, clusterServiceManagedIdentity, fixedIdentity/,
    ],
    [
      "the cluster mode without an audience",
      { ARO_HCP_CREDENTIAL_MODE: "clusterServiceManagedIdentity" },
      /dataPlaneAudience' \(or ARO_HCP_DATA_PLANE_AUDIENCE\) is not set/,
    ],
    [
      "an audience with /.default",
      { ARO_HCP_CREDENTIAL_MODE: "clusterServiceManagedIdentity", ARO_HCP_DATA_PLANE_AUDIENCE: "https://dp.example/.default" },
      /ends with \/\.default/,
    ],
    [
      "a first-party certificate without its tenant",
      {
        ARO_HCP_CREDENTIAL_MODE: "clusterServiceManagedIdentity",
        ARO_HCP_DATA_PLANE_AUDIENCE: "https://dp.example",
        ...firstParty,
        ARO_HCP_FIRST_PARTY_TENANT_ID: "",
      },
      /firstPartyTenantId' \(or ARO_HCP_FIRST_PARTY_TENANT_ID\) is not set; the first-party application needs its client ID, tenant ID and certificate bundle file/,
    ],
    [
      "a client ID that is not a GUID",
      {
        ARO_HCP_CREDENTIAL_MODE: "fixedIdentity",
        ARO_HCP_FIXED_IDENTITY_CLIENT_ID: "app",
        ARO_HCP_FIXED_IDENTITY_TENANT_ID: tenantId,
        ARO_HCP_FIXED_IDENTITY_CERTIFICATE_FILE: "/f",
      },
      /fixedIdentityClientId' \(or ARO_HCP_FIXED_IDENTITY_CLIENT_ID\) is not a GUID/,
    ],
    [
      "the fixed mode without the principal ID its stand-in answers with",
      {
        ARO_HCP_CREDENTIAL_MODE: "fixedIdentity",
        ARO_HCP_FIXED_IDENTITY_CLIENT_ID: tenantId,
        ARO_HCP_FIXED_IDENTITY_TENANT_ID: tenantId,
        ARO_HCP_FIXED_IDENTITY_CERTIFICATE_FILE: "/f",
      },
      /fixedIdentityPrincipalId' \(or ARO_HCP_FIXED_IDENTITY_PRINCIPAL_ID\) is not set; .*'fixedIdentity' records the fixed identity's client and principal IDs/,
    ],
    [
      "the fixed mode without its identity",
      { ARO_HCP_CREDENTIAL_MODE: "fixedIdentity" },
      /fixedIdentityCertificateFile' \(or ARO_HCP_FIXED_IDENTITY_CERTIFICATE_FILE\) are not set/,
    ],
    [
      "first-party keys in the process mode",
      firstParty,
      /set, which only 'aro-hcp-identity-status:credentialMode' \(or ARO_HCP_CREDENTIAL_MODE\) 'clusterServiceManagedIdentity' reads, but the mode is 'processCredential'/,
    ],
    ["an authority host over http", { AZURE_AUTHORITY_HOST: "http://login.example" }, /authorityHost' \(or AZURE_AUTHORITY_HOST\) must use https:\/\//],
  ])("refuses %s, naming the key", (_title, environment, message) => {
    expect(problemOf(environment)).toMatch(message);
  });
});
