/**
 * The lean PKCS#12 key derivation (resources/azure/pkcs12KeyDerivation.ts) against node-forge's
 * own, which it stands in for while forge reads an archive: the same bytes for every purpose,
 * digest, length, salt and password an archive can name; forge's functions are back after the
 * read, also when the read throws; during a read, forge's SHA-1 and SHA-2 digests (and its HMAC over
 * them) give forge's results. Reading real archives with it is certificateBundle.test.ts.
 */
import { createHash, createHmac } from "node:crypto";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { derivePkcs12Key, rehashSha1, withLeanPkcs12KeyDerivation } from "../../../resources/azure/pkcs12KeyDerivation";

const forgeDerivation = forge.pkcs12.generateKey;

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

  it("swaps forge's derivation only for the read, and puts it back when the read throws", () => {
    const pbe = (forge.pki as unknown as { pbe: { generatePkcs12Key: unknown } }).pbe;
    const before = [pbe.generatePkcs12Key, forge.pkcs12.generateKey];
    let during: unknown[] = [];
    expect(() =>
      withLeanPkcs12KeyDerivation(forge, () => {
        during = [pbe.generatePkcs12Key, forge.pkcs12.generateKey];
        throw new Error("unreadable");
      }),
    ).toThrow("unreadable");
    expect(during[0]).not.toBe(before[0]);
    expect(during[1]).not.toBe(before[1]);
    expect([pbe.generatePkcs12Key, forge.pkcs12.generateKey]).toEqual(before);
  });

  it("gives forge's HMAC and digests with Node's hashes during the read, and forge's own back after it", () => {
    const sha1 = forge.md.sha1 as unknown as Record<string, unknown>;
    const forgeCreate = sha1.create;
    for (const digest of ["sha1", "sha256", "sha384", "sha512"] as const) {
      for (const [key, message] of [
        ["", ""],
        ["0b".repeat(20), "Hi There"],
        ["aa".repeat(131), "a message longer than one block of the digest, so that forge's HMAC hashes the key first".repeat(3)],
      ]) {
        const keyBytes = Buffer.from(key, "hex").toString("binary");
        const macOf = (): string => {
          const mac = forge.hmac.create();
          mac.start(forge.md[digest].create(), keyBytes);
          mac.update(message);
          return mac.getMac().toHex();
        };
        const expected = macOf();
        const during = withLeanPkcs12KeyDerivation(forge, () => {
          expect(sha1.create).not.toBe(forgeCreate);
          const md = forge.md[digest].create();
          md.update("ab");
          const partial = md.digest().toHex();
          md.update("c");
          const whole = md.digest().toHex();
          const text = forge.md[digest].create();
          text.update("ü", "utf8");
          return { mac: macOf(), partial, whole, utf8: text.digest().toHex() };
        });
        expect(during.mac, `${digest} ${key.length}`).toBe(expected);
        expect(during.mac).toBe(createHmacHex(digest, Buffer.from(key, "hex"), message));
        expect([during.partial, during.whole, during.utf8]).toEqual([
          createHash(digest).update("ab").digest("hex"),
          createHash(digest).update("abc").digest("hex"),
          createHash(digest).update("ü", "utf8").digest("hex"),
        ]);
      }
    }
    expect(sha1.create).toBe(forgeCreate);
  });
});

function createHmacHex(digest: string, key: Buffer, message: string): string {
  return createHmac(digest, key).update(message, "latin1").digest("hex");
}
