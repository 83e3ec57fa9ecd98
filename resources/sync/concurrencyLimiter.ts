/**
 * A first-in, first-out limiter on concurrent async work. Tasks start in the order they were
 * submitted, so lookups run in a deterministic order. Pure: no timers, no I/O.
 *
 * A finishing task hands its slot straight to the oldest waiter (the count of active tasks does
 * not drop in between). Freeing the slot first and letting the waiter take it when it resumes
 * would leave a window of one microtask in which a newcomer sees a free slot too, so both run
 * and the limit is exceeded (see test/unit/sync/concurrencyLimiter.test.ts).
 */
export interface ConcurrencyLimiter {
  /** Runs `task` once fewer than `limit` tasks are running. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running now. */
  readonly active: number;
  /** Most tasks ever running at once. */
  readonly peak: number;
  readonly limit: number;
}

/** Creates a limiter allowing `limit` (≥ 1) concurrent tasks. */
export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency limit must be a whole number of at least 1, got ${limit}`);
  }
  const waiting: Array<() => void> = [];
  let active = 0;
  let peak = 0;
  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) {
      active -= 1;
    } else {
      // The slot passes to `next` as it is: `active` stays the same.
      next();
    }
  };
  return {
    get active() {
      return active;
    },
    get peak() {
      return peak;
    },
    limit,
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active >= limit) {
        // Resumes holding the slot a finishing task handed over.
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        active += 1;
      }
      peak = Math.max(peak, active);
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
