/**
 * Certificate credentials as the hook receives them: a bundle holding a certificate chain and its
 * private key, either PEM text (a first-party or fixed-identity bundle file, or what upstream's
 * non-production stand-in hands over) or a PKCS#12 archive without a password (what the Managed
 * Identities data plane hands over, base64 in `client_secret`). Upstream's Go parser
 * (azidentity.ParseCertificates) takes both; so does this one, and it returns the PEM form that
 * `@azure/identity`'s ClientCertificateCredential takes.
 *
 * PKCS#12 is read with node-forge (`pkcs12FromAsn1`), loaded at the first archive: Node's crypto
 * has no PKCS#12 reader, and the data plane's archives use the legacy algorithms (SHA-1 MAC, 3DES
 * and RC2-40 PBE) that Go's parser supports and OpenSSL 3 keeps in its legacy provider, off in
 * Node. forge decrypts with its own ciphers; two of its entry points have stand-ins for the length
 * of a read (see readPkcs12), which is why package.json pins node-forge to one version.
 *
 * Errors never carry the bundle's bytes or the key: {@link CertificateBundleError} names the
 * source and what is wrong with it.
 */
import type { KeyObject } from "node:crypto";
import { X509Certificate, createHash, createPrivateKey } from "node:crypto";
import type * as Forge from "node-forge";
import { derivePkcs12Key, derivesWith } from "./pkcs12KeyDerivation";

/** A usable certificate credential: PEM, leaf certificate first. */
export interface CertificateCredentialMaterial {
  /** The private key and the certificate chain (leaf first), PEM, as ClientCertificateCredential takes them. */
  readonly pem: string;
  /** SHA-256 thumbprint of the leaf certificate (hex, upper case): tells two bundles apart without their keys. */
  readonly thumbprint: string;
  /** The private key, parsed once (a client assertion is signed with it: clientAssertion.ts). */
  readonly privateKey: KeyObject;
  /** The chain as a client assertion's `x5c` carries it: each certificate's DER in standard base64, leaf first. */
  readonly x5c: readonly string[];
  /** The leaf certificate's SHA-256 digest in standard base64 (an assertion's `x5t#S256`, as upstream's MSAL writes it). */
  readonly x5tS256: string;
  /** The leaf certificate's validity. */
  readonly validFrom: Date;
  readonly validTo: Date;
}

/** Raised for a bundle that cannot be used; the message names its source and the problem, never its contents. */
export class CertificateBundleError extends Error {}
CertificateBundleError.prototype.name = "CertificateBundleError";

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * Reads a bundle. `source` names it in errors (a setting and its file, or the data plane answer).
 * @throws CertificateBundleError when it holds no certificate, no key, a key that does not match
 * the leaf certificate, or is neither PEM nor a PKCS#12 archive without a password.
 */
export function parseCertificateBundle(bytes: Uint8Array, source: string): CertificateCredentialMaterial {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buffer.toString("latin1");
  const blocks = text.match(pemBlock);
  if (blocks !== null && blocks.length > 0) {
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
  if (certificates.length === 0) {
    throw new CertificateBundleError(`${source}: no certificate in the bundle; expected a certificate chain and its private key`);
  }
  if (keyPem === undefined) {
    throw new CertificateBundleError(`${source}: no private key in the bundle; expected a certificate chain and its private key`);
  }
  let key: ReturnType<typeof createPrivateKey>;
  let parsed: X509Certificate[];
  try {
    key = typeof keyPem === "string" ? createPrivateKey(keyPem) : createPrivateKey({ key: keyPem, format: "der", type: "pkcs8" });
  } catch {
    throw new CertificateBundleError(`${source}: the private key cannot be read`);
  }
  try {
    parsed = certificates.map((certificate) => new X509Certificate(certificate));
  } catch {
    throw new CertificateBundleError(`${source}: a certificate cannot be read`);
  }
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
  // Written when first asked for (a bundle file's credential, ClientCertificateCredential): an SMI's never is.
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
 * The certificates and the key of a PKCS#12 archive without a password, as DER, read by forge with
 * two stand-ins during the read (forge's internal entry points, put back after it whatever the
 * read does, so no other caller of forge in the process sees them):
 * - forge's PKCS#12 key derivation is {@link derivePkcs12Key}: forge's own is most of the CPU and
 *   the garbage of a read (pkcs12KeyDerivation.ts says why);
 * - forge's certificate and private key parsers refuse, so that forge keeps each bag's ASN.1 (its
 *   documented behaviour for a certificate or key type it does not know), which is written back to
 *   DER for Node to parse once: forge would otherwise build its own certificate objects and an RSA
 *   key of big integers, only for them to be written out again for Node.
 */
function readPkcs12(buffer: Buffer, source: string): { certificates: Buffer[]; key: Buffer | undefined } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded at the first archive, see the module comment
  const forge = require("node-forge") as typeof Forge;
  let archive: Forge.pkcs12.Pkcs12Pfx | undefined;
  try {
    const asn1 = forge.asn1.fromDer(forge.util.createBuffer(buffer.toString("binary")));
    for (const password of passwordCandidates) {
      try {
        archive = withForgeStandIns(forge, () => forge.pkcs12.pkcs12FromAsn1(asn1, true, password));
        break;
      } catch {
        // a wrong MAC for this spelling of "no password": try the next one
      }
    }
  } catch {
    // not DER at all
  }
  if (archive === undefined) {
    throw new CertificateBundleError(`${source}: neither PEM nor a PKCS#12 archive without a password`);
  }
  const der = (bag: Forge.pkcs12.Bag): Buffer | undefined =>
    bag.asn1 === undefined ? undefined : Buffer.from(forge.asn1.toDer(bag.asn1).getBytes(), "binary");
  const certificates: Buffer[] = [];
  let key: Buffer | undefined;
  for (const bag of archive.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? []) {
    const certificate = der(bag);
    if (certificate !== undefined) certificates.push(certificate);
  }
  for (const bagType of [forge.pki.oids.pkcs8ShroudedKeyBag, forge.pki.oids.keyBag]) {
    for (const bag of archive.getBags({ bagType })[bagType] ?? []) key ??= der(bag);
  }
  return { certificates, key };
}

/** forge's PKCS#12 key derivation, as its PBE reader and its MAC check call it. */
type ForgeDerivation = (
  password: string | null | undefined,
  salt: Forge.util.ByteStringBuffer,
  id: number,
  iterations: number,
  length: number,
  md?: Forge.md.MessageDigest,
) => Forge.util.ByteStringBuffer;

/** Runs `read` with readPkcs12's stand-ins in place of forge's entry points, restoring forge's own afterwards. */
function withForgeStandIns<T>(forge: typeof Forge, read: () => T): T {
  const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: ForgeDerivation } }).pbe;
  const pkcs12 = forge.pkcs12 as unknown as { generateKey: ForgeDerivation };
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
    [pkcs12, "generateKey", derivation],
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

/** "No password" is written as an empty one by some tools and as none by others (the MAC differs). */
const passwordCandidates: readonly (string | undefined)[] = ["", undefined];
