/**
 * Memoization bounded for a long-lived provider host (it starts over at `bound` entries); a call that
 * throws caches nothing. Not lru-cache: it cannot hold `undefined`, and the pure core loads only node:crypto.
 */
export function boundedMemo<Value>(compute: (key: string) => Value, bound = 20_000): (key: string) => Value {
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
