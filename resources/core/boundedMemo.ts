/**
 * Memoization for pure computations a provider process repeats for the same value within one
 * engine operation (a `refresh` hashes each identity key several times), or for an object worth
 * reusing per key. Bounded, because the provider host can live long: at `bound` entries it starts
 * over. Not lru-cache: it cannot hold `undefined`, an LRU order buys nothing for a refresh that
 * visits every key once in the same order, and the pure core may load only node:crypto.
 *
 * A call that throws caches nothing.
 */
export function boundedMemo<Value>(compute: (key: string) => Value, bound = 20_000): (key: string) => Value {
  if (!Number.isInteger(bound) || bound < 1) {
    throw new RangeError(`bound must be a positive integer, got ${bound}`);
  }
  const values = new Map<string, Value>();
  return (key) => {
    const known = values.get(key);
    if (known !== undefined || values.has(key)) {
      return known as Value;
    }
    const value = compute(key);
    if (values.size >= bound) {
      values.clear();
    }
    values.set(key, value);
    return value;
  };
}
