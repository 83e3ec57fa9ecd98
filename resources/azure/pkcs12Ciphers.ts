/**
 * The two ciphers of a legacy PKCS#12 archive, as the Managed Identities data plane writes it
 * (pbeWithSHAAnd40BitRC2-CBC over the certificates, pbeWithSHAAnd3-KeyTripleDES-CBC over the
 * key), decrypted without node-forge's byte strings while forge reads the archive.
 *
 * forge's RC2 allocates a cipher state per block over byte strings, most of what reading one
 * archive costs the provider host in heap (docs/performance.md). Here the RC2
 * decryption (RFC 2268) runs on typed arrays over the whole ciphertext at once, and 3DES is Node's
 * own (`des-ede3-cbc`, in OpenSSL 3's default provider; RC2 is only in its legacy one, off in
 * Node). {@link withLeanPkcs12Ciphers} swaps forge's two decryption entry points for these for the
 * length of one synchronous call and puts them back after it, as pkcs12KeyDerivation.ts does for
 * the key derivation. The results are byte for byte forge's (the unit test decrypts with both);
 * a key of another length than the archive formats use goes to forge's own cipher.
 */
import { createDecipheriv } from "node:crypto";
import type * as Forge from "node-forge";
import { withReplaced } from "./forgeEntryPoints";

/** RFC 2268's PITABLE: a permutation of 0–255 from the digits of pi. */
const piTable = Buffer.from(
  "d978f9c419ddb5ed28e9fd794aa0d89dc67e37832b76538e624c6488448bfba2179a59f587b34f1361456d8d09817d32bd8f40eb86b77b0bf09521225c6b4e82" +
    "54d66593ce60b21c7356c014a78cf1dc1275ca1f3bbee4d1423dd430a33cb6266fbf0eda4669075727f21d9bbc944303f811c7f690ef3ee706c3d52fc8661ed7" +
    "08e8eade8052eef784aa72ac354d6a2a961ad2715a1549744b9fd05e0418a4ecc2e0416e0f51cbcc2491af50a1f47039997c3a8523b8b47afc02365b25559731" +
    "2d5dfa98e38a92ae05df2910676cbac9d300e6cfe19ea82c6316013f58e289a90d38341bab33ffb0bb480c5fb9b1cd2ec5f3db47e5a59c770aa62068fe7fc1ad",
  "hex",
);

/** RC2's 64 16-bit subkeys for `key` at `effectiveBits` (RFC 2268 section 2). */
export function rc2ExpandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  const l = new Uint8Array(128);
  l.set(key.subarray(0, 128));
  const t = Math.min(key.length, 128);
  for (let i = t; i < 128; i += 1) l[i] = piTable[((l[i - 1] ?? 0) + (l[i - t] ?? 0)) & 0xff] ?? 0;
  const t8 = Math.ceil(effectiveBits / 8);
  const tm = 0xff >> (8 * t8 - effectiveBits);
  l[128 - t8] = piTable[(l[128 - t8] ?? 0) & tm] ?? 0;
  for (let i = 127 - t8; i >= 0; i -= 1) l[i] = piTable[(l[i + 1] ?? 0) ^ (l[i + t8] ?? 0)] ?? 0;
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i += 1) k[i] = (l[2 * i] ?? 0) | ((l[2 * i + 1] ?? 0) << 8);
  return k;
}

/**
 * Decrypts one 8-byte block in place at `offset` (RFC 2268 section 4: five mixing rounds, a
 * mashing round, six mixing rounds, a mashing round, five mixing rounds, each undone in reverse).
 * On four local words: a block allocates nothing.
 */
export function rc2DecryptBlock(k: Uint16Array, block: Uint8Array, offset: number): void {
  let r0 = (block[offset] ?? 0) | ((block[offset + 1] ?? 0) << 8);
  let r1 = (block[offset + 2] ?? 0) | ((block[offset + 3] ?? 0) << 8);
  let r2 = (block[offset + 4] ?? 0) | ((block[offset + 5] ?? 0) << 8);
  let r3 = (block[offset + 6] ?? 0) | ((block[offset + 7] ?? 0) << 8);
  let j = 63;
  for (let round = 0; round < 16; round += 1) {
    // Undo one mixing round: words 3, 2, 1, 0, rotated right by 5, 3, 2, 1.
    r3 = (((r3 >>> 5) | (r3 << 11)) - (k[j] ?? 0) - (r2 & r1) - (~r2 & r0)) & 0xffff;
    r2 = (((r2 >>> 3) | (r2 << 13)) - (k[j - 1] ?? 0) - (r1 & r0) - (~r1 & r3)) & 0xffff;
    r1 = (((r1 >>> 2) | (r1 << 14)) - (k[j - 2] ?? 0) - (r0 & r3) - (~r0 & r2)) & 0xffff;
    r0 = (((r0 >>> 1) | (r0 << 15)) - (k[j - 3] ?? 0) - (r3 & r2) - (~r3 & r1)) & 0xffff;
    j -= 4;
    if (round === 4 || round === 10) {
      // Undo a mashing round.
      r3 = (r3 - (k[r2 & 63] ?? 0)) & 0xffff;
      r2 = (r2 - (k[r1 & 63] ?? 0)) & 0xffff;
      r1 = (r1 - (k[r0 & 63] ?? 0)) & 0xffff;
      r0 = (r0 - (k[r3 & 63] ?? 0)) & 0xffff;
    }
  }
  block[offset] = r0 & 0xff;
  block[offset + 1] = r0 >>> 8;
  block[offset + 2] = r1 & 0xff;
  block[offset + 3] = r1 >>> 8;
  block[offset + 4] = r2 & 0xff;
  block[offset + 5] = r2 >>> 8;
  block[offset + 6] = r3 & 0xff;
  block[offset + 7] = r3 >>> 8;
}

