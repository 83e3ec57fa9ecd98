/**
 * The default bound: the host computes the same values again in each step of a resource (check,
 * diff, create or read, lookups), steps that follow each other while the engine works on a few dozen
 * resources at once. The bound keeps those, not a whole fleet's: at 20,000 the parsed IDs, item ids
 * and key hashes of a 2,000-cluster `up` held about 10 MB of the provider host's live heap to the end.
 */
export const defaultMemoBound = 4096;

/**
 * Memoization bounded for a long-lived provider host (it starts over at `bound` entries); a call that
 * throws caches nothing. Not lru-cache: it cannot hold `undefined`, and the pure core loads only node:crypto.
 */
export function boundedMemo<Value>(compute: (key: string) => Value, bound = defaultMemoBound): (key: string) => Value {
  if (!Number.isInteger(bound) || bound < 1) throw new RangeError(`bound must be a positive integer, got ${bound}`);
  const values = new Map<string, Value>();
  return (key) => {
    const known = values.get(key);
    if (known !== undefined || values.has(key)) return known as Value;
    const value = compute(key);
    if (values.size >= bound) values.clear();
    values.set(key, value);
    return value;
  };
}
