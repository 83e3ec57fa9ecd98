import { createCipheriv, createHash, createHmac, randomBytes, webcrypto, X509Certificate } from "node:crypto";
import { BasicConstraintsExtension, KeyUsageFlags, KeyUsagesExtension, X509CertificateGenerator } from "@peculiar/x509";
import forge from "node-forge";
import { derivePkcs12Key } from "../resources/azure/pkcs12KeyDerivation";

/** RSA with SHA-256 (PKCS #1 v1.5): how the sandbox CA signs, and the key type MSAL needs to sign assertions. */
const rsaAlgorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;

const clockSkewAllowanceInMs = 5 * 60 * 1000;
const caLifetimeInMs = 30 * 24 * 60 * 60 * 1000;

/** How many keys certificates issued with `sharedKey` share when the CA keeps no pool of its own. */
const sharedKeyPoolSize = 4;

/** The default lifetime of an issued leaf certificate: 90 days, like the data plane's credentials. */
export const defaultLeafLifetimeInMs = 90 * 24 * 60 * 60 * 1000;

// Node's Web Crypto, for the library whose types name the DOM's `Crypto` (not in this project's lib).
const x509Crypto: never = webcrypto as never;

type RsaKeyPair = webcrypto.CryptoKeyPair;

/** Object identifiers of PKCS #12 (RFC 7292) and PKCS #7 that the archive uses. */
const oids = {
  data: "1.2.840.113549.1.7.1",
  encryptedData: "1.2.840.113549.1.7.6",
  pkcs8ShroudedKeyBag: "1.2.840.113549.1.12.10.1.2",
  certBag: "1.2.840.113549.1.12.10.1.3",
  x509Certificate: "1.2.840.113549.1.9.22.1",
  localKeyId: "1.2.840.113549.1.9.21",
  pbeWithSha1And3KeyTripleDesCbc: "1.2.840.113549.1.12.1.3",
  pbeWithSha1And40BitRc2Cbc: "1.2.840.113549.1.12.1.6",
  sha1: "1.3.14.3.2.26",
} as const;

/** A leaf certificate the sandbox CA issued, with its private key. Holds a secret: never log it. */
export interface IssuedCertificate {
  /** Hex serial number, upper case, as Node's X509Certificate reports it. */
  serialNumber: string;
  subject: string;
  /** SHA-1 of the DER certificate, upper-case hex (what `x5t` encodes). */
  thumbprint: string;
  /** SHA-256 of the DER certificate, upper-case hex (what `x5t#S256` encodes). */
  thumbprintSha256: string;
  notBefore: Date;
  notAfter: Date;
  /** The leaf certificate, PEM. */
  certificatePem: string;
  /** The chain: the leaf, then the sandbox CA certificate. */
  chainPem: string;
  /** The PKCS #8 private key, PEM. */
  privateKeyPem: string;
  /** The chain followed by the private key: the bundle file form `ClientCertificateCredential` reads. */
  bundlePem: string;
  /** The leaf, DER. */
  certificateDer: Buffer;
  /** The private key, PKCS #8 DER. */
  privateKeyDer: Buffer;
}

/** Why a certificate presented to the sandbox Entra is refused. */
export type CertificateProblem = "notIssuedBySandbox" | "expired" | "notYetValid" | "revoked";

function pem(label: string, der: Uint8Array): string {
  const base64 = Buffer.from(der).toString("base64");
  return `-----BEGIN ${label}-----\n${base64.replace(/(.{64})/g, "$1\n").replace(/\n$/, "")}\n-----END ${label}-----\n`;
}

function normalizedSerial(serialNumber: string): string {
  return serialNumber.replace(/^0+(?=.)/, "").toUpperCase();
}

/** A positive random serial number of 16 bytes, hex. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x10;
  return bytes.toString("hex");
}

async function generateRsaKeys(): Promise<RsaKeyPair> {
  return webcrypto.subtle.generateKey(rsaAlgorithm, true, ["sign", "verify"]);
}

/**
 * The sandbox certificate authority for client credentials: an RSA CA that issues leaf certificates
 * to applications and managed identities, hands them out as PEM bundles or passwordless PKCS #12,
 * and keeps a revocation list. Only the sandbox Entra trusts it; it has nothing to do with the
 * TLS certificates of the sandbox servers (`certificate.ts`).
 */
export class SandboxCertificateAuthority {
  private readonly revoked = new Set<string>();
  /** Leaf keys made so far when {@link leafKeyPoolSize} is set; handed out in turn once it is full. */
  private readonly leafKeyPool: Array<Promise<RsaKeyPair>> = [];
  private leafKeysHandedOut = 0;

