/**
 * Reads a certificate bundle: a chain and its private key, as PEM text (a bundle file) or as a
 * PKCS#12 archive without a password (what the Managed Identities data plane hands over), as
 * upstream's azidentity.ParseCertificates takes both. PKCS#12 is read with node-forge, loaded at the
 * first archive: Node has no PKCS#12 reader, and the archives' legacy algorithms (SHA-1 MAC, 3DES,
 * RC2-40) are off in Node's OpenSSL 3. Errors name the source and the problem, never its contents.
 */
import type { KeyObject } from "node:crypto";
import { X509Certificate, createHash, createPrivateKey } from "node:crypto";
import type * as Forge from "node-forge";
import { derivePkcs12Key, derivesWith } from "./pkcs12KeyDerivation";

/** A usable certificate credential, leaf certificate first. */
export interface CertificateCredentialMaterial {
  /** Key and chain as PEM, for ClientCertificateCredential. */
  readonly pem: string;
  /** The leaf's SHA-256 thumbprint (hex, upper case): tells two bundles apart without their keys. */
  readonly thumbprint: string;
  readonly privateKey: KeyObject;
  /** The chain as an assertion's `x5c` carries it: each DER in standard base64. */
  readonly x5c: readonly string[];
  /** The leaf's SHA-256 digest in standard base64 (an assertion's `x5t#S256`). */
  readonly x5tS256: string;
  readonly validFrom: Date;
  readonly validTo: Date;
}

export class CertificateBundleError extends Error {}
CertificateBundleError.prototype.name = "CertificateBundleError";

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** Reads a bundle; `source` names it in errors (a setting and its file, or the data plane answer). */
export function parseCertificateBundle(bytes: Uint8Array, source: string): CertificateCredentialMaterial {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blocks = buffer.toString("latin1").match(pemBlock);
  if (blocks !== null) {
    const certificates = blocks.filter((block) => block.startsWith("-----BEGIN CERTIFICATE-----"));
    const keys = blocks.filter((block) => /^-----BEGIN (RSA |EC |ENCRYPTED )?PRIVATE KEY-----/.test(block));
    if (keys.some((key) => key.startsWith("-----BEGIN ENCRYPTED"))) {
      throw new CertificateBundleError(`${source}: the private key is encrypted; expected a key without a password`);
    }
    return material(certificates, keys[0], source);
  }
  const fromArchive = readPkcs12(buffer, source);
  return material(fromArchive.certificates, fromArchive.key, source);
}

function material(certificates: ReadonlyArray<string | Buffer>, keyPem: string | Buffer | undefined, source: string): CertificateCredentialMaterial {
  if (certificates.length === 0 || keyPem === undefined) {
    const missing = certificates.length === 0 ? "certificate" : "private key";
    throw new CertificateBundleError(`${source}: no ${missing} in the bundle; expected a certificate chain and its private key`);
  }
  const key = orRefuse(
    () => (typeof keyPem === "string" ? createPrivateKey(keyPem) : createPrivateKey({ key: keyPem, format: "der", type: "pkcs8" })),
    `${source}: the private key cannot be read`,
  );
  const parsed = orRefuse(() => certificates.map((certificate) => new X509Certificate(certificate)), `${source}: a certificate cannot be read`);
  // The leaf is the certificate of this key, wherever the bundle put it; the rest is its chain.
  const leafIndex = parsed.findIndex((certificate) => certificate.checkPrivateKey(key));
  if (leafIndex < 0) {
    throw new CertificateBundleError(`${source}: the private key matches none of the bundle's certificates`);
  }
  const leaf = parsed[leafIndex];
  if (key.asymmetricKeyType !== "rsa") {
    throw new CertificateBundleError(`${source}: the key is ${String(key.asymmetricKeyType)}; Entra ID client certificate credentials need an RSA key`);
  }
  const chain = [leaf, ...parsed.filter((_, index) => index !== leafIndex)];
  // Written when first asked for: only a bundle file's credential needs it.
  let pem: string | undefined;
  return {
    get pem(): string {
      pem ??= [key.export({ format: "pem", type: "pkcs8" }).toString().trim(), ...chain.map((certificate) => certificate.toString().trim())].join("\n") + "\n";
      return pem;
    },
    thumbprint: leaf.fingerprint256.replace(/:/g, ""),
    privateKey: key,
    x5c: chain.map((certificate) => certificate.raw.toString("base64")),
    x5tS256: createHash("sha256").update(leaf.raw).digest("base64"),
    validFrom: new Date(leaf.validFrom),
    validTo: new Date(leaf.validTo),
  };
}

