import { generate } from "selfsigned";

/** A PEM-encoded certificate and the private key it was issued for. */
export interface SandboxCertificate {
  /** The self-signed certificate, PEM-encoded. Clients trust it as a CA (`https.Agent({ ca })`). */
  certificatePem: string;
  /** The PKCS#8 private key, PEM-encoded. Never written outside `.sandbox/`. */
  privateKeyPem: string;
}

const certificateLifetimeInMs = 7 * 24 * 60 * 60 * 1000;
const clockSkewAllowanceInMs = 5 * 60 * 1000;

/**
 * Generates a fresh self-signed certificate for one sandbox HTTPS server.
 *
 * The certificate is CA-capable (basicConstraints cA=true) so that Node accepts it as its own trust
 * anchor, and its subject alternative names cover `localhost` and `127.0.0.1`. The key is EC P-256,
 * signed with SHA-256. A new certificate is made at every start; nothing is cached on disk.
 *
 * @param commonName - The subject common name, used only to tell certificates apart.
 * @returns The certificate and private key as PEM strings.
 */
export async function createSandboxCertificate(commonName: string): Promise<SandboxCertificate> {
  const notBeforeDate = new Date(Date.now() - clockSkewAllowanceInMs);
  const result = await generate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + certificateLifetimeInMs),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  });
  return { certificatePem: result.cert, privateKeyPem: result.private };
}