  private constructor(
    private readonly keys: RsaKeyPair,
    private readonly caCertificate: X509Certificate,
    private readonly caSubject: string,
    /** The CA certificate, PEM. */
    readonly certificatePem: string,
    /** 0: a fresh key for every leaf certificate; n: at most n keys, reused in turn. */
    private readonly leafKeyPoolSize: number,
  ) {}

  /**
   * Makes a new CA with a fresh RSA 2048 key, valid for 30 days from five minutes ago.
   *
   * @param commonName - The CA's subject common name.
   * @param options - `leafKeyPoolSize`: when above 0, leaf certificates share at most that many RSA
   *   keys (each certificate is still its own, with its own serial number and thumbprint). Making
   *   an RSA 2048 key is costly in CPU, so a benchmark of thousands of service managed identities
   *   would otherwise spend minutes making keys (docs/performance.md, "The benchmark's own
   *   choices"); nothing in the sandbox Entra tells certificates apart by key. Default 0.
   * @returns The CA.
   */
  static async create(commonName = "ARO-HCP sandbox client certificate CA", options: { leafKeyPoolSize?: number } = {}): Promise<SandboxCertificateAuthority> {
    const leafKeyPoolSize = options.leafKeyPoolSize ?? 0;
    if (!Number.isInteger(leafKeyPoolSize) || leafKeyPoolSize < 0) throw new RangeError("leafKeyPoolSize must be a non-negative integer");
    const keys = await generateRsaKeys();
    const notBefore = new Date(Date.now() - clockSkewAllowanceInMs);
    const certificate = await X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: randomSerial(),
        name: `CN=${commonName}`,
        notBefore,
        notAfter: new Date(notBefore.getTime() + caLifetimeInMs),
        keys,
        signingAlgorithm: rsaAlgorithm,
        extensions: [new BasicConstraintsExtension(true, 0, true), new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true)],
      },
      x509Crypto,
    );
    const certificatePem = pem("CERTIFICATE", new Uint8Array(certificate.rawData));
    return new SandboxCertificateAuthority(keys, new X509Certificate(certificatePem), certificate.subject, certificatePem, leafKeyPoolSize);
  }

  /**
   * A fresh key, or the pool's next one (see `leafKeyPoolSize` of {@link SandboxCertificateAuthority.create}).
   *
   * @param shared - Draw from the pool even when `leafKeyPoolSize` is 0 (a pool of {@link sharedKeyPoolSize} then).
   */
  private leafKeys(shared: boolean): Promise<RsaKeyPair> {
    const poolSize = this.leafKeyPoolSize > 0 ? this.leafKeyPoolSize : shared ? sharedKeyPoolSize : 0;
    if (poolSize === 0) return generateRsaKeys();
    const index = this.leafKeysHandedOut % poolSize;
    this.leafKeysHandedOut += 1;
    if (index >= this.leafKeyPool.length) {
      this.leafKeyPool.push(generateRsaKeys());
    }
    return this.leafKeyPool[index];
  }

  /**
   * Issues a leaf certificate with a fresh RSA 2048 key (client authentication, digital signature).
   *
   * @param subject - The subject common name (e.g. the client ID).
   * @param options - `lifetimeInMs` (default 90 days), `notBefore` (default five minutes ago), and
   *   `sharedKey`: take the key from the pool even when the CA makes a fresh key for each leaf (the
   *   data plane's certificates of identities other than a cluster's SMI, issued in numbers).
   * @returns The certificate, its chain and its private key.
   */
  async issue(subject: string, options: { lifetimeInMs?: number; notBefore?: Date; sharedKey?: boolean } = {}): Promise<IssuedCertificate> {
    const leafKeys = await this.leafKeys(options.sharedKey === true);
    const notBefore = options.notBefore ?? new Date(Date.now() - clockSkewAllowanceInMs);
    const notAfter = new Date(notBefore.getTime() + (options.lifetimeInMs ?? defaultLeafLifetimeInMs));
    const generated = await X509CertificateGenerator.create(
      {
        serialNumber: randomSerial(),
        subject: `CN=${subject}`,
        issuer: this.caSubject,
        notBefore,
        notAfter,
        signingKey: this.keys.privateKey,
        publicKey: leafKeys.publicKey,
        signingAlgorithm: rsaAlgorithm,
        extensions: [new BasicConstraintsExtension(false, undefined, true), new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true)],
      },
      x509Crypto,
    );
    const certificateDer = Buffer.from(generated.rawData);
    const privateKeyDer = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", leafKeys.privateKey));
    const certificatePem = pem("CERTIFICATE", certificateDer);
    const privateKeyPem = pem("PRIVATE KEY", privateKeyDer);
    const chainPem = `${certificatePem}${this.certificatePem}`;
    const parsed = new X509Certificate(certificateDer);
    return {
      serialNumber: normalizedSerial(parsed.serialNumber),
      subject,
      thumbprint: createHash("sha1").update(certificateDer).digest("hex").toUpperCase(),
      thumbprintSha256: createHash("sha256").update(certificateDer).digest("hex").toUpperCase(),
      notBefore,
      notAfter,
      certificatePem,
      chainPem,
      privateKeyPem,
      bundlePem: `${chainPem}${privateKeyPem}`,
      certificateDer,
      privateKeyDer,
    };
  }

  /**
   * Revokes a certificate: the sandbox Entra refuses it from now on.
   *
   * @param serialNumber - The certificate's serial number (hex, any case).
   */
  revoke(serialNumber: string): void {
    this.revoked.add(normalizedSerial(serialNumber));
  }

  /**
   * @param serialNumber - A serial number (hex, any case).
   * @returns Whether it was revoked.
   */
  isRevoked(serialNumber: string): boolean {
    return this.revoked.has(normalizedSerial(serialNumber));
  }

  /**
   * Checks a presented leaf certificate: signed by this CA, inside its validity, not revoked.
   *
   * @param certificate - The leaf certificate.
   * @param now - The time to check validity at.
   * @returns The problem, or undefined when the certificate is good.
   */
  check(certificate: X509Certificate, now: Date = new Date()): CertificateProblem | undefined {
    if (!certificate.checkIssued(this.caCertificate) || !certificate.verify(this.caCertificate.publicKey)) {
      return "notIssuedBySandbox";
    }
    if (new Date(certificate.validTo).getTime() <= now.getTime()) {
      return "expired";
    }
    if (new Date(certificate.validFrom).getTime() > now.getTime()) {
      return "notYetValid";
    }
    return this.isRevoked(certificate.serialNumber) ? "revoked" : undefined;
  }
}

