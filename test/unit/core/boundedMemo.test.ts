import { describe, expect, it } from "vitest";
import { boundedMemo } from "../../../resources/core/boundedMemo";

describe("boundedMemo", () => {
  it("computes a value once per key, undefined included", () => {
    const calls: string[] = [];
    const memo = boundedMemo((key) => {
      calls.push(key);
      return key === "none" ? undefined : key.length;
    });
    expect([memo("abc"), memo("abc"), memo("none"), memo("none"), memo("de")]).toEqual([3, 3, undefined, undefined, 2]);
    expect(calls).toEqual(["abc", "none", "de"]);
  });

  it("starts over at its bound, so it never holds more than that many entries", () => {
    const calls: string[] = [];
    const memo = boundedMemo((key) => {
      calls.push(key);
      return key.toUpperCase();
    }, 2);
    memo("a");
    memo("b");
    memo("c"); // full: forgets a and b, keeps c
    memo("c");
    memo("a");
    expect(calls).toEqual(["a", "b", "c", "a"]);
  });

  it("caches nothing when the computation throws", () => {
    let attempts = 0;
    const memo = boundedMemo((key) => {
      attempts += 1;
      if (attempts === 1) throw new TypeError(`bad ${key}`);
      return key;
    });
    expect(() => memo("x")).toThrow("bad x");
    expect(memo("x")).toBe("x");
    expect(attempts).toBe(2);
  });

  it("refuses a bound that is not a positive integer", () => {
    expect(() => boundedMemo((key) => key, 0)).toThrow(RangeError);
    expect(() => boundedMemo((key) => key, 1.5)).toThrow("bound must be a positive integer, got 1.5");
  });
});
