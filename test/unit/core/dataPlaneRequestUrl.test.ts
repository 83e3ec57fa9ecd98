/**
 * The data plane request URL, computed as upstream's Go client computes it: every expected value
 * comes from test/fixtures/goVectors.json, printed by Go (tools/go-vectors, which goStrings.test.ts
 * re-runs and compares byte for byte).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { dataPlaneRequestUrl } from "../../../resources/core/dataPlaneRequestUrl";

const vectors = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../fixtures/goVectors.json"), "utf8")) as {
  readonly identityUrls: readonly { readonly identityUrl: string; readonly requestUrl: string }[];
};

describe("dataPlaneRequestUrl", () => {
  it("has Go's vectors to check against", () => {
    expect(vectors.identityUrls.length).toBeGreaterThanOrEqual(5);
  });

  it.each(vectors.identityUrls.map((vector) => [vector.identityUrl, vector.requestUrl]))("asks at what Go's client asks for %s", (identityUrl, requestUrl) => {
    expect(dataPlaneRequestUrl(identityUrl, "2024-01-01")).toBe(requestUrl);
  });
});