/**
 * Iterations of the PKCS #12 key derivation for the MAC and both encryptions, as Windows and OpenSSL
 * write them. The derivation is the hook's own (`derivePkcs12Key`, the empty password as "": its
 * BMPString is the two-byte terminator alone), checked against RFC 7292's published known answers;
 * {@link decodePkcs12} reads the archives back with node-forge's derivation, and Go's pkcs12 reads
 * them in the conformance suite.
 */
const pkcs12Iterations = 2048;

const asn1 = forge.asn1;
type Asn1 = forge.asn1.Asn1;

function binary(buffer: Buffer): string {
  return buffer.toString("binary");
}

function derOf(node: Asn1): Buffer {
  return Buffer.from(asn1.toDer(node).getBytes(), "binary");
}

function sequence(...children: Asn1[]): Asn1 {
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, children);
}

function oid(value: string): Asn1 {
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(value).getBytes());
}

function octets(value: Buffer): Asn1 {
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, binary(value));
}

function integer(value: number): Asn1 {
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, asn1.integerToDer(value).getBytes());
}

function explicit(tag: number, child: Asn1): Asn1 {
  return asn1.create(asn1.Class.CONTEXT_SPECIFIC, tag, true, [child]);
}

/** A PKCS #12 password-based encryption: the algorithm identifier and the ciphertext. */
function pbeEncrypt(algorithm: "rc2-40" | "3des", plaintext: Buffer): { algorithmIdentifier: Asn1; ciphertext: Buffer } {
  const salt = randomBytes(8);
  const parameters = sequence(octets(salt), integer(pkcs12Iterations));
  let ciphertext: Buffer;
  if (algorithm === "3des") {
    const key = derivePkcs12Key("", salt, 1, pkcs12Iterations, 24);
    const iv = derivePkcs12Key("", salt, 2, pkcs12Iterations, 8);
    const cipher = createCipheriv("des-ede3-cbc", key, iv);
    ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  } else {
    // RC2 is outside OpenSSL 3's default provider, so Node has none: node-forge's implementation.
    const key = derivePkcs12Key("", salt, 1, pkcs12Iterations, 5);
    const iv = derivePkcs12Key("", salt, 2, pkcs12Iterations, 8);
    const cipher = forge.rc2.createEncryptionCipher(binary(key), 40);
    cipher.start(binary(iv));
    cipher.update(forge.util.createBuffer(binary(plaintext)));
    cipher.finish();
    ciphertext = Buffer.from(cipher.output.getBytes(), "binary");
  }
  const algorithmOid = algorithm === "3des" ? oids.pbeWithSha1And3KeyTripleDesCbc : oids.pbeWithSha1And40BitRc2Cbc;
  return { algorithmIdentifier: sequence(oid(algorithmOid), parameters), ciphertext };
}

function localKeyIdAttribute(keyId: Buffer): Asn1 {
  return sequence(oid(oids.localKeyId), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, [octets(keyId)]));
}

function safeBag(bagId: string, value: Asn1, keyId: Buffer | undefined): Asn1 {
  const attributes = keyId === undefined ? [] : [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, [localKeyIdAttribute(keyId)])];
  return sequence(oid(bagId), explicit(0, value), ...attributes);
}

