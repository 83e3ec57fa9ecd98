/** One half of the identity status, written once for both: what differs is the Go struct the JSON mirrors and where desired identities sit (`slots`). */
import { goToLower } from "./goStrings";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";
import type { GoEntry, GoStruct, StoredHalf } from "./goJson";
import { decodeGoStruct, encodeGoStruct, formatTimestamp, parseTimestamp } from "./goJson";
import { isFailedRetrievalError } from "./retrievalError";

/** Why a half has work by upstream's gate (another set, no recheck time, one that has come), or by this hook's: an entry records a real failure. */
export type WorkReason = "desiredSetChanged" | "neverChecked" | "recheckDue" | "entryHasError";

/** Why a pass looks a half up: its gate's reason, a force (drift, unknown state), or a stored half that does not parse. */
export type PlanReason = WorkReason | "forced" | "storedStatusMalformed";

/** What a half has to do in a pass: nothing (its gate says skip), or ask Azure about `desired`. */
export type HalfPlan<Desired> = { readonly kind: "current" } | { readonly kind: "work"; readonly reason: PlanReason; readonly desired: Desired };

/** One identity a half should hold: its lowercase key and the canonical ID as declared. */
export interface DesiredIdentity {
  readonly key: string;
  readonly resourceId: string;
}

/** One entry that differs between two versions of a half; `key` is undefined for an `entry` field, `fields` lists what differs in a `changed` one. */
export interface EntryChange {
  readonly field: string;
  readonly key: string | undefined;
  readonly change: "removed" | "added" | "changed";
  readonly fields: readonly string[];
}

/** An entry of a half with its field, and its key in a `map` field. */
type EntryAt = { readonly field: string; readonly key: string | undefined; readonly entry: GoEntry };

export interface Half<Status, Desired> {
  /** The half as stored in a ServiceProviderCluster document. */
  read(document: JsonObject): StoredHalf<Status>;
  /** The subtree itself (as in a document, or as recorded in the provider's outputs). */
  readSubtree(subtree: unknown): StoredHalf<Status>;
  /** The subtree as Go's encoder writes it, fields this hook does not know carried over from `stored`. */
  toJson(status: Status, stored?: JsonValue): JsonObject;
  /** Upstream's semantic equality: resource IDs case-insensitive, times by instant, a missing map equal to an empty one. */
  equals(left: Status, right: Status): boolean;
  entryEquals(left: object | undefined, right: object | undefined): boolean;
  /** Upstream's needsWork, plus: an entry recording a real failure has work. Undefined: skip. */
  workReason(desired: Desired, status: Status, now: Date): WorkReason | undefined;
  /** Work when forced, when the stored half does not parse, or when the gate says so. */
  plan(desired: Desired, stored: StoredHalf<Status>, now: Date, force: boolean): HalfPlan<Desired>;
  /** The entries that differ between two versions, field by field in struct order, keys sorted. */
  changes(before: Status, after: Status): EntryChange[];
  entries(status: Status): EntryAt[];
  /**
   * `decided` with the stored recheck time in place of its own while that one is still valid and the entries are the same: a
   * pass that finds nothing new (a forced one included) leaves the half as it is. A recheck that was due still moves it, as
   * upstream's does; a decided half without a recheck time (it records a failure) is left as it is.
   */
  keepRecheckTime(decided: Status, stored: Status, now: Date): Status;
  /** After a conflict, nothing when the other writer left the half clean and current; else `next(stored)` (its recheck time kept while nothing changed) unless it equals what is stored. */
  decideWrite(
    context: { readonly desired: Desired; readonly current: StoredHalf<Status>; readonly reread: boolean; readonly now: Date },
    next: (current: Status) => Status | undefined,
  ): Status | undefined;
}

