/**
 * Memoization for pure computations a provider process repeats for the same value within one
 * engine operation (a `refresh` hashes each identity key three times: its read decodes and
 * re-encodes the outputs, its diff decodes them). Only worth it for those: a value computed once
 * per cluster and operation would only cost memory. Also for an object worth reusing per key (one
 * arm-msi client per subscription). Bounded, because the provider host can live long: at `bound`
 * entries it starts over.
 *
 * Why not lru-cache: it cannot hold `undefined` (its `set` of undefined deletes the key), so it
 * fails this memo's own test; an LRU order buys nothing here, because a refresh visits every key
 * once in the same order (both keep the same hits), while its bookkeeping costs every hit more
 * (docs/performance.md); and the pure core may
 * load only node:crypto (.dependency-cruiser.cjs). Installing it would cost consumers nothing
 * (@pulumi/pulumi already brings lru-cache 11), so that is not the reason.
 */

/**
 * Wraps a pure function of a string. A call that throws caches nothing.
 * @param bound - Entries kept before the cache is emptied; each holds one key and one value.
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