/**
 * Encodes a certificate chain and its private key as a PKCS #12 archive without a password, laid
 * out as the Managed Identities data plane, Windows and `openssl pkcs12 -export -legacy` write it:
 * an authenticated safe of exactly two items, the certificates (leaf first) in an EncryptedData
 * under pbeWithSHAAnd40BitRC2-CBC, and the private key in a PKCS #8 shrouded key bag under
 * pbeWithSHAAnd3-KeyTripleDES-CBC in a Data item; the leaf and the key tied by `localKeyId`;
 * integrity by HMAC-SHA-1; every key derived from the empty password with 2048 iterations. Go's
 * golang.org/x/crypto/pkcs12 (azidentity.ParseCertificates) reads exactly this layout.
 *
 * @param certificate - The issued certificate.
 * @param chainDer - The certificates to add after the leaf (the CA), DER.
 * @returns The archive, DER.
 */
export function encodePkcs12(certificate: IssuedCertificate, chainDer: readonly Buffer[]): Promise<Buffer> {
  return Promise.resolve(pkcs12Archive(certificate, chainDer));
}

function pkcs12Archive(certificate: IssuedCertificate, chainDer: readonly Buffer[]): Buffer {
  const keyId = Buffer.from(certificate.thumbprint, "hex");
  const certificateBags = [certificate.certificateDer, ...chainDer].map((der, index) =>
    safeBag(oids.certBag, sequence(oid(oids.x509Certificate), explicit(0, octets(der))), index === 0 ? keyId : undefined),
  );
  const certificates = pbeEncrypt("rc2-40", derOf(sequence(...certificateBags)));
  const certificatesItem = sequence(
    oid(oids.encryptedData),
    explicit(
      0,
      sequence(
        integer(0),
        sequence(oid(oids.data), certificates.algorithmIdentifier, asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, binary(certificates.ciphertext))),
      ),
    ),
  );
  const key = pbeEncrypt("3des", certificate.privateKeyDer);
  const shroudedKey = sequence(key.algorithmIdentifier, octets(key.ciphertext));
  const keyItem = sequence(oid(oids.data), explicit(0, octets(derOf(sequence(safeBag(oids.pkcs8ShroudedKeyBag, shroudedKey, keyId))))));
  const authenticatedSafe = derOf(sequence(certificatesItem, keyItem));
  const macSalt = randomBytes(8);
  const mac = createHmac("sha1", derivePkcs12Key("", macSalt, 3, pkcs12Iterations, 20))
    .update(authenticatedSafe)
    .digest();
  const macData = sequence(
    sequence(sequence(oid(oids.sha1), asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, "")), octets(mac)),
    octets(macSalt),
    integer(pkcs12Iterations),
  );
  return derOf(sequence(integer(3), sequence(oid(oids.data), explicit(0, octets(authenticatedSafe))), macData));
}

/** What {@link decodePkcs12} finds in an archive. */
export interface DecodedPkcs12 {
  /** Every certificate, PEM, in archive order (leaf first when written by {@link encodePkcs12}). */
  certificatesPem: string[];
  /** The private key, PKCS #8 PEM. */
  privateKeyPem: string;
}

/**
 * Reads a PKCS #12 archive without a password (the form {@link encodePkcs12} writes, and others),
 * checking its MAC. For tests, which turn the data plane's `client_secret` back into a PEM bundle.
 *
 * @param archive - The DER bytes.
 * @returns The certificates and the private key.
 * @throws Error when the MAC does not verify or no key is found.
 */
export function decodePkcs12(archive: Buffer): Promise<DecodedPkcs12> {
  try {
    return Promise.resolve(readPkcs12(archive));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function readPkcs12(archive: Buffer): DecodedPkcs12 {
  const pfx = forge.pkcs12.pkcs12FromAsn1(asn1.fromDer(forge.util.createBuffer(binary(archive))), true, "");
  const certificatesPem = (pfx.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? []).flatMap((bag) =>
    bag.cert === undefined ? [] : [forge.pki.certificateToPem(bag.cert).replace(/\r\n/g, "\n")],
  );
  let privateKeyPem: string | undefined;
  for (const bagType of [forge.pki.oids.pkcs8ShroudedKeyBag, forge.pki.oids.keyBag]) {
    for (const bag of pfx.getBags({ bagType })[bagType] ?? []) {
      if (privateKeyPem === undefined && bag.key !== undefined) {
        const info = forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(bag.key));
        privateKeyPem = forge.pki.privateKeyInfoToPem(info).replace(/\r\n/g, "\n");
      }
    }
  }
  if (privateKeyPem === undefined) throw new Error("PKCS #12 archive without a private key");
  return { certificatesPem, privateKeyPem };
}
