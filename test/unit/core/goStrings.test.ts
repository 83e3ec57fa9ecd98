/**
 * Go-exact lowercasing (issue 10 item 5). The expected values come from Go itself:
 * test/fixtures/goVectors.json is the output of tools/go-vectors, and the first test re-runs that
 * generator (built by tools/build-go-tool.sh; Go is on every machine of this project) and requires the committed file to be
 * byte-for-byte what Go prints, so no vector here was written by hand.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { goToLower, goToLowerCodePoint } from "../../../resources/core/goStrings";
import { documentIdFor, partitionKeyFor } from "../../../sandbox/documentBuilders";
import { goLowerCase } from "../../../sandbox/goLowerCase";

interface GoVectors {
  readonly unicodeVersion: string;
  readonly namespace: string;
  readonly text: readonly { readonly input: string; readonly lower: string }[];
  readonly armResourceIds: readonly { readonly armResourceId: string; readonly lower: string; readonly documentId: string }[];
  readonly lowerCaseMapping: readonly (readonly [number, number])[];
}

const projectDirectory = path.resolve(__dirname, "../../..");
const generatorDirectory = path.join(projectDirectory, "tools/go-vectors");
const fixturePath = path.join(projectDirectory, "test/fixtures/goVectors.json");
const vectors = JSON.parse(fs.readFileSync(fixturePath, "utf8")) as GoVectors;
const goMapping = new Map(vectors.lowerCaseMapping.map(([from, to]) => [from, to]));

function isSurrogate(codePoint: number): boolean {
  return codePoint >= 0xd800 && codePoint <= 0xdfff;
}

describe("the Go vectors", () => {
  it("are exactly what the Go generator prints now", () => {
    // Built (or found built) by the script, whose Go output goes to its own stderr: on a machine
    // whose Go module cache is empty, the build downloads modules, and only the generator's own
    // output is compared here.
    const built = spawnSync("bash", [path.join(projectDirectory, "tools/build-go-tool.sh"), "go-vectors"], { encoding: "utf8" });
    expect(built.status, built.stderr).toBe(0);
    const generator = built.stdout.trim().split("\n").pop() ?? "";
    const generated = spawnSync(generator, [], { cwd: generatorDirectory, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
    expect(generated.stderr).toBe("");
    expect(generated.status).toBe(0);
    expect(generated.stdout).toBe(fs.readFileSync(fixturePath, "utf8"));
  }, 300_000);

  it("cover the letters issue 10 names: Turkish i, Greek sigma, Cyrillic, German ß, mixed ASCII", () => {
    const inputs = vectors.text.map((vector) => vector.input).join("");
    for (const letter of ["İ", "ı", "Σ", "ς", "Ж", "ß", "ẞ", "A"]) {
      expect(inputs).toContain(letter);
    }
    expect(vectors.lowerCaseMapping.length).toBeGreaterThan(1000);
  });
});

describe("goToLower", () => {
  it.each(vectors.text.map((vector) => [vector.input, vector.lower]))("lowercases %s as Go does", (input, lower) => {
    expect(goToLower(input)).toBe(lower);
  });

  it.each(vectors.armResourceIds.map((vector) => [vector.armResourceId, vector.lower]))("lowercases the ARM ID %s as Go does", (id, lower) => {
    expect(goToLower(id)).toBe(lower);
  });

  it("maps every code point U+0000..U+10FFFF as Go's unicode.ToLower does", () => {
    const mismatches: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (isSurrogate(codePoint)) {
        continue;
      }
      const expected = goMapping.get(codePoint) ?? codePoint;
      if (goToLowerCodePoint(codePoint) !== expected || goToLower(String.fromCodePoint(codePoint)) !== String.fromCodePoint(expected)) {
        mismatches.push(`U+${codePoint.toString(16).toUpperCase()}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it("lowercases every mapped letter inside one string, as strings.ToLower maps code point by code point", () => {
    const upper = vectors.lowerCaseMapping.map(([from]) => String.fromCodePoint(from)).join("-");
    const lower = vectors.lowerCaseMapping.map(([, to]) => String.fromCodePoint(to)).join("-");
    expect(goToLower(upper)).toBe(lower);
  });

  it("differs from JavaScript's toLowerCase exactly where it must (the problem this module solves)", () => {
    expect("İ".toLowerCase()).toBe("i\u0307");
    expect(goToLower("İ")).toBe("i");
    expect("ΟΔΟΣ".toLowerCase()).toBe("οδος");
    expect(goToLower("ΟΔΟΣ")).toBe("οδοσ");
    const differing: number[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (!isSurrogate(codePoint) && String.fromCodePoint(codePoint).toLowerCase() !== goToLower(String.fromCodePoint(codePoint))) {
        differing.push(codePoint);
      }
    }
    expect(differing).toContain(0x130);
    // ASCII never differs, so every ASCII ARM ID keeps the id and key it had before.
    expect(differing.filter((codePoint) => codePoint < 0x80)).toEqual([]);
  });

  it("keeps a lone surrogate, which UTF-8 encoding turns into U+FFFD as Go's decoder would", () => {
    expect(goToLower("A\ud800B")).toBe("a\ud800b");
  });
});

// The sandbox stands in for upstream, so the documents it seeds must carry upstream's ids and keys.
describe("the sandbox's own copy (sandbox/goLowerCase.ts)", () => {
  it("maps every code point as Go does", () => {
    const mismatches: string[] = [];
    for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
      if (!isSurrogate(codePoint) && goLowerCase(String.fromCodePoint(codePoint)) !== String.fromCodePoint(goMapping.get(codePoint) ?? codePoint)) {
        mismatches.push(`U+${codePoint.toString(16).toUpperCase()}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it.each(vectors.text.map((vector) => [vector.input, vector.lower]))("lowercases %s as Go does", (input, lower) => {
    expect(goLowerCase(input)).toBe(lower);
  });

  it.each(vectors.armResourceIds.map((vector) => [vector.armResourceId, vector.documentId, vector.lower]))(
    "seeds %s under Go's document id and partition key",
    (id, documentId, lower) => {
      expect(documentIdFor(id)).toBe(documentId);
      expect(partitionKeyFor(id)).toBe(lower.split("/")[2]);
    },
  );
});
