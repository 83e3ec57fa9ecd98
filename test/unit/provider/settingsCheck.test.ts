/**
 * Settings wrong for the whole fleet (resources/provider/settingsCheck.ts): one message naming the
 * key, what is wrong and where the value comes from, found without a request. The certificate
 * files are real: a PEM bundle the sandbox's CA issues, and files that are missing or hold no
 * certificate.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fleetSettingsProblem } from "../../../resources/provider/settingsCheck";
import { SandboxCertificateAuthority } from "../../../sandbox/certificateAuthority";

const required = { ARO_HCP_COSMOS_ENDPOINT: "https://aro-hcp.documents.azure.com:443/", ARO_HCP_COSMOS_DATABASE: "aro-hcp" };
const tenantId = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const clientId = "0f0e0d0c-0b0a-4909-8807-060504030201";
let directory: string;
let bundleFile: string;
let caFile: string;

beforeAll(async () => {
  const authority = await SandboxCertificateAuthority.create("settingsCheck test CA");
  const leaf = await authority.issue("settingsCheck first party");
  directory = mkdtempSync(join(tmpdir(), "settings-check-"));
  bundleFile = join(directory, "first-party.pem");
  writeFileSync(bundleFile, `${leaf.certificatePem}${leaf.privateKeyPem}`, { mode: 0o600 });
  caFile = join(directory, "ca.pem");
  writeFileSync(caFile, authority.certificatePem);
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

function clusterMode(extra: Record<string, string>): Record<string, string> {
  return {
    ...required,
    ARO_HCP_CREDENTIAL_MODE: "clusterServiceManagedIdentity",
    ARO_HCP_DATA_PLANE_AUDIENCE: "https://dataplane.example",
    ARO_HCP_FIRST_PARTY_CLIENT_ID: clientId,
    ARO_HCP_FIRST_PARTY_TENANT_ID: tenantId,
    ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE: bundleFile,
    ...extra,
  };
}

describe("fleet-wide settings check", () => {
  it("accepts settings that can work: a readable bundle that parses, a CA file with a certificate", () => {
    expect(fleetSettingsProblem(undefined, clusterMode({ ARO_HCP_TLS_CA_FILE: caFile }))).toBeUndefined();
    expect(fleetSettingsProblem(undefined, required)).toBeUndefined();
  });

  it("names the missing audience, where its value comes from, and that nothing was written", () => {
    const environment = clusterMode({});
    delete environment.ARO_HCP_DATA_PLANE_AUDIENCE;
    const problem = fleetSettingsProblem(undefined, environment) ?? "";
    expect(problem.split("\n")[0]).toMatch(/^'aro-hcp-identity-status:dataPlaneAudience' \(or ARO_HCP_DATA_PLANE_AUDIENCE\) is not set/);
    expect(problem).toContain("msiRpDataPlaneAudienceResource");
    expect(problem).toContain("Nothing was read or written for any cluster");
  });

  it("names a certificate file that does not exist, once, with its key", () => {
    const missing = join(directory, "absent.pem");
    const problem = fleetSettingsProblem(undefined, clusterMode({ ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE: missing })) ?? "";
    expect(problem).toMatch(
      /^'aro-hcp-identity-status:firstPartyCertificateFile' \(or ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE\) names .*absent\.pem, which does not exist/,
    );
    expect(problem.split(missing).length - 1).toBe(1);
  });

  it("names a certificate file that does not parse, and a CA file without a certificate, together", () => {
    const garbage = join(directory, "garbage.pem");
    writeFileSync(garbage, "not a certificate\n");
    const problem = fleetSettingsProblem(undefined, clusterMode({ ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE: garbage, ARO_HCP_TLS_CA_FILE: garbage })) ?? "";
    expect(problem).toMatch(/^2 settings are wrong:/);
    expect(problem).toMatch(/tlsCaFile' \(or ARO_HCP_TLS_CA_FILE\) names .*garbage\.pem, which holds no PEM certificate/);
    expect(problem).toMatch(/firstPartyCertificateFile' \(or ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE\) names .*garbage\.pem, which is unusable/);
  });

  it("checks the fixed identity's bundle in fixedIdentity mode, and no bundle in processCredential mode", () => {
    const missing = join(directory, "fixed.pem");
    const fixed = {
      ...required,
      ARO_HCP_CREDENTIAL_MODE: "fixedIdentity",
      ARO_HCP_FIXED_IDENTITY_CLIENT_ID: clientId,
      ARO_HCP_FIXED_IDENTITY_TENANT_ID: tenantId,
      ARO_HCP_FIXED_IDENTITY_CERTIFICATE_FILE: missing,
      ARO_HCP_FIXED_IDENTITY_PRINCIPAL_ID: clientId,
    };
    expect(fleetSettingsProblem(undefined, fixed)).toMatch(
      /fixedIdentityCertificateFile' \(or ARO_HCP_FIXED_IDENTITY_CERTIFICATE_FILE\) names .*fixed\.pem, which does not exist/,
    );
  });

  it("reads stack configuration as the CLI hands it over", () => {
    const config = { get: (key: string) => ({ credentialMode: "clusterServiceManagedIdentity" })[key] };
    expect(fleetSettingsProblem(config, required)).toMatch(/dataPlaneAudience' \(or ARO_HCP_DATA_PLANE_AUDIENCE\) is not set/);
  });
});