/** Builds the operations of a half from its Go struct and where its desired identities sit (`slots`: a `map` field's identities, an `entry` field's one). */
export function defineHalf<Status extends object, Desired>(
  struct: GoStruct,
  slots: (desired: Desired) => Readonly<Record<string, readonly DesiredIdentity[] | DesiredIdentity>>,
): Half<Status, Desired> {
  const [idField] = struct.entryFields;
  const recheckField = Object.keys(struct.fields).find((name) => struct.fields[name] === "time");
  const view = (status: Status): Readonly<Record<string, unknown>> => status as Readonly<Record<string, unknown>>;
  const mapOf = (status: Status, field: string): Readonly<Record<string, GoEntry>> => (view(status)[field] ?? {}) as Readonly<Record<string, GoEntry>>;
  const entryOf = (status: Status, field: string): GoEntry | undefined => view(status)[field] as GoEntry | undefined;

  const entryEquals = (left: object | undefined, right: object | undefined): boolean =>
    left === undefined || right === undefined ? left === right : changedFields(left as GoEntry, right as GoEntry, struct.entryFields, idField).length === 0;

  // Whether the stored half holds exactly the desired identities (keys only, values ignored).
  const holds = (desired: Desired, status: Status): boolean =>
    Object.entries(slots(desired)).every(([field, wanted]) => {
      if ("key" in wanted) {
        const storedId = entryOf(status, field)?.[idField];
        return storedId !== undefined && goToLower(storedId) === wanted.key;
      }
      const keys = wanted.map((identity) => identity.key);
      return hasExactly(mapOf(status, field), keys);
    });

  const entries = (status: Status): EntryAt[] =>
    Object.entries(struct.fields).flatMap(([name, kind]): EntryAt[] => {
      if (kind === "map") return Object.entries(mapOf(status, name)).map(([key, entry]) => ({ field: name, key, entry }));
      const entry = kind === "entry" ? entryOf(status, name) : undefined;
      return entry === undefined ? [] : [{ field: name, key: undefined, entry }];
    });

  const half: Half<Status, Desired> = {
    read: (document) => {
      const properties = isJsonObject(document.properties) ? document.properties : {};
      const status = isJsonObject(properties.status) ? properties.status : {};
      return half.readSubtree(status[struct.name]);
    },
    readSubtree: (subtree) => decodeGoStruct(struct, subtree) as StoredHalf<Status>,
    toJson: (status, stored) => encodeGoStruct(struct, status, stored),
    equals: (left, right) =>
      Object.entries(struct.fields).every(([name, kind]) => {
        // Times compare by instant, as upstream registers them (both absent is equal).
        if (kind === "time") return parseTimestamp(view(left)[name])?.getTime() === parseTimestamp(view(right)[name])?.getTime();
        if (kind === "entry") return entryEquals(entryOf(left, name), entryOf(right, name));
        const [leftMap, rightMap] = [mapOf(left, name), mapOf(right, name)];
        return hasExactly(rightMap, Object.keys(leftMap)) && Object.keys(leftMap).every((key) => entryEquals(leftMap[key], rightMap[key]));
      }),
    entryEquals,
    workReason: (desired, status, now) => {
      const recheckTime = recheckField === undefined ? undefined : (view(status)[recheckField] as string | undefined);
      if (!holds(desired, status)) return "desiredSetChanged";
      if (parseTimestamp(recheckTime) === undefined) return "neverChecked";
      if (recheckDue(recheckTime, now)) return "recheckDue";
      return entries(status).some(({ entry }) => isFailedRetrievalError(entry.retrievalError)) ? "entryHasError" : undefined;
    },
    plan: (desired, stored, now, force) => {
      const reason = force ? "forced" : stored.problems.length > 0 ? "storedStatusMalformed" : half.workReason(desired, stored.status, now);
      return reason === undefined ? { kind: "current" } : { kind: "work", reason, desired };
    },
    changes: (before, after) =>
      Object.entries(struct.fields).flatMap(([name, kind]): EntryChange[] => {
        if (kind === "time") return [];
        const [beforeMap, afterMap]: Array<Readonly<Record<string, GoEntry | undefined>>> =
          kind === "map" ? [mapOf(before, name), mapOf(after, name)] : [{ "": entryOf(before, name) }, { "": entryOf(after, name) }];
        const key = (mapKey: string): string | undefined => (kind === "map" ? mapKey : undefined);
        const changes: EntryChange[] = [];
        for (const mapKey of Object.keys(beforeMap).sort()) {
          const [was, now] = [beforeMap[mapKey], afterMap[mapKey]];
          const fields = was === undefined || now === undefined ? [] : changedFields(was, now, struct.entryFields, idField);
          if (was !== undefined && now === undefined) changes.push({ field: name, key: key(mapKey), change: "removed", fields });
          else if (fields.length > 0) changes.push({ field: name, key: key(mapKey), change: "changed", fields });
        }
        for (const mapKey of Object.keys(afterMap).sort()) {
          if (afterMap[mapKey] !== undefined && beforeMap[mapKey] === undefined) changes.push({ field: name, key: key(mapKey), change: "added", fields: [] });
        }
        return changes;
      }),
    entries,
    keepRecheckTime: (decided, stored, now) => {
      if (recheckField === undefined) return decided;
      const storedRecheck = view(stored)[recheckField] as string | undefined;
      if (view(decided)[recheckField] === undefined || recheckDue(storedRecheck, now)) return decided;
      const kept = { ...decided, [recheckField]: storedRecheck } as Status;
      return half.equals(kept, stored) ? kept : decided;
    },
    decideWrite: ({ desired, current, reread, now }, next) => {
      const clean = current.present && current.problems.length === 0;
      // The other writer left a complete, current half: our answers are older than theirs.
      if (reread && clean && half.workReason(desired, current.status, now) === undefined) return undefined;
      const decided = next(current.status);
      if (decided === undefined) return undefined;
      const kept = half.keepRecheckTime(decided, current.status, now);
      return clean && half.equals(kept, current.status) ? undefined : kept;
    },
  };
  return half;
}

export const recheckIntervalInMs = 12 * 60 * 60 * 1000;

/** Upstream's recheck time, uniformly in [12 h, 18 h) from now: `now + 12 h + random × 0.5 × 12 h`, whole seconds; `random` is in [0, 1). */
export function nextRecheckTime(now: Date, random: () => number): string {
  const jitter = Math.min(Math.max(random(), 0), 0.999999) * 0.5 * recheckIntervalInMs;
  return formatTimestamp(new Date(now.getTime() + recheckIntervalInMs + jitter));
}

/** Whether a recheck time has come (now at or after it); a missing or unparseable one has. */
export function recheckDue(earliestRecheckTime: string | undefined, now: Date): boolean {
  const recheck = parseTimestamp(earliestRecheckTime);
  return recheck === undefined || now.getTime() >= recheck.getTime();
}

function hasExactly(record: Readonly<Record<string, unknown>>, keys: readonly string[]): boolean {
  return Object.keys(record).length === keys.length && keys.every((key) => Object.prototype.hasOwnProperty.call(record, key));
}

/** The fields of an entry that differ, in `fields`' order: `idField` (its resource ID) case-insensitively, the others exactly. */
function changedFields(before: GoEntry, after: GoEntry, fields: readonly string[], idField: string): string[] {
  return fields.filter((field) => {
    const [left, right] = [before[field], after[field]];
    return field === idField && left !== undefined && right !== undefined ? goToLower(left) !== goToLower(right) : left !== right;
  });
}
