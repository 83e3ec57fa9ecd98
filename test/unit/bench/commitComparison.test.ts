import { describe, expect, it } from "vitest";
import { floorTracesAddress, inTurn } from "../../../bench/performance/commitComparison";
import { tracingPartRows } from "../../../bench/performance/comparisonReport";

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

describe("floorTracesAddress", () => {
  it("puts the traced engine floor's file beside B's, so that neither overwrites the other", () => {
    expect(floorTracesAddress("file:///tmp/hd/b-traces.json")).toBe("file:///tmp/hd/b-traces.floor.json");
    expect(floorTracesAddress("file:///tmp/hd.d/traces")).toBe("file:///tmp/hd.d/traces.floor");
  });

  it("leaves a collector's address as it is", () => {
    expect(floorTracesAddress("grpc://localhost:4317")).toBe("grpc://localhost:4317");
  });
});

describe("tracingPartRows", () => {
  const milliseconds = (value: number): string => `${value} ms`;

  it("writes no table when the engine floor ran untraced only", () => {
    expect(tracingPartRows([{ label: "refresh", format: milliseconds, values: { a: [100], b: [120], floor: [80] } }])).toEqual([]);
  });

  it("splits B / A into the engine's part (the floor traced over untraced) and the provider's, per round", () => {
    const lines = tracingPartRows([
      {
        label: "refresh",
        format: milliseconds,
        // Rounds: B / A = 1.2, 1.32, 1.1; the floor's traced / untraced = 1.2, 1.1, 1.1.
        values: { a: [100, 100, 100], b: [120, 132, 110], floor: [50, 60, 70], tracedFloor: [60, 66, 77] },
      },
    ]);
    const row = lines.find((line) => line.startsWith("| refresh |"));
    expect(row).toBe("| refresh | 60 ms | 66 ms | 1.10× [1.10–1.15×] | 3 of 3 | no difference told | 1.20× [1.15–1.26×] | 1.00× [1.00–1.10×] |");
    expect(lines.some((line) => line.startsWith("| Measurement | Engine floor | Engine floor traced |"))).toBe(true);
  });
});
