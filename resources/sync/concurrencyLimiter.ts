/**
 * The process-wide FIFO limiter on concurrent lookups, with `active`/`peak` counters: p-limit, whose
 * queue dequeues in constant time; an ES module, loaded through require(esm) (Node 20.19 or later).
 */
import pLimit from "p-limit";

export interface ConcurrencyLimiter {
  /** Runs `task` once fewer than `limit` tasks are running. */
  run<T>(task: () => Promise<T>): Promise<T>;
  readonly active: number;
  /** Most tasks ever running at once. */
  readonly peak: number;
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
    run<T>(task: () => Promise<T>): Promise<T> {
      return limited(() => {
        peak = Math.max(peak, limited.activeCount);
        return task();
      });
    },
  };
}
