/**
 * The statistics behind the benchmark's ratios (bench/performance/statistics.ts): the median and
 * interquartile range of per-pair ratios, and the rule by which a comparison of two commits says
 * one is slower only when its whole interquartile range says so.
 */
import { describe, expect, it } from "vitest";
import { formatRatioSpread, median, pairRatios, ratioVerdict, signTestChance, spread } from "../../../bench/performance/statistics";

describe("median", () => {
  it.each([
    ["the middle value of an odd count, whatever the order", [3, 1, 2], 2],
    ["the mean of the two middle values of an even count", [4, 1, 3, 2], 2.5],
    ["the one value of a list of one", [7], 7],
  ])("takes %s", (_title, values, expected) => {
    expect(median(values)).toBe(expected);
  });

  it("refuses an empty list", () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

describe("spread", () => {
  it.each([
    ["of 5 values, the 2nd, 3rd and 4th in order", [1.3, 1.1, 1.5, 1.2, 1.4], [1.2, 1.3, 1.4]],
    ["of 3 values, halfway between the 1st and 2nd and between the 2nd and 3rd", [1.4, 1.0, 1.2], [1.1, 1.2, 1.3]],
    ["of 4 values, interpolated a quarter and three quarters of the way", [1, 2, 3, 4], [1.75, 2.5, 3.25]],
    ["of one value, that value three times", [1.25], [1.25, 1.25, 1.25]],
  ])("gives the quartiles and median %s", (_title, values, [lowerQuartile, middle, upperQuartile]) => {
    const result = spread(values);
    expect(result.lowerQuartile).toBeCloseTo(lowerQuartile, 12);
    expect(result.median).toBeCloseTo(middle, 12);
    expect(result.upperQuartile).toBeCloseTo(upperQuartile, 12);
  });

  it("is not moved by one outlying pair, as a mean would be", () => {
    expect(spread([1.2, 1.21, 1.19, 1.22, 3]).median).toBe(1.21);
    expect(spread([1.2, 1.21, 1.19, 1.22, 3]).upperQuartile).toBe(1.22);
  });

  it("does not reorder the caller's list", () => {
    const values = [3, 1, 2];
    spread(values);
    expect(values).toEqual([3, 1, 2]);
  });

  it("refuses an empty list", () => {
    expect(() => spread([])).toThrow(RangeError);
  });
});

describe("pairRatios", () => {
  it("divides each run by the floor run of its own pair, not by the floors' median", () => {
    expect(pairRatios([12, 10, 15], [10, 8, 10])).toEqual([1.2, 1.25, 1.5]);
  });

  it("refuses sides of different lengths", () => {
    expect(() => pairRatios([1, 2], [1])).toThrow(RangeError);
  });
});

describe("signTestChance", () => {
  it.each([
    [5, 5, 0.0625],
    [6, 6, 0.03125],
    [0, 6, 0.03125],
    [7, 8, 0.0703125],
    [8, 9, 0.0390625],
    [3, 6, 1],
    [0, 0, 1],
  ])("of %i above 1 in %i rounds is %f", (above, rounds, chance) => {
    expect(signTestChance(above, rounds)).toBeCloseTo(chance, 10);
  });
});

describe("ratioVerdict", () => {
  it.each([
    ["higher when every one of 6 rounds is above 1", [1.04, 1.06, 1.08, 1.05, 1.07, 1.02], "higher"],
    ["lower when every one of 6 rounds is below 1", [0.9, 0.95, 0.92, 0.97, 0.93, 0.99], "lower"],
    ["none from 5 rounds, however they fall: the sign test cannot tell below 6", [1.04, 1.06, 1.08, 1.05, 1.07], "none"],
    ["none when 5 of 6 are above 1 (a chance of 22 %)", [0.99, 1.04, 1.06, 1.08, 1.05, 1.07], "none"],
    ["higher when 8 of 9 are above 1 and the lower quartile too", [0.99, 1.04, 1.06, 1.08, 1.05, 1.07, 1.03, 1.02, 1.09], "higher"],
    ["none when three rounds tie at 1, leaving 5 for the sign test", [1, 1, 1, 1.1, 1.2, 1.3, 1.4, 1.2], "none"],
    ["none for identical runs", [1, 1, 1, 1, 1, 1], "none"],
  ] as const)("says %s", (_title, ratios, expected) => {
    expect(ratioVerdict(ratios)).toBe(expected);
  });

  it("refuses no pairs", () => {
    expect(() => ratioVerdict([])).toThrow(RangeError);
  });
});

describe("formatRatioSpread", () => {
  it("writes the median, then the interquartile range in brackets", () => {
    expect(formatRatioSpread({ lowerQuartile: 1.204, median: 1.25, upperQuartile: 1.3149 })).toBe("1.25× [1.20–1.31×]");
  });
});
