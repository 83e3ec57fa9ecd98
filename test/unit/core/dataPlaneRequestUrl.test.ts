/**
 * The data plane request URL and body, as upstream's Go client writes them: every expected value
 * comes from test/fixtures/goVectors.json, recorded from msi-dataplane's own client by
 * tools/go-vectors (which goStrings.test.ts re-runs and compares byte for byte).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { dataPlaneRequestBody, dataPlaneRequestUrl } from "../../../resources/core/identityUrl";

const vectors = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../fixtures/goVectors.json"), "utf8")) as {
  readonly identityUrls: readonly { readonly identityUrl: string; readonly requestUrl: string }[];
  readonly requestBodies: readonly { readonly identityIds: readonly string[]; readonly body: string }[];
};

describe("dataPlaneRequestUrl", () => {
  it("has Go's vectors to check against", () => {
    expect(vectors.identityUrls.length).toBeGreaterThanOrEqual(5);
  });

  it.each(vectors.identityUrls.map((vector) => [vector.identityUrl, vector.requestUrl]))("asks at what Go's client asks for %s", (identityUrl, requestUrl) => {
    expect(dataPlaneRequestUrl(identityUrl, "2024-01-01")).toBe(requestUrl);
  });

  it.each(vectors.requestBodies.map((vector) => [vector.identityIds.join(", "), vector.identityIds, vector.body] as const))(
    "writes the body Go's client writes for %s",
    (_, identityIds, body) => {
      expect(dataPlaneRequestBody(identityIds)).toBe(body);
    },
  );
});
