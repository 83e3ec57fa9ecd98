/**
 * Certificate bundles as the data plane and operators hand them over (resources/azure/certificateBundle.ts).
 * Every bundle is made at test time from a certificate the sandbox's CA issues: PEM (the chain and
 * its key), the sandbox data plane's PKCS#12 (no password), and, with the `openssl` CLI, archives
 * without a password in the layouts real services write (legacy SHA-1 MAC with RC2-40 and 3DES, as
 * the Managed Identities data plane and `openssl -legacy` write them; 3DES as Windows writes them;
 * OpenSSL 3's default PBES2/AES-256/SHA-256; no MAC; nothing encrypted) and one with a password.
 * node-forge reads archives with the hook's key derivation in place of its own, and its entry
 * points are its own again after every read.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { X509Certificate, generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import forge from "node-forge";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateBundleError, parseCertificateBundle } from "../../../resources/azure/certificateBundle";
import type { IssuedCertificate } from "../../../sandbox/certificateAuthority";
import { SandboxCertificateAuthority, encodePkcs12 } from "../../../sandbox/certificateAuthority";

const opensslAvailable = spawnSync("openssl", ["version"], { encoding: "utf8" }).status === 0;
let leaf: IssuedCertificate;
let caDer: Buffer;
let directory: string;

beforeAll(async () => {
  const authority = await SandboxCertificateAuthority.create("certificateBundle test CA");
  leaf = await authority.issue("certificateBundle test leaf");
  caDer = new X509Certificate(authority.certificatePem).raw;
  directory = mkdtempSync(join(tmpdir(), "certificate-bundle-"));
  writeFileSync(join(directory, "key.pem"), leaf.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(directory, "cert.pem"), leaf.certificatePem);
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

/** A PKCS#12 archive `openssl pkcs12 -export` writes for the leaf, with these extra arguments. */
function opensslArchive(...args: string[]): Buffer {
  const output = join(directory, `${args.join("").replace(/\W/g, "")}.p12`);
  execFileSync("openssl", ["pkcs12", "-export", "-inkey", join(directory, "key.pem"), "-in", join(directory, "cert.pem"), "-out", output, ...args]);
  return readFileSync(output);
}

function refusal(bytes: Buffer): Error | undefined {
  try {
    parseCertificateBundle(bytes, "'aro-hcp-identity-status:firstPartyCertificateFile', file /x");
  } catch (caught) {
    return caught as Error;
  }
  return undefined;
}

describe("parseCertificateBundle", () => {
  it.each([
    ["a PEM bundle (chain, then key)", () => Buffer.from(leaf.bundlePem)],
    ["the sandbox data plane's PKCS#12 without a password", () => encodePkcs12(leaf, [caDer])],
  ])("reads %s into PEM, key first, and the leaf's thumbprint", async (_title, bytes) => {
    const material = parseCertificateBundle(await bytes(), "bundle");
    expect(material.thumbprint).toBe(leaf.thumbprintSha256);
    expect(material.pem).toMatch(/^-----BEGIN PRIVATE KEY-----[\s\S]+-----BEGIN CERTIFICATE-----/);
    expect(material.validTo.getTime()).toBeGreaterThan(Date.now());
  });

  it.skipIf(!opensslAvailable).each([
    ["legacy, as the data plane and `openssl -legacy` write it (SHA-1 MAC, RC2-40 certificates, 3DES key)", ["-legacy"]],
    ["as Windows writes it (3DES certificates and key, SHA-1 MAC)", ["-certpbe", "PBE-SHA1-3DES", "-keypbe", "PBE-SHA1-3DES", "-macalg", "sha1"]],
    ["as OpenSSL 3 writes it by default (PBES2 with AES-256-CBC and PBKDF2-SHA256, SHA-256 MAC)", []],
    ["current algorithms with a SHA-1 MAC", ["-macalg", "sha1"]],
    ["without a MAC", ["-nomac"]],
    ["with nothing encrypted", ["-certpbe", "NONE", "-keypbe", "NONE"]],
  ])("reads a PKCS#12 archive without a password %s", (_title, args) => {
    const archive = opensslArchive(...args, "-passout", "pass:");
    expect(parseCertificateBundle(Buffer.from(archive.toString("base64"), "base64"), "client_secret").thumbprint).toBe(leaf.thumbprintSha256);
  });

  it("reads the data plane's archive with the hook's key derivation in place of forge's, and leaves forge's entry points as they were after a read and a refusal", async () => {
    const archive = await encodePkcs12(leaf, [caDer]);
    const pbe = (forge.pki as unknown as { pbe: Record<string, unknown> }).pbe;
    const entryPoints: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [pbe, "generatePkcs12Key"],
      [forge.pkcs12, "generateKey"],
      [forge.pki, "certificateFromAsn1"],
      [forge.pki, "privateKeyFromAsn1"],
    ];
    const forgeOwn = entryPoints.map(([owner, name]) => owner[name]);
    let forgeDerivations = 0;
    const counting = entryPoints.map(([, name], index) =>
      name.startsWith("generate")
        ? (...args: unknown[]): unknown => {
            forgeDerivations += 1;
            return (forgeOwn[index] as (...a: unknown[]) => unknown)(...args);
          }
        : forgeOwn[index],
    );
    entryPoints.forEach(([owner, name], index) => {
      owner[name] = counting[index];
    });
    try {
      expect(parseCertificateBundle(archive, "client_secret").thumbprint).toBe(leaf.thumbprintSha256);
      entryPoints.forEach(([owner, name], index) => expect(owner[name], name).toBe(counting[index]));
      const corrupted = Buffer.from(archive);
      corrupted[corrupted.length - 30] ^= 0xff;
      expect(refusal(corrupted)).toBeInstanceOf(CertificateBundleError);
      entryPoints.forEach(([owner, name], index) => expect(owner[name], name).toBe(counting[index]));
      expect(forgeDerivations).toBe(0);
    } finally {
      entryPoints.forEach(([owner, name], index) => {
        owner[name] = forgeOwn[index];
      });
    }
  });

  it.skipIf(!opensslAvailable)("refuses an archive with a password, naming the source and never its contents", () => {
    const error = refusal(opensslArchive("-passout", "pass:secret"));
    expect(error).toBeInstanceOf(CertificateBundleError);
    expect(error?.message).toMatch(/neither PEM nor a PKCS#12 archive without a password/);
  });

  it.each([
    ["a certificate without its key", () => Buffer.from(leaf.certificatePem), /no private key in the bundle/],
    ["bytes that are neither", () => Buffer.from("not a certificate"), /neither PEM nor a PKCS#12 archive/],
    [
      "a key that matches no certificate",
      () =>
        Buffer.from(
          `${generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString()}${leaf.certificatePem}`,
        ),
      /matches none of the bundle's certificates/,
    ],
  ])("refuses %s, naming the source and never its contents", (_title, bytes, reason) => {
    const error = refusal(bytes());
    expect(error).toBeInstanceOf(CertificateBundleError);
    expect(error?.message).toMatch(reason);
    expect(error?.message).toContain("firstPartyCertificateFile");
    expect(error?.message).not.toMatch(/BEGIN|MII/);
  });
});
