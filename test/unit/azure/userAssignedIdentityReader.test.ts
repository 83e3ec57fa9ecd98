/**
 * The path of an identity read (resources/azure/userAssignedIdentityReader.ts): the lowercased
 * segments upstream reads with, except where ARM's case-insensitive match could miss them.
 */
import { describe, expect, it } from "vitest";
import { MalformedAnswerError, asUpstreamAsks, readIdentityAnswer } from "../../../resources/azure/userAssignedIdentityReader";
import { classifyLookupError } from "../../../resources/core/errorClassification";

describe("asUpstreamAsks", () => {
  it.each([
    ["Test-RG_01", "test-rg_01"],
    ["Shared-Operator-Identity", "shared-operator-identity"],
    ["İSTANBUL-RG", "İSTANBUL-RG"],
    ["ΣΊΣΥΦΟΣ", "ΣΊΣΥΦΟΣ"],
  ])("asks for %s as %s", (segment, asked) => {
    expect(asUpstreamAsks(segment)).toBe(asked);
  });
});

describe("readIdentityAnswer", () => {
  const body = (properties: unknown): string => JSON.stringify({ id: "x", name: "x", properties });
  it.each([
    ["strings", body({ tenantId: "t", principalId: "p", clientId: "c" }), { kind: "values", values: { clientId: "c", principalId: "p" } }],
    ["empty strings, passed through as upstream does", body({ principalId: "", clientId: "" }), { kind: "values", values: { clientId: "", principalId: "" } }],
    ["a null tenantId", body({ tenantId: null, principalId: "p", clientId: "c" }), { kind: "values", values: { clientId: "c", principalId: "p" } }],
    ["no properties", JSON.stringify({ id: "x" }), { kind: "noProperties" }],
    ["properties that are not an object", body("x"), { kind: "noProperties" }],
    ["a body that is not JSON", "<html>", { kind: "noProperties" }],
    ["no body", undefined, { kind: "noProperties" }],
    [
      "a clientId that is a number",
      body({ principalId: "p", clientId: 7 }),
      { kind: "malformed", problem: "properties.clientId is a number, expected a string" },
    ],
    [
      "a principalId that is an object",
      body({ principalId: {}, clientId: "c" }),
      { kind: "malformed", problem: "properties.principalId is an object, expected a string" },
    ],
    ["a null clientId", body({ principalId: "p", clientId: null }), { kind: "malformed", problem: "properties.clientId is null, expected a string" }],
    ["no principalId", body({ clientId: "c" }), { kind: "malformed", problem: "properties.principalId is missing, expected a string" }],
    [
      "a tenantId that is a boolean",
      body({ tenantId: true, principalId: "p", clientId: "c" }),
      { kind: "malformed", problem: "properties.tenantId is a boolean, expected a string" },
    ],
    [
      "an isolationScope that is an array",
      body({ isolationScope: [], principalId: "p", clientId: "c" }),
      { kind: "malformed", problem: "properties.isolationScope is an array, expected a string" },
    ],
  ])("reads %s", (_title, text, answer) => {
    expect(readIdentityAnswer(text)).toEqual(answer);
  });

  it("makes a malformed answer a failure of that identity (MalformedAnswer, HTTP 200), never a notFound", () => {
    expect(classifyLookupError(new MalformedAnswerError("properties.clientId is a number, expected a string"))).toEqual({
      kind: "identity",
      details: { code: "MalformedAnswer", statusCode: 200, message: "properties.clientId is a number, expected a string" },
    });
  });
});
