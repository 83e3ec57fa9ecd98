/**
 * The engine parallelism the project's doors pass (cli/engine.ts): `--parallel`'s default for an
 * `up` and for a refresh, diffs in those slots, and the caller's own PULUMI_PARALLEL and
 * PULUMI_PARALLEL_DIFF winning over them (test/e2e/parallelDiff.test.ts shows what the engine does
 * with the latter). What the engine
 * does with the value is Pulumi's behaviour, not tested here (docs/testing.md); the refresh at fleet
 * size in `npm run bench` shows its effect.
 */
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { defaultEngineParallelism, defaultRefreshParallelism, engineEnvironment, refreshParallelism } from "../../cli/engine";

describe("the engine's parallelism", () => {
  it("is 16 on a machine whose engine default (4 × cores) is less, and the engine's own default above that", () => {
    expect([1, 2, 4, 8].map((cores) => defaultEngineParallelism(cores))).toEqual([16, 16, 16, 32]);
  });

  it("the environment of the project's doors carries it, unless PULUMI_PARALLEL is already set", () => {
    const saved = process.env.PULUMI_PARALLEL;
    try {
      delete process.env.PULUMI_PARALLEL;
      expect(engineEnvironment().PULUMI_PARALLEL).toBe(String(defaultEngineParallelism(availableParallelism())));
      process.env.PULUMI_PARALLEL = "3";
      expect(engineEnvironment().PULUMI_PARALLEL).toBe("3");
    } finally {
      if (saved === undefined) delete process.env.PULUMI_PARALLEL;
      else process.env.PULUMI_PARALLEL = saved;
    }
  });

  it("runs diffs in the engine's slots (PULUMI_PARALLEL_DIFF), unless the caller exported it", () => {
    const saved = process.env.PULUMI_PARALLEL_DIFF;
    try {
      delete process.env.PULUMI_PARALLEL_DIFF;
      expect(engineEnvironment().PULUMI_PARALLEL_DIFF).toBe("true");
      process.env.PULUMI_PARALLEL_DIFF = "false";
      expect(engineEnvironment().PULUMI_PARALLEL_DIFF).toBe("false");
    } finally {
      if (saved === undefined) delete process.env.PULUMI_PARALLEL_DIFF;
      else process.env.PULUMI_PARALLEL_DIFF = saved;
    }
  });

  it("is 128 for a refresh, or 4 × cores when more, unless the caller exported PULUMI_PARALLEL", () => {
    expect([1, 2, 4, 8, 16, 64].map((cores) => defaultRefreshParallelism(cores))).toEqual([128, 128, 128, 128, 128, 256]);
    expect(refreshParallelism({}, 2)).toBe(128);
    expect(refreshParallelism({ PULUMI_PARALLEL: "5" }, 2)).toBeUndefined();
  });
});
