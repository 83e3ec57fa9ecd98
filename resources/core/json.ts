/** JSON values as Cosmos and the provider's outputs store them. Pure. */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value of JSON text; `undefined` (which JSON cannot hold) when it is not JSON. */
export function parsedJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function sortedRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([left], [right]) => (left < right ? -1 : 1)));
}

/** The fields whose value is neither null nor undefined, in order: what Go's encoder writes of nil-able fields. */
export function withoutNil<T extends object>(fields: T): WithoutNil<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined)) as WithoutNil<T>;
}

type WithoutNil<T> = { [Field in keyof T]?: NonNullable<T[Field]> };
