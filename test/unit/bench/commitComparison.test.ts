import { describe, expect, it } from "vitest";
import { inTurn } from "../../../bench/performance/commitComparison";

describe("inTurn", () => {
  it("runs A first in odd rounds and B first in even ones, so that neither always follows the floor", () => {
    expect([1, 2, 3, 4].map((round) => inTurn(["a", "b"], round).join(""))).toEqual(["ab", "ba", "ab", "ba"]);
  });

  it("does not reorder the caller's list", () => {
    const sides = ["a", "b"];
    inTurn(sides, 2);
    expect(sides).toEqual(["a", "b"]);
  });
});
