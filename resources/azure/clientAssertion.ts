/**
 * The client assertion a certificate credential signs for each token request (RFC 7523), written
 * as upstream's client writes it (MSAL for Go, under azidentity's ClientCertificateCredential with
 * `SendCertificateChain`): a PS256 JWT whose header carries `alg`, `typ`, the leaf's SHA-256
 * thumbprint (`x5t#S256`, standard base64) and the chain (`x5c`), and whose claims are `aud` (the
 * tenant's token endpoint), `exp` (ten minutes on), `iss` and `sub` (the client ID), `jti` (a random
 * UUID) and `nbf` (now). Go's JSON encoder writes a map's keys sorted; so does this.
 *
 * Signed with node:crypto and the key parsed once per bundle (certificateBundle.ts): no JWT library
 * and no key parse per request.
 */
import { randomUUID, sign, constants } from "node:crypto";
import type { CertificateCredentialMaterial } from "./certificateBundle";

/** How long an assertion is valid, as MSAL for Go signs it. */
export const assertionLifetimeInSeconds = 600;

/** What an assertion is signed for. */
export interface ClientAssertionRequest {
  readonly clientId: string;
  /** The token endpoint the assertion is sent to (its audience). */
  readonly tokenEndpoint: string;
  readonly material: Pick<CertificateCredentialMaterial, "privateKey" | "x5c" | "x5tS256">;
  /** Seconds since the epoch; injected by tests. */
  readonly nowInSeconds?: number;
  /** The `jti`; injected by tests. */
  readonly jwtId?: string;
}

/** The signed assertion, `header.claims.signature` in base64url. */
export function signClientAssertion(request: ClientAssertionRequest): string {
  const now = request.nowInSeconds ?? Math.floor(Date.now() / 1000);
  // Keys in sorted order, as Go's encoding/json writes a map.
  const header = { alg: "PS256", typ: "JWT", x5c: request.material.x5c, "x5t#S256": request.material.x5tS256 };
  const claims = {
    aud: request.tokenEndpoint,
    exp: now + assertionLifetimeInSeconds,
    iss: request.clientId,
    jti: request.jwtId ?? randomUUID(),
    nbf: now,
    sub: request.clientId,
  };
  const signingInput = `${base64Url(JSON.stringify(header))}.${base64Url(JSON.stringify(claims))}`;
  const signature = sign("sha256", Buffer.from(signingInput), {
    key: request.material.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    // The salt as long as the digest, as Go's rsa.PSSSaltLengthEqualsHash (the JWT PS256 profile).
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return `${signingInput}.${signature.toString("base64url")}`;
}

function base64Url(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}
