/**
 * The PKCS#12 key derivation (RFC 7292, appendix B.2), in place of node-forge's byte-string one while
 * forge reads an archive, and for the sandbox's archives: a block's first hash is Node's, the SHA-1
 * rehashes run on 32-bit words ({@link rehashSha1}).
 */
import { hash } from "node:crypto";

/** Digest (u) and block (v) lengths in bytes, by the name Node and forge use. */
const digests: Readonly<Record<string, { readonly u: number; readonly v: number } | undefined>> = {
  sha1: { u: 20, v: 64 },
  sha256: { u: 32, v: 64 },
  sha384: { u: 48, v: 128 },
  sha512: { u: 64, v: 128 },
};

/** Whether {@link derivePkcs12Key} derives with this digest. */
export function derivesWith(digest: string): boolean {
  return digests[digest] !== undefined;
}

/** `source` repeated to `length` bytes (the last copy truncated); empty for an empty source. */
function repeatTo(source: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let offset = 0; offset < length && source.length > 0; offset += source.length) source.copy(out, offset, 0, Math.min(source.length, length - offset));
  return out;
}

const h0Initial = 0x67452301;
const h1Initial = 0xefcdab89 | 0;
const h2Initial = 0x98badcfe | 0;
const h3Initial = 0x10325476;
const h4Initial = 0xc3d2e1f0 | 0;

/**
 * SHA-1 (FIPS 180-4) applied `rounds` times to a 20-byte digest, each message one block (digest,
 * 0x80 pad, 160-bit length), on 32-bit words: a native call per round costs more than the round,
 * and the four stages stay separate loops, as a branch per step would cost more again.
 */
export function rehashSha1(digest: Uint8Array, rounds: number): Buffer {
  const view = new DataView(digest.buffer, digest.byteOffset, digest.byteLength);
  const w = new Int32Array(80);
  let h0 = view.getInt32(0);
  let h1 = view.getInt32(4);
  let h2 = view.getInt32(8);
  let h3 = view.getInt32(12);
  let h4 = view.getInt32(16);
  for (let round = 0; round < rounds; round += 1) {
    w[0] = h0;
    w[1] = h1;
    w[2] = h2;
    w[3] = h3;
    w[4] = h4;
    w[5] = 0x80000000 | 0;
    w.fill(0, 6, 15);
    w[15] = 160;
    for (let t = 16; t < 80; t += 1) {
      const x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16];
      w[t] = (x << 1) | (x >>> 31);
    }
    let a = h0Initial;
    let b = h1Initial;
    let c = h2Initial;
    let d = h3Initial;
    let e = h4Initial;
    let t = 0;
    for (; t < 20; t += 1) {
      const next = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = next;
    }
    for (; t < 40; t += 1) {
      const next = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = next;
    }
    for (; t < 60; t += 1) {
      const next = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + (0x8f1bbcdc | 0) + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = next;
    }
    for (; t < 80; t += 1) {
      const next = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + (0xca62c1d6 | 0) + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = next;
    }
    h0 = (h0Initial + a) | 0;
    h1 = (h1Initial + b) | 0;
    h2 = (h2Initial + c) | 0;
    h3 = (h3Initial + d) | 0;
    h4 = (h4Initial + e) | 0;
  }
  const out = Buffer.alloc(20);
  out.writeInt32BE(h0, 0);
  out.writeInt32BE(h1, 4);
  out.writeInt32BE(h2, 8);
  out.writeInt32BE(h3, 12);
  out.writeInt32BE(h4, 16);
  return out;
}

/**
 * RFC 7292 B.2: `length` bytes of key material of purpose `id` (1 key, 2 IV, 3 MAC key) from a
 * password (BMPString with its two-byte terminator; none for null or undefined) and a salt.
 */
export function derivePkcs12Key(password: string | null | undefined, salt: Buffer, id: number, iterations: number, length: number, digest = "sha1"): Buffer {
  const known = digests[digest];
  if (known === undefined) throw new RangeError(`no PKCS#12 key derivation here for digest ${digest}`);
  if (!(iterations >= 1)) throw new RangeError("PKCS#12 key derivation needs at least one iteration");
  const { u, v } = known;
  const passwordBytes = password === null || password === undefined ? Buffer.alloc(0) : Buffer.from(`${password}\0`, "utf16le").swap16();
  const diversifier = Buffer.alloc(v, id);
  const input = Buffer.concat([repeatTo(salt, v * Math.ceil(salt.length / v)), repeatTo(passwordBytes, v * Math.ceil(passwordBytes.length / v))]);
  const blocks: Uint8Array[] = [];
  for (let produced = 0; produced < length; produced += u) {
    let digestValue: Buffer = hash(digest, Buffer.concat([diversifier, input]), "buffer");
    if (digest === "sha1") digestValue = rehashSha1(digestValue, iterations - 1);
    else for (let round = 1; round < iterations; round += 1) digestValue = hash(digest, digestValue, "buffer");
    blocks.push(digestValue);
    // I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block of I, B being the digest repeated to v bytes.
    const b = repeatTo(digestValue, v);
    for (let start = 0; start < input.length; start += v) {
      let carry = 1;
      for (let index = v - 1; index >= 0; index -= 1) {
        const sum = input[start + index] + b[index] + carry;
        input[start + index] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, length);
}