/**
 * The certificates and key of a PKCS#12 archive without a password, as DER. While forge reads, its
 * key derivation is {@link derivePkcs12Key} and its certificate and key parsers refuse, so forge keeps
 * each bag's ASN.1 for Node to parse; all are put back after (package.json pins forge for this).
 */
function readPkcs12(buffer: Buffer, source: string): { certificates: Buffer[]; key: Buffer | undefined } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first archive
  const forge = require("node-forge") as typeof Forge;
  const notAnArchive = `${source}: neither PEM nor a PKCS#12 archive without a password`;
  const asn1 = orRefuse(() => forge.asn1.fromDer(forge.util.createBuffer(buffer.toString("binary"))), notAnArchive);
  const open = (password: string | undefined): Forge.pkcs12.Pkcs12Pfx => withForgeStandIns(forge, () => forge.pkcs12.pkcs12FromAsn1(asn1, true, password));
  const archive = orRefuse(() => {
    // "No password" is written as an empty one by some tools and as none by others (the MAC differs).
    try {
      return open("");
    } catch {
      return open(undefined);
    }
  }, notAnArchive);
  const bags = (bagType: string): Forge.pkcs12.Bag[] => archive.getBags({ bagType })[bagType] ?? [];
  const der = (bag: Forge.pkcs12.Bag): Buffer[] => (bag.asn1 === undefined ? [] : [Buffer.from(forge.asn1.toDer(bag.asn1).getBytes(), "binary")]);
  const certificates = bags(forge.pki.oids.certBag).flatMap(der);
  const key = [...bags(forge.pki.oids.pkcs8ShroudedKeyBag), ...bags(forge.pki.oids.keyBag)].flatMap(der)[0];
  return { certificates, key };
}

/** `read()`, or a CertificateBundleError saying `problem` when it throws. */
function orRefuse<T>(read: () => T, problem: string): T {
  try {
    return read();
  } catch {
    throw new CertificateBundleError(problem);
  }
}

/** forge's PKCS#12 key derivation, as its PBE reader and its MAC check call it. */
type ForgeDerivation = typeof Forge.pkcs12.generateKey;

/** Runs `read` with readPkcs12's stand-ins in forge's entry points, restoring forge's own after. */
function withForgeStandIns<T>(forge: typeof Forge, read: () => T): T {
  const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: ForgeDerivation } }).pbe;
  const forgeDerivation = pbe.generatePkcs12Key;
  const derivation: ForgeDerivation = (password, salt, id, iterations, length, md) => {
    const digest = md?.algorithm ?? "sha1";
    if (!derivesWith(digest)) return forgeDerivation(password, salt, id, iterations, length, md);
    return forge.util.createBuffer(derivePkcs12Key(password, Buffer.from(salt.bytes(), "binary"), id, iterations, length, digest).toString("binary"));
  };
  const refuse = (): never => {
    throw new Error("left as ASN.1");
  };
  const slots: ReadonlyArray<readonly [Record<string, unknown>, string, unknown]> = [
    [pbe, "generatePkcs12Key", derivation],
    [forge.pkcs12, "generateKey", derivation],
    [forge.pki, "certificateFromAsn1", refuse],
    [forge.pki, "privateKeyFromAsn1", refuse],
  ];
  const originals = slots.map(([owner, name]) => owner[name]);
  for (const [owner, name, standIn] of slots) owner[name] = standIn;
  try {
    return read();
  } finally {
    slots.forEach(([owner, name], index) => {
      owner[name] = originals[index];
    });
  }
}
