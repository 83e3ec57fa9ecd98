/**
 * The lean RC2 and 3DES decryptions of a PKCS#12 read (resources/azure/pkcs12Ciphers.ts): RFC 2268's
 * own test vectors, and byte-for-byte agreement with node-forge's ciphers, which encrypt here.
 */
import { randomBytes } from "node:crypto";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { rc2CbcDecrypt, rc2DecryptBlock, rc2ExpandKey, withLeanPkcs12Ciphers } from "../../../resources/azure/pkcs12Ciphers";

describe("RC2 decryption", () => {
  it.each([
    // RFC 2268 section 5: key, effective key bits, plaintext, ciphertext.
    ["0000000000000000", 63, "0000000000000000", "ebb773f993278eff"],
    ["ffffffffffffffff", 64, "ffffffffffffffff", "278b27e42e2f0d49"],
    ["3000000000000000", 64, "1000000000000001", "30649edf9be7d2c2"],
    ["88", 64, "0000000000000000", "61a8a244adacccf0"],
    ["88bca90e90875a", 64, "0000000000000000", "6ccf4308974c267f"],
    ["88bca90e90875a7f0f79c384627bafb2", 64, "0000000000000000", "1a807d272bbe5db1"],
    ["88bca90e90875a7f0f79c384627bafb2", 128, "0000000000000000", "2269552ab0f85ca6"],
  ])("decrypts RFC 2268's vector for key %s at %i bits", (key, bits, plaintext, ciphertext) => {
    const block = Buffer.from(ciphertext, "hex");
    rc2DecryptBlock(rc2ExpandKey(Buffer.from(key, "hex"), bits), block, 0);
    expect(block.toString("hex")).toBe(plaintext);
  });

  it.each([
    [5, 40],
    [16, 128],
  ])("agrees with node-forge's RC2-CBC for a %i-byte key at %i bits", (keyLength, bits) => {
    for (let trial = 0; trial < 20; trial += 1) {
      const key = randomBytes(keyLength);
      const iv = randomBytes(8);
      const plaintext = randomBytes(8 * (1 + trial * 7));
      const cipher = forge.rc2.createEncryptionCipher(forge.util.createBuffer(key.toString("binary")), bits);
      cipher.start(forge.util.createBuffer(iv.toString("binary")));
      cipher.update(forge.util.createBuffer(plaintext.toString("binary")));
      cipher.finish();
      const ciphertext = Buffer.from(cipher.output.getBytes(), "binary");
      const decrypted = rc2CbcDecrypt(key, bits, iv, ciphertext);
      // forge pads to a whole block (PKCS#7): a full block of 8 here.
      expect(decrypted.subarray(0, plaintext.length).equals(plaintext)).toBe(true);
      expect(decrypted.subarray(plaintext.length).equals(Buffer.alloc(8, 8))).toBe(true);
    }
  });
});

/** forge's DES module, untyped in @types/node-forge. */
interface ForgeCipher {
  start(iv: unknown): void;
  update(input: forge.util.ByteStringBuffer): void;
  finish(): boolean;
  output: forge.util.ByteStringBuffer;
}
const forgeDes = (
  forge as unknown as { des: { createEncryptionCipher(key: unknown): ForgeCipher; startDecrypting(key: unknown, iv: unknown, output?: unknown): ForgeCipher } }
).des;

describe("forge's decryption entry points during a lean read", () => {
  const encrypt = (algorithm: "rc2" | "3des", key: Buffer, iv: Buffer, plaintext: Buffer): string => {
    const cipher =
      algorithm === "rc2"
        ? forge.rc2.createEncryptionCipher(forge.util.createBuffer(key.toString("binary")), 40)
        : forgeDes.createEncryptionCipher(forge.util.createBuffer(key.toString("binary")));
    cipher.start(forge.util.createBuffer(iv.toString("binary")));
    cipher.update(forge.util.createBuffer(plaintext.toString("binary")));
    cipher.finish();
    return cipher.output.getBytes();
  };

  it("decrypt as forge's own do, refuse a wrong key's padding, and are forge's again afterwards", () => {
    const plaintext = randomBytes(300);
    const rc2Key = randomBytes(5);
    const desKey = randomBytes(24);
    const iv = randomBytes(8);
    const rc2Ciphertext = encrypt("rc2", rc2Key, iv, plaintext);
    const desCiphertext = encrypt("3des", desKey, iv, plaintext);
    const entryPoint = (module: object, name: string): unknown => Object.getOwnPropertyDescriptor(module, name)?.value;
    const forgeRc2 = entryPoint(forge.rc2, "createDecryptionCipher");
    const forgeStartDecrypting = entryPoint(forgeDes, "startDecrypting");
    const results = withLeanPkcs12Ciphers(forge, () => {
      expect(entryPoint(forge.rc2, "createDecryptionCipher")).not.toBe(forgeRc2);
      const rc2 = forge.rc2.createDecryptionCipher(forge.util.createBuffer(rc2Key.toString("binary")), 40);
      rc2.start(forge.util.createBuffer(iv.toString("binary")));
      rc2.update(forge.util.createBuffer(rc2Ciphertext));
      const rc2Finished = rc2.finish();
      const des = forgeDes.startDecrypting(forge.util.createBuffer(desKey.toString("binary")), forge.util.createBuffer(iv.toString("binary")), null);
      des.update(forge.util.createBuffer(desCiphertext));
      const desFinished = des.finish();
      // A fixed wrong key whose last block does not decrypt to PKCS#7 padding (checked once; fixed, so never by chance).
      const wrong = forgeDes.startDecrypting(forge.util.createBuffer(randomBytes(24).toString("binary")), forge.util.createBuffer(iv.toString("binary")), null);
      wrong.update(forge.util.createBuffer(encrypt("3des", Buffer.alloc(24, 1), Buffer.alloc(8), Buffer.alloc(64, 0x41))));
      return { rc2Finished, rc2: rc2.output.getBytes(), desFinished, des: des.output.getBytes(), wrongFinished: wrong.finish() };
    });
    expect(results.rc2Finished).toBe(true);
    expect(Buffer.from(results.rc2, "binary").equals(plaintext)).toBe(true);
    expect(results.desFinished).toBe(true);
    expect(Buffer.from(results.des, "binary").equals(plaintext)).toBe(true);
    expect(results.wrongFinished).toBe(false);
    expect(entryPoint(forge.rc2, "createDecryptionCipher")).toBe(forgeRc2);
    expect(entryPoint(forgeDes, "startDecrypting")).toBe(forgeStartDecrypting);
  });
});
