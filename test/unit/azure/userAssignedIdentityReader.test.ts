/**
 * The path of an identity read (resources/azure/userAssignedIdentityReader.ts): the lowercased
 * segments upstream reads with, except where ARM's case-insensitive match could miss them.
 */
import { describe, expect, it } from "vitest";
import { asUpstreamAsks } from "../../../resources/azure/userAssignedIdentityReader";

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
