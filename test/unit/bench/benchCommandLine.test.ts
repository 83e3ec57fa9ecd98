import { describe, expect, it } from "vitest";
import { parseBenchCommandLine } from "../../../bench/performance/commandLine";

describe("parseBenchCommandLine", () => {
  it.each([
    ["no option as the full run", [], { quick: false, production: false }],
    [
      "the production block at another size, either spelling",
      ["--production", "--clusters", "200", "--pairs=3"],
      { quick: false, production: true, clusters: 200, pairs: 3 },
    ],
    [
      "two commits to compare, with a size",
      ["--compare", "HEAD~1", "HEAD", "--pairs", "3"],
      { quick: false, production: false, compare: { base: "HEAD~1", candidate: "HEAD" }, pairs: 3 },
    ],
    [
      "one commit against itself traced",
      ["--compare", "HEAD", "HEAD", "--traced-b=file:///tmp/b-traces.json", "--clusters=1000"],
      { quick: false, production: false, compare: { base: "HEAD", candidate: "HEAD", candidateTraces: "file:///tmp/b-traces.json" }, clusters: 1000 },
    ],
    ["the growth block at the page's sizes", ["--growth"], { quick: false, production: false, growth: {} }],
    [
      "the growth block small, with its region",
      ["--growth", "--sizes", "100,200", "--region-clusters=300", "--region-shards", "2"],
      { quick: false, production: false, growth: { sizes: [100, 200], regionClusters: 300, regionShards: 2 } },
    ],
  ])("reads %s", (_title, argumentsGiven, expected) => {
    expect(parseBenchCommandLine(argumentsGiven)).toEqual(expected);
  });

  it.each([
    ["a size the full run would ignore", ["--pairs", "3"], /apply to --production and --compare only/],
    ["a size that is no whole number of at least 1", ["--production", "--clusters", "0"], /--clusters takes a whole number/],
    ["a missing size", ["--production", "--pairs"], /--pairs takes a whole number of at least 1, got nothing/],
    ["one commit to compare", ["--compare", "HEAD"], /--compare takes two commits/],
    ["an option where the second commit should be", ["--compare", "HEAD", "--pairs", "3"], /--compare takes two commits/],
    ["a comparison with the production block", ["--production", "--compare", "A", "B"], /leave out --quick and --production/],
    ["traces without a comparison", ["--production", "--traced-b=file:///tmp/b.json"], /--traced-b applies to --compare only/],
    ["traces with no address", ["--compare", "A", "B", "--traced-b"], /--traced-b takes where B's traces go/],
    ["traces to an address the engine does not take", ["--compare", "A", "B", "--traced-b=/tmp/b.json"], /--traced-b takes where B's traces go/],
    ["growth sizes without --growth", ["--sizes", "100,200"], /apply to --growth only/],
    ["one growth size, which no line goes through", ["--growth", "--sizes", "100"], /two or more cluster counts/],
    ["the growth block with the production block", ["--growth", "--production"], /--growth runs by itself/],
  ])("refuses %s", (_title, argumentsGiven, message) => {
    expect(() => parseBenchCommandLine(argumentsGiven)).toThrow(message);
  });
});
