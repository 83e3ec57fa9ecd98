import { describe, expect, it } from "vitest";
import { createConcurrencyLimiter } from "../../../resources/sync/concurrencyLimiter";

/** A task that stays in flight across a macrotask, counting how many tasks overlap it. */
function trackedTask(log: string[], name: string, inFlight: { now: number; peak: number }) {
  return async (): Promise<string> => {
    inFlight.now += 1;
    inFlight.peak = Math.max(inFlight.peak, inFlight.now);
    log.push(`start ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
    inFlight.now -= 1;
    return name;
  };
}

describe("createConcurrencyLimiter", () => {
  it("hands a released slot to the oldest waiter, not to a caller arriving in the same tick", async () => {
    const limiter = createConcurrencyLimiter(1);
    const inFlight = { now: 0, peak: 0 };
    const log: string[] = [];
    let finishFirst!: () => void;
    const firstTaskDone = new Promise<void>((resolve) => {
      finishFirst = resolve;
    });
    const first = limiter.run(() => firstTaskDone);
    const second = limiter.run(trackedTask(log, "second", inFlight));
    // This reaction is queued right behind the limiter's own continuation of the first task, so
    // it calls run() after the slot is released and before the waiting second task resumes:
    // the exact window in which a newcomer could take the slot too.
    const third = firstTaskDone.then(() => limiter.run(trackedTask(log, "third", inFlight)));
    finishFirst();
    expect(await Promise.all([first, second, third])).toEqual([undefined, "second", "third"]);
    expect(inFlight.peak).toBe(1);
    expect(limiter.peak).toBe(1);
    expect(log).toEqual(["start second", "start third"]);
    expect(limiter.active).toBe(0);
  });

  it("never exceeds its limit and starts tasks in submission order under churn", async () => {
    const limiter = createConcurrencyLimiter(3);
    const inFlight = { now: 0, peak: 0 };
    const log: string[] = [];
    const runs: Array<Promise<string>> = [];
    for (let index = 0; index < 12; index += 1) {
      const run = limiter.run(trackedTask(log, `task ${index}`, inFlight));
      runs.push(run);
      // Every completion also submits a newcomer in the release tick.
      runs.push(run.then(() => limiter.run(trackedTask(log, `late ${index}`, inFlight))));
    }
    await Promise.all(runs);
    expect(inFlight.peak).toBe(3);
    expect(limiter.peak).toBe(3);
    expect(limiter.active).toBe(0);
    expect(log.slice(0, 12)).toEqual(Array.from({ length: 12 }, (_unused, index) => `start task ${index}`));
  });

  it("frees the slot when a task fails", async () => {
    const limiter = createConcurrencyLimiter(1);
    await expect(limiter.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await limiter.run(() => Promise.resolve("after"))).toBe("after");
    expect(limiter.active).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses the limit %s", (limit) => {
    expect(() => createConcurrencyLimiter(limit)).toThrow(RangeError);
  });
});
