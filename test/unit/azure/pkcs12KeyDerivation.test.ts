/**
 * The PKCS#12 key derivation (resources/azure/pkcs12KeyDerivation.ts): the published known answers,
 * and node-forge's bytes (forge's derivation is what it stands in for while forge reads an archive)
 * for every purpose, digest, length, salt and password an archive can name. Reading real archives
 * with it, and forge's entry points after a read, are certificateBundle.test.ts.
 */
import { createHash } from "node:crypto";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { derivePkcs12Key, derivesWith, rehashSha1 } from "../../../resources/azure/pkcs12KeyDerivation";

const forgeDerivation = forge.pkcs12.generateKey;

/** A published known answer: password, salt (hex), purpose (1 key, 2 IV, 3 MAC key), iterations, digest, derived bytes (hex). */
type KnownAnswer = readonly [password: string, salt: string, id: 1 | 2 | 3, iterations: number, digest: string, derived: string];

describe("PKCS#12 key derivation, published known answers (RFC 7292 appendix B.2)", () => {
  it.each<KnownAnswer>([
    // SHA-1: the test vectors of Dr Stephen Henson's OpenSSL PKCS#12 FAQ (drh-consultancy.demon.co.uk/test.txt),
    // as BouncyCastle's PKCS12Test (bcgit/bc-java, core/src/test/java/org/bouncycastle/crypto/test/PKCS12Test.java)
    // and Crypto++'s validation tests reproduce them.
    ["smeg", "0a58cf64530d823f", 1, 1, "sha1", "8aaae6297b6cb04642ab5b077851284eb7128f1a2a7fbca3"],
    ["smeg", "0a58cf64530d823f", 2, 1, "sha1", "79993dfe048d3b76"],
    ["smeg", "642b99ab44fb4b1f", 1, 1, "sha1", "f3a95fec48d7711e985cfe67908c5ab79fa3d7c5caa5d966"],
    ["smeg", "642b99ab44fb4b1f", 2, 1, "sha1", "c0a38d64a79bea1d"],
    ["smeg", "3d83c0e4546ac140", 3, 1, "sha1", "8d967d88f6caa9d714800ab3d48051d63f73a312"],
    ["queeg", "05dec959acff72f7", 1, 1000, "sha1", "ed2034e36328830ff09df1e1a07dd357185dac0d4f9eb3d4"],
    ["queeg", "05dec959acff72f7", 2, 1000, "sha1", "11dedad7758d4860"],
    ["queeg", "1682c0fc5b3f7ec5", 1, 1000, "sha1", "483dd6e919d7de2e8e648ba8f862f3fbfbdc2bcb2c02957f"],
    ["queeg", "1682c0fc5b3f7ec5", 2, 1000, "sha1", "9d461d1b00355c50"],
    ["queeg", "263216fcc2fab31c", 3, 1000, "sha1", "5ec4c7a80df652294c3925b6489a7ab857c83476"],
    // SHA-256 and SHA-512, a password outside ASCII: RustCrypto's pkcs12 crate (RustCrypto/formats, pkcs12/tests/kdf.rs).
    ["ge@äheim", "0102030405060708", 1, 100, "sha256", "fae4d4957a3cc781e1180b9d4fb79c1e0c8579b746a3177e5b0768a3118bf863"],
    ["ge@äheim", "0102030405060708", 2, 100, "sha256", "e5ff813bc6547de5155b14d2fada85b3201a977349db6e26ccc998d9e8f83d6c"],
    ["ge@äheim", "0102030405060708", 3, 100, "sha256", "136355ed9434516682534f46d63956db5ff06b844702c2c1f3b46321e2524a4d"],
    ["ge@äheim", "0102030405060708", 1, 1000, "sha256", "2b95a0569b63f641fae1efca32e84db3699ab74540628ba66283b58cf5400527"],
    ["ge@äheim", "0102030405060708", 2, 1000, "sha256", "6472c0ebad3fab4123e8b5ed7834de21eeb20187b3eff78a7d1cdffa4034851d"],
    ["ge@äheim", "0102030405060708", 3, 1000, "sha256", "3f9113f05c30a996c4a516409bdac9d065f44296ccd52bb75de3fcfdbe2bf130"],
    ["ge@äheim", "0102030405060708", 1, 100, "sha512", "b14a9f01bfd9dce4c9d66d2fe9937e5fd9f1afa59e370a6fa4fc81c1cc8ec8ee"],
    // A MAC key at the data plane's 2048 iterations, from OpenSSL's PKCS12_key_gen (Crypt::OpenSSL::PKCS::Func, t/base.t).
    ["123456", "e241f01650dbeae4", 3, 2048, "sha256", "721259f14aad70b58839f71566b433da1b8ad08f650f4d02faaa0b9b095bb51d"],
  ])("derives %s, salt %s, purpose %i, %i iterations, %s", (password, salt, id, iterations, digest, derived) => {
    expect(derivePkcs12Key(password, Buffer.from(salt, "hex"), id, iterations, derived.length / 2, digest).toString("hex")).toBe(derived);
  });
});

describe("PKCS#12 key derivation", () => {
  const salts = [Buffer.alloc(0), Buffer.from("0102030405060708", "hex"), Buffer.from("a1b2c3d4e5f60718293a4b5c6d7e8f9001122334", "hex")];
  const passwords: Array<string | undefined> = [undefined, "", "pässwörd with a long tail to pass one block of sixty-four bytes"];
  for (const digest of ["sha1", "sha256", "sha512"] as const) {
    it(`gives forge's bytes with ${digest}`, () => {
      for (const salt of salts) {
        for (const password of passwords) {
          for (const [id, length, iterations] of [
            [1, 24, 3],
            [2, 8, 1],
            [3, 20, 7],
            [1, 5, 2],
            [3, 64, 2],
          ] as const) {
            const expected = forgeDerivation(password, forge.util.createBuffer(salt.toString("binary")), id, iterations, length, forge.md[digest].create());
            expect(derivePkcs12Key(password, salt, id, iterations, length, digest).toString("hex"), `${digest} ${salt.length} ${String(password)} ${id}`).toBe(
              Buffer.from(expected.bytes(), "binary").toString("hex"),
            );
          }
        }
      }
    });
  }

  it("rehashes SHA-1 as Node does, and gives forge's bytes at the data plane's 2048 iterations", () => {
    let digest = createHash("sha1").update("seed").digest();
    const start = digest;
    for (let round = 0; round < 2048; round += 1) digest = createHash("sha1").update(digest).digest();
    expect(rehashSha1(start, 2048).toString("hex")).toBe(digest.toString("hex"));
    expect(rehashSha1(start, 0).toString("hex")).toBe(start.toString("hex"));
    const salt = Buffer.from("5a17c0ffee0ddba1", "hex");
    const expected = forgeDerivation("", forge.util.createBuffer(salt.toString("binary")), 1, 2048, 24);
    expect(derivePkcs12Key("", salt, 1, 2048, 24).toString("hex")).toBe(Buffer.from(expected.bytes(), "binary").toString("hex"));
  });

  it("derives with the digests PKCS#12 archives name, and refuses others", () => {
    expect(["sha1", "sha256", "sha384", "sha512", "md5"].map(derivesWith)).toEqual([true, true, true, true, false]);
    expect(() => derivePkcs12Key("", Buffer.alloc(8), 1, 1, 8, "md5")).toThrow(RangeError);
    expect(() => derivePkcs12Key("", Buffer.alloc(8), 1, 0, 8)).toThrow(RangeError);
  });
});
