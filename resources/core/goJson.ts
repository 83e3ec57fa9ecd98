/** Go's encoding/json layout of the subtrees: struct field order, map keys by UTF-8 bytes, unknown fields carried over; and its tolerant decoding. */
import { describeType } from "./azureResourceId";
import { goToLower } from "./goStrings";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";

/** Go's order of map keys: by their UTF-8 bytes. */
export function compareGoMapKeys(left: string, right: string): number {
  return Buffer.compare(Buffer.from(left, "utf8"), Buffer.from(right, "utf8"));
}

/** Sets an own field, whatever its name (a key such as `__proto__` must not reach the prototype). */
function setOwnField(json: JsonObject, name: string, value: JsonValue): void {
  Object.defineProperty(json, name, { value, enumerable: true, writable: true, configurable: true });
}

/** `json` followed by the fields of `stored` whose names are not in `known`, as stored. */
function withUnknownFields(json: JsonObject, stored: Readonly<Record<string, JsonValue>>, known: ReadonlySet<string>): JsonObject {
  for (const [name, value] of Object.entries(stored)) {
    if (!known.has(name)) setOwnField(json, name, value);
  }
  return json;
}

/** The Go struct a half mirrors: fields in declaration order (`time`, `map` of entries by lowercased ID, one `entry`), and an entry's string fields. */
export interface GoStruct {
  /** The half's field under `properties.status`. */
  readonly name: string;
  /** How problems name the subtree, and the prefix of its fields in them. */
  readonly problemsNamed: { readonly subtree: string; readonly fieldPrefix: string };
  /** Field name → kind, in declaration order. */
  readonly fields: Readonly<Record<string, "time" | "map" | "entry">>;
  readonly entryFields: readonly [string, ...string[]];
  /** Data plane entries name their identity (`resourceID` required, lowercased key, no `null` entry); an MSI entry may be empty. */
  readonly strictEntries?: boolean;
  /** Fields of this hook's own older documents that upstream's type lacks: a write drops them. */
  readonly dropped?: readonly string[];
}

/** An entry of either half: string fields (Go's `*string`), any of them absent. */
export type GoEntry = Readonly<Partial<Record<string, string>>>;

/** A half as read: what is usable, whether it was there, and what was dropped (each problem naming its field). */
export interface StoredHalf<Status> {
  readonly status: Status;
  readonly present: boolean;
  readonly problems: readonly string[];
}

/** RFC 3339 in UTC, truncated to whole seconds, as Go's metav1.Time writes it. */
export function formatTimestamp(instant: Date): string {
  return `${instant.toISOString().slice(0, 19)}Z`;
}

/** Parses an RFC 3339 timestamp; undefined when absent or unparseable. */
export function parseTimestamp(value: unknown): Date | undefined {
  const instant = typeof value === "string" && value.length > 0 ? new Date(value) : undefined;
  return instant === undefined || Number.isNaN(instant.getTime()) ? undefined : instant;
}

/** Reads a subtree as Go's decoder would; malformed parts are dropped and named in `problems`, so a later write replaces them. */
export function decodeGoStruct(struct: GoStruct, subtree: unknown): StoredHalf<Readonly<Record<string, unknown>>> {
  if (subtree === undefined || subtree === null) return { status: {}, present: false, problems: [] };
  if (!isJsonObject(subtree))
    return { status: {}, present: true, problems: [`${struct.problemsNamed.subtree} is ${describeType(subtree)}, expected an object`] };
  const problems: string[] = [];
  const status: JsonObject = {};
  for (const [name, kind] of Object.entries(struct.fields)) {
    const raw = subtree[name];
    const path = `${struct.problemsNamed.fieldPrefix}${name}`;
    if (raw === undefined || raw === null) continue;
    if (kind === "time") {
      if (typeof raw === "string" && parseTimestamp(raw) !== undefined) status[name] = raw;
      else problems.push(`${path} is not an RFC 3339 timestamp`);
    } else if (kind === "entry") {
      const entry = decodeEntry(struct, raw);
      if (entry === undefined) problems.push(`${path} is not a valid entry`);
      else status[name] = entry;
    } else if (!isJsonObject(raw)) {
      problems.push(`${path} is ${describeType(raw)}, expected an object`);
    } else {
      const map: JsonObject = {};
      for (const [key, rawEntry] of Object.entries(raw)) {
        const entry = decodeEntry(struct, rawEntry);
        if (entry === undefined) problems.push(`${path}['${key}'] is not a valid entry`);
        else if (struct.strictEntries === true && key !== goToLower(key)) problems.push(`${path}['${key}'] is not keyed by the lowercased resource ID`);
        else setOwnField(map, key, entry);
      }
      if (Object.keys(map).length > 0) status[name] = map;
    }
  }
  return { status, present: true, problems };
}

function decodeEntry(struct: GoStruct, value: JsonValue): JsonObject | undefined {
  if (value === null && struct.strictEntries !== true) return {};
  if (!isJsonObject(value) || (struct.strictEntries === true && typeof value[struct.entryFields[0]] !== "string")) return undefined;
  const entry: JsonObject = {};
  for (const field of struct.entryFields) {
    const fieldValue = value[field];
    if (typeof fieldValue === "string") entry[field] = fieldValue;
    else if (fieldValue !== undefined && fieldValue !== null) return undefined;
  }
  return entry;
}

/** A subtree as Go's encoder writes it; fields this hook does not know, beside known ones or inside a kept entry, are carried over from `stored`. */
export function encodeGoStruct(struct: GoStruct, status: object, stored: JsonValue | undefined): JsonObject {
  const storedSubtree = isJsonObject(stored) ? stored : {};
  const json: JsonObject = {};
  for (const [name, kind] of Object.entries(struct.fields)) {
    const value = (status as Readonly<Record<string, unknown>>)[name];
    const storedField = ownField(storedSubtree, name);
    if (value === undefined) continue;
    if (kind === "time") json[name] = value as string;
    else if (kind === "entry") json[name] = encodeEntry(struct, value as GoEntry, storedField);
    else if (Object.keys(value as object).length > 0) {
      const entries = value as Readonly<Record<string, GoEntry>>;
      const storedMap = isJsonObject(storedField) ? storedField : {};
      const map: JsonObject = {};
      for (const key of Object.keys(entries).sort(compareGoMapKeys)) setOwnField(map, key, encodeEntry(struct, entries[key], ownField(storedMap, key)));
      json[name] = map;
    }
  }
  return withUnknownFields(json, storedSubtree, new Set([...Object.keys(struct.fields), ...(struct.dropped ?? [])]));
}

function encodeEntry(struct: GoStruct, entry: GoEntry, stored: JsonValue | undefined): JsonObject {
  const json: JsonObject = {};
  for (const field of struct.entryFields) {
    const value = entry[field];
    if (value !== undefined) json[field] = value;
  }
  return isJsonObject(stored) ? withUnknownFields(json, stored, new Set(struct.entryFields)) : json;
}

function ownField(object: JsonObject, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(object, name) ? object[name] : undefined;
}