/** RC2-CBC decryption of whole blocks; the PKCS#7 padding is left on. */
export function rc2CbcDecrypt(key: Uint8Array, effectiveBits: number, iv: Uint8Array, ciphertext: Uint8Array): Buffer {
  const k = rc2ExpandKey(key, effectiveBits);
  const out = Buffer.from(ciphertext);
  // Block i is XORed with ciphertext block i - 1 (the IV for the first): decrypting from the last
  // block back, the ciphertext before each block is still in place.
  for (let offset = out.length - (out.length % 8) - 8; offset >= 0; offset -= 8) {
    rc2DecryptBlock(k, out, offset);
    for (let i = 0; i < 8; i += 1) out[offset + i] = (out[offset + i] ?? 0) ^ ((offset === 0 ? iv[i] : out[offset - 8 + i]) ?? 0);
  }
  return out;
}

/** The plaintext without its PKCS#7 padding, or undefined when the padding is not valid (a wrong key). */
function unpad(plain: Buffer, blockSize: number): Buffer | undefined {
  const pad = plain[plain.length - 1] ?? 0;
  if (plain.length === 0 || plain.length % blockSize !== 0 || pad < 1 || pad > blockSize) return undefined;
  for (let i = plain.length - pad; i < plain.length; i += 1) if (plain[i] !== pad) return undefined;
  return plain.subarray(0, plain.length - pad);
}

/** The bytes of a forge byte string or byte buffer (read without consuming it). */
function bytesOf(value: Forge.util.ByteStringBuffer | string): Buffer {
  return Buffer.from(typeof value === "string" ? value : value.bytes(), "binary");
}

/** The part of forge's cipher interface its PKCS#12 and PBE readers use. */
interface ForgeDecipher {
  start(iv?: Forge.util.ByteStringBuffer | string | null, output?: unknown): void;
  update(input: Forge.util.ByteStringBuffer): void;
  finish(): boolean;
  output: Forge.util.ByteStringBuffer;
}

/** A forge-shaped decipher that gathers the ciphertext and decrypts it at `finish`. */
function gatheringDecipher(forge: typeof Forge, initialIv: Buffer | undefined, decrypt: (iv: Buffer, ciphertext: Buffer) => Buffer | undefined): ForgeDecipher {
  let iv = initialIv;
  const chunks: Buffer[] = [];
  const decipher: ForgeDecipher = {
    output: forge.util.createBuffer(),
    start(startIv) {
      if (startIv !== undefined && startIv !== null) iv = bytesOf(startIv);
      chunks.length = 0;
      decipher.output = forge.util.createBuffer();
    },
    update(input) {
      chunks.push(bytesOf(input.getBytes()));
    },
    finish() {
      const plain = iv === undefined ? undefined : decrypt(iv, Buffer.concat(chunks));
      if (plain === undefined) return false;
      decipher.output = forge.util.createBuffer(plain.toString("binary"));
      return true;
    },
  };
  return decipher;
}

type Rc2Factory = (key: Forge.util.ByteStringBuffer | string, bits?: number) => ForgeDecipher;
type DesStart = (key: Forge.util.ByteStringBuffer | string, iv: Forge.util.ByteStringBuffer | string | null, output?: unknown, mode?: string) => ForgeDecipher;

/** Runs `read` (a forge PKCS#12 read) with the lean RC2 and 3DES decryptions in place of forge's. */
export function withLeanPkcs12Ciphers<T>(forge: typeof Forge, read: () => T): T {
  const rc2 = forge.rc2 as unknown as { createDecryptionCipher: Rc2Factory };
  // Untyped in @types/node-forge, present in the library.
  const des = (forge as unknown as { des: { startDecrypting: DesStart } }).des;
  const forgeDes = des.startDecrypting;
  const leanRc2: Rc2Factory = (key, bits = 128) => {
    const keyBytes = bytesOf(key);
    return gatheringDecipher(forge, undefined, (iv, ciphertext) => unpad(rc2CbcDecrypt(keyBytes, bits, iv, ciphertext), 8));
  };
  const leanDes: DesStart = (key, iv, output, mode) => {
    const keyBytes = bytesOf(key);
    if (keyBytes.length !== 24 || iv === null || (mode !== undefined && mode !== "CBC")) return forgeDes(key, iv, output, mode);
    return gatheringDecipher(forge, bytesOf(iv), (ivBytes, ciphertext) => {
      try {
        const decipher = createDecipheriv("des-ede3-cbc", keyBytes, ivBytes);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      } catch {
        return undefined;
      }
    });
  };
  return withReplaced(
    [
      [rc2, "createDecryptionCipher", leanRc2],
      [des, "startDecrypting", leanDes],
    ],
    read,
  );
}
