/**
 * Certificate bundles as the data plane and operators hand them over (resources/azure/certificateBundle.ts).
 * The fixtures are one throwaway test key and certificate (test/fixtures/certificates): PEM, a
 * legacy PKCS#12 archive without a password (SHA-1 MAC, RC2-40 and 3DES, as `openssl pkcs12
 * -export -legacy` and the Managed Identities data plane write them), and one with a password.
 */
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CertificateBundleError, parseCertificateBundle } from "../../../resources/azure/certificateBundle";

const directory = join(__dirname, "../../fixtures/certificates");
const fixture = (name: string): Buffer => readFileSync(join(directory, name));
const thumbprint = fixture("cert.sha256").toString("utf8").trim();

describe("parseCertificateBundle", () => {
  it.each(["bundle.pem", "legacy-no-password.p12"])("reads %s into PEM, key first, and the leaf's thumbprint", (name) => {
    const material = parseCertificateBundle(fixture(name), name);
    expect(material.thumbprint).toBe(thumbprint);
    expect(material.pem).toMatch(/^-----BEGIN PRIVATE KEY-----[\s\S]+-----BEGIN CERTIFICATE-----/);
    expect(material.validTo.getTime()).toBeGreaterThan(Date.now());
  });

  it("reads the base64 text of an archive once decoded, as the data plane's client_secret carries it", () => {
    const base64 = fixture("legacy-no-password.p12").toString("base64");
    expect(parseCertificateBundle(Buffer.from(base64, "base64"), "client_secret").thumbprint).toBe(thumbprint);
  });

  it.each([
    ["a certificate without its key", () => fixture("cert.pem"), /no private key in the bundle/],
    ["an archive with a password", () => fixture("with-password.p12"), /neither PEM nor a PKCS#12 archive without a password/],
    ["bytes that are neither", () => Buffer.from("not a certificate"), /neither PEM nor a PKCS#12 archive/],
    [
      "a key that matches no certificate",
      () =>
        Buffer.from(
          `${generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString()}${fixture("cert.pem").toString()}`,
        ),
      /matches none of the bundle's certificates/,
    ],
  ])("refuses %s, naming the source and never its contents", (_title, bytes, reason) => {
    const input = bytes();
    const error = (() => {
      try {
        parseCertificateBundle(input, "'aro-hcp-identity-status:firstPartyCertificateFile', file /x");
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(CertificateBundleError);
    expect(error?.message).toMatch(reason);
    expect(error?.message).toContain("firstPartyCertificateFile");
    expect(error?.message).not.toMatch(/BEGIN|MII/);
  });
});
