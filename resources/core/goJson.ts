/**
 * How Go's encoding/json lays out the subtrees this hook writes, so that each half is what
 * upstream's Go types give after decoding it: struct fields in declaration order (the callers
 * write them so), map keys sorted by their UTF-8 bytes (not JavaScript's UTF-16 order), and
 * fields a newer upstream added carried over after the known ones. Pure.
 */
import type { JsonObject, JsonValue } from "./json";

/** Go's order of map keys: by their UTF-8 bytes. */
export function compareGoMapKeys(left: string, right: string): number {
  return Buffer.compare(Buffer.from(left, "utf8"), Buffer.from(right, "utf8"));
}

/** Sets an own field, whatever its name (a key such as `__proto__` must not reach the prototype). */
export function setOwnField(json: JsonObject, name: string, value: JsonValue): void {
  Object.defineProperty(json, name, { value, enumerable: true, writable: true, configurable: true });
}

/** A Go map as JSON: `entries` under their keys, in Go's key order. */
export function goMap<Value>(entries: Readonly<Record<string, Value>>, json: (key: string, value: Value) => JsonValue): JsonObject {
  const map: JsonObject = {};
  for (const key of Object.keys(entries).sort(compareGoMapKeys)) setOwnField(map, key, json(key, entries[key]));
  return map;
}

/** `json` followed by the fields of `stored` whose names are not in `known`, as stored. */
export function withUnknownFields(json: JsonObject, stored: Readonly<Record<string, JsonValue>>, known: ReadonlySet<string>): JsonObject {
  for (const [name, value] of Object.entries(stored)) {
    if (!known.has(name)) setOwnField(json, name, value);
  }
  return json;
}
