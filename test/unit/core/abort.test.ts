import { afterEach, describe, expect, it, vi } from "vitest";
import { untilAborted, withDeadline } from "../../../resources/core/abort";

describe("withDeadline", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("aborts the work's signal at the deadline with the reason AbortSignal.timeout gives", async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const settled = withDeadline(30_000, (signal) => {
      seen = signal;
      return untilAborted(new Promise<never>(() => undefined), signal);
    }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(seen?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = (await settled) as DOMException;
    expect(error).toBeInstanceOf(DOMException);
    expect(error.name).toBe("TimeoutError");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("drops its timer as soon as the work settles, so nothing of the work is kept for the rest of the delay", async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    await expect(
      withDeadline(30_000, (signal) => {
        seen = signal;
        return Promise.resolve("done");
      }),
    ).resolves.toBe("done");
    expect(vi.getTimerCount()).toBe(0);
    await expect(withDeadline(30_000, () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(seen?.aborted).toBe(false);
  });
});
