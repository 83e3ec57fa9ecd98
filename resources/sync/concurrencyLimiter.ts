/** The process-wide FIFO limiter on concurrent lookups (p-limit, whose queue dequeues in constant time), with `active`/`peak` counters. */
import pLimit from "p-limit";

export interface ConcurrencyLimiter {
  /** Runs `task` once fewer than `limit` tasks are running. */
  run<T>(task: () => Promise<T>): Promise<T>;
  readonly active: number;
  /** Most tasks ever running at once. */
  readonly peak: number;
  readonly limit: number;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency limit must be a whole number of at least 1, got ${limit}`);
  const limited = pLimit(limit);
  let peak = 0;
  return {
    get active() {
      return limited.activeCount;
    },
    get peak() {
      return peak;
    },
    limit,
    run<T>(task: () => Promise<T>): Promise<T> {
      return limited(() => {
        peak = Math.max(peak, limited.activeCount);
        return task();
      });
    },
  };
}
