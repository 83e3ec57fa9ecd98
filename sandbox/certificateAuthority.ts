import { createHash, randomBytes, webcrypto, X509Certificate } from "node:crypto";
import { BasicConstraintsExtension, KeyUsageFlags, KeyUsagesExtension, X509CertificateGenerator } from "@peculiar/x509";
import { OctetString } from "asn1js";
import { Attribute, AuthenticatedSafe, CertBag, Certificate, CryptoEngine, PFX, PrivateKeyInfo, SafeBag, SafeContents } from "pkijs";

/** RSA with SHA-256 (PKCS #1 v1.5): how the sandbox CA signs, and the key type MSAL needs to sign assertions. */
const rsaAlgorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;

const clockSkewAllowanceInMs = 5 * 60 * 1000;
const caLifetimeInMs = 30 * 24 * 60 * 60 * 1000;

/** The default lifetime of an issued leaf certificate: 90 days, like the data plane's credentials. */
export const defaultLeafLifetimeInMs = 90 * 24 * 60 * 60 * 1000;

// Node's Web Crypto, for the libraries whose types name the DOM's `Crypto` (not in this project's lib).
const pkcs12Engine = new CryptoEngine({ name: "node", crypto: webcrypto as never });
const x509Crypto: never = webcrypto as never;

type RsaKeyPair = webcrypto.CryptoKeyPair;

/** PKCS #12 object identifiers (RFC 7292). */
const keyBagId = "1.2.840.113549.1.12.10.1.1";
const certBagId = "1.2.840.113549.1.12.10.1.3";
const x509CertificateId = "1.2.840.113549.1.9.22.1";
const localKeyIdAttribute = "1.2.840.113549.1.9.21";

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
   *   keys (each certificate is still its own, with its own serial number and thumbprint). An RSA
   *   2048 key takes about 120 ms of CPU to make, so a benchmark of thousands of service managed
   *   identities would otherwise spend minutes making keys; nothing in the sandbox Entra tells
   *   certificates apart by key. Default 0.
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

  /** A fresh key, or the pool's next one (see `leafKeyPoolSize` of {@link SandboxCertificateAuthority.create}). */
  private leafKeys(): Promise<RsaKeyPair> {
    if (this.leafKeyPoolSize === 0) return generateRsaKeys();
    const index = this.leafKeysHandedOut % this.leafKeyPoolSize;
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
   * @param options - `lifetimeInMs` (default 90 days) and `notBefore` (default five minutes ago).
   * @returns The certificate, its chain and its private key.
   */
  async issue(subject: string, options: { lifetimeInMs?: number; notBefore?: Date } = {}): Promise<IssuedCertificate> {
    const leafKeys = await this.leafKeys();
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
 * Encodes a certificate chain and its private key as a PKCS #12 archive without a password: one
 * unencrypted SafeContents holding a certificate bag per certificate (leaf first) and a key bag, the
 * leaf and the key tied by a `localKeyId` attribute, integrity by HMAC-SHA-1 with the empty
 * password (the MAC upstream's parser handles). OpenSSL reads it with `-passin pass:`.
 *
 * @param certificate - The issued certificate.
 * @param chainDer - The certificates to add after the leaf (the CA), DER.
 * @returns The archive, DER.
 */
export async function encodePkcs12(certificate: IssuedCertificate, chainDer: readonly Buffer[]): Promise<Buffer> {
  const localKeyId = (): Attribute =>
    new Attribute({ type: localKeyIdAttribute, values: [new OctetString({ valueHex: new Uint8Array(Buffer.from(certificate.thumbprint, "hex")) })] });
  const certificateBag = (der: Buffer, withKeyId: boolean): SafeBag =>
    new SafeBag({
      bagId: certBagId,
      bagValue: new CertBag({ certId: x509CertificateId, parsedValue: Certificate.fromBER(new Uint8Array(der)) }),
      ...(withKeyId ? { bagAttributes: [localKeyId()] } : {}),
    });
  const bags = [
    certificateBag(certificate.certificateDer, true),
    ...chainDer.map((der) => certificateBag(der, false)),
    new SafeBag({ bagId: keyBagId, bagValue: PrivateKeyInfo.fromBER(new Uint8Array(certificate.privateKeyDer)), bagAttributes: [localKeyId()] }),
  ];
  const pfx = new PFX({
    parsedValue: {
      integrityMode: 0,
      authenticatedSafe: new AuthenticatedSafe({ parsedValue: { safeContents: [{ privacyMode: 0, value: new SafeContents({ safeBags: bags }) }] } }),
    },
  });
  await pfx.parsedValue?.authenticatedSafe?.makeInternalValues({ safeContents: [{}] }, pkcs12Engine);
  await pfx.makeInternalValues({ password: new ArrayBuffer(0), iterations: 2048, pbkdf2HashAlgorithm: "SHA-1", hmacHashAlgorithm: "SHA-1" }, pkcs12Engine);
  return Buffer.from(pfx.toSchema().toBER(false));
}

/** What {@link decodePkcs12} finds in an archive. */
export interface DecodedPkcs12 {
  /** Every certificate, PEM, in archive order (leaf first when written by {@link encodePkcs12}). */
  certificatesPem: string[];
  /** The private key, PKCS #8 PEM. */
  privateKeyPem: string;
}

/**
 * Reads a passwordless PKCS #12 archive with unencrypted bags (the form {@link encodePkcs12} writes),
 * checking its MAC. For tests, which turn the data plane's `client_secret` back into a PEM bundle.
 *
 * @param archive - The DER bytes.
 * @returns The certificates and the private key.
 * @throws Error when the MAC does not verify or no key is found.
 */
export async function decodePkcs12(archive: Buffer): Promise<DecodedPkcs12> {
  const pfx = PFX.fromBER(new Uint8Array(archive));
  await pfx.parseInternalValues({ checkIntegrity: true, password: new ArrayBuffer(0) }, pkcs12Engine);
  const authenticatedSafe = pfx.parsedValue?.authenticatedSafe;
  if (authenticatedSafe === undefined) throw new Error("PKCS #12 archive without an authenticated safe");
  await authenticatedSafe.parseInternalValues({ safeContents: authenticatedSafe.safeContents.map(() => ({})) }, pkcs12Engine);
  const certificatesPem: string[] = [];
  let privateKeyPem: string | undefined;
  const parsedSafe = authenticatedSafe.parsedValue as { safeContents?: Array<{ value: SafeContents }> } | undefined;
  for (const contents of parsedSafe?.safeContents ?? []) {
    for (const bag of contents.value.safeBags) {
      if (bag.bagId === certBagId) {
        const certificate = (bag.bagValue as CertBag).parsedValue as Certificate;
        certificatesPem.push(pem("CERTIFICATE", new Uint8Array(certificate.toSchema().toBER(false))));
      } else if (bag.bagId === keyBagId) {
        privateKeyPem = pem("PRIVATE KEY", new Uint8Array((bag.bagValue as PrivateKeyInfo).toSchema().toBER(false)));
      }
    }
  }
  if (privateKeyPem === undefined) throw new Error("PKCS #12 archive without a private key");
  return { certificatesPem, privateKeyPem };
}
