/** One half of the identity status, written once for both: what differs is the Go struct the JSON mirrors and where desired identities sit (`slots`). */
import { goToLower } from "./goStrings";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";
import type { GoStruct } from "./goJson";
import { decodeGoStruct, encodeGoStruct, parseTimestamp } from "./goJson";
import { isFailedRetrievalError } from "./retrievalError";

/** Why a half has work to do by upstream's gate, or undefined when it says skip. */
export type GateReason = "desiredSetChanged" | "neverChecked" | "recheckDue";

/** Upstream's gate plus this hook's: an entry that records a real failure is worth another look inside the window. */
export type WorkReason = GateReason | "entryHasError";

/** Why a pass looks a half up: its gate's reason, a force (drift, unknown state), or a stored half that does not parse. */
export type PlanReason = WorkReason | "forced" | "storedStatusMalformed";

/** What a half has to do in a pass: nothing (its gate says skip), or ask Azure about `desired`. */
export type HalfPlan<Desired> = { readonly kind: "current" } | { readonly kind: "work"; readonly reason: PlanReason; readonly desired: Desired };

/** One identity a half should hold: its lowercase key and the canonical ID as declared. */
export interface KeyedIdentity {
  readonly key: string;
  readonly resourceId: string;
}

/** An entry of either half: string fields (Go's `*string`), any of them absent. */
type HalfEntry = Readonly<Partial<Record<string, string>>>;

/** A half as read: what is usable, whether it was there, and what was dropped (each problem naming its field). */
export interface StoredHalf<Status> {
  readonly status: Status;
  readonly present: boolean;
  readonly problems: readonly string[];
}

/** Where each desired identity sits: a `map` field's identities, an `entry` field's one identity. */
export type HalfSlots = Readonly<Record<string, readonly KeyedIdentity[] | KeyedIdentity>>;

/** One entry that differs between two versions of a half. */
export interface EntryChange {
  readonly field: string;
  /** Its key in a `map` field; undefined for an `entry` field. */
  readonly key: string | undefined;
  readonly change: "removed" | "added" | "changed";
  /** The entry fields that differ (for `changed`), in declaration order. */
  readonly fields: readonly string[];
}

export interface Half<Status, Desired> {
  /** The half as stored in a ServiceProviderCluster document. */
  read(document: JsonObject): StoredHalf<Status>;
  /** The subtree itself (as in a document, or as recorded in the provider's outputs). */
  readSubtree(subtree: unknown): StoredHalf<Status>;
  /** The subtree as Go's encoder writes it, fields this hook does not know carried over from `stored` (goJson.ts encodeGoStruct). */
  toJson(status: Status, stored?: JsonValue): JsonObject;
  /** Upstream's semantic equality: resource IDs case-insensitive, times by instant, a missing map equal to an empty one. */
  equals(left: Status, right: Status): boolean;
  entryEquals(left: object | undefined, right: object | undefined): boolean;
  /** Upstream's needsWork, plus: an entry recording a real failure has work. Undefined: skip. */
  workReason(desired: Desired, status: Status, now: Date): WorkReason | undefined;
  /** The plan of a pass: work when forced, when the stored half does not parse, or when the gate says so. */
  plan(desired: Desired, stored: StoredHalf<Status>, now: Date, force: boolean): HalfPlan<Desired>;
  /** The entries that differ between two versions, field by field in struct order, keys sorted. */
  changes(before: Status, after: Status): EntryChange[];
  /** Every entry of the half with its field and key. */
  entries(status: Status): Array<{ readonly field: string; readonly key: string | undefined; readonly entry: Readonly<Partial<Record<string, string>>> }>;
  /** After a conflict, nothing when the other writer left the half clean and current; else `next(stored)` unless it equals what is stored. */
  decideWrite(
    context: { readonly desired: Desired; readonly current: StoredHalf<Status>; readonly reread: boolean; readonly now: Date },
    next: (current: Status) => Status | undefined,
  ): Status | undefined;
}

/** Builds the operations of a half from its Go struct and where its desired identities sit. */
export function defineHalf<Status extends object, Desired>(struct: GoStruct, slots: (desired: Desired) => HalfSlots): Half<Status, Desired> {
  const [idField] = struct.entryFields;
  const view = (status: Status): Readonly<Record<string, unknown>> => status as Readonly<Record<string, unknown>>;
  const mapOf = (status: Status, field: string): Readonly<Record<string, HalfEntry>> => (view(status)[field] ?? {}) as Readonly<Record<string, HalfEntry>>;
  const entryOf = (status: Status, field: string): HalfEntry | undefined => view(status)[field] as HalfEntry | undefined;

  const entryEquals = (left: object | undefined, right: object | undefined): boolean =>
    left === undefined || right === undefined ? left === right : changedFields(left as HalfEntry, right as HalfEntry, struct.entryFields, idField).length === 0;

  // Whether the stored half holds exactly the desired identities (keys only, values ignored).
  const holds = (desired: Desired, status: Status): boolean =>
    Object.entries(slots(desired)).every(([field, identities]) => {
      if (Array.isArray(identities)) return holdsExactly(identities as readonly KeyedIdentity[], mapOf(status, field));
      const storedId = entryOf(status, field)?.[idField];
      return storedId !== undefined && goToLower(storedId) === (identities as KeyedIdentity).key;
    });

  const entries = (status: Status): Array<{ field: string; key: string | undefined; entry: HalfEntry }> =>
    Object.entries(struct.fields).flatMap(([name, kind]): Array<{ field: string; key: string | undefined; entry: HalfEntry }> => {
      if (kind === "map") return Object.entries(mapOf(status, name)).map(([key, entry]) => ({ field: name, key, entry }));
      const entry = kind === "entry" ? entryOf(status, name) : undefined;
      return entry === undefined ? [] : [{ field: name, key: undefined, entry }];
    });

  const half: Half<Status, Desired> = {
    read: (document) => {
      const properties = isJsonObject(document.properties) ? document.properties : {};
      const status = isJsonObject(properties.status) ? properties.status : {};
      return decodeGoStruct(struct, status[struct.name]) as StoredHalf<Status>;
    },
    readSubtree: (subtree) => decodeGoStruct(struct, subtree) as StoredHalf<Status>,
    toJson: (status, stored) => encodeGoStruct(struct, status, stored),
    equals: (left, right) =>
      Object.entries(struct.fields).every(([name, kind]) => {
        if (kind === "time") return sameInstant(view(left)[name] as string | undefined, view(right)[name] as string | undefined);
        if (kind === "entry") return entryEquals(entryOf(left, name), entryOf(right, name));
        return sameEntries(mapOf(left, name), mapOf(right, name), entryEquals);
      }),
    entryEquals,
    workReason: (desired, status, now) => {
      const recheckTime = Object.keys(struct.fields).find((name) => struct.fields[name] === "time");
      const gate = gateReason(holds(desired, status), recheckTime === undefined ? undefined : (view(status)[recheckTime] as string | undefined), now);
      if (gate !== undefined) return gate;
      return entries(status).some(({ entry }) => isFailedRetrievalError(entry.retrievalError)) ? "entryHasError" : undefined;
    },
    plan: (desired, stored, now, force) => {
      const reason = force ? "forced" : stored.problems.length > 0 ? "storedStatusMalformed" : half.workReason(desired, stored.status, now);
      return reason === undefined ? { kind: "current" } : { kind: "work", reason, desired };
    },
    changes: (before, after) =>
      Object.entries(struct.fields).flatMap(([name, kind]): EntryChange[] => {
        if (kind === "time") return [];
        const [beforeMap, afterMap]: Array<Readonly<Record<string, HalfEntry | undefined>>> =
          kind === "map" ? [mapOf(before, name), mapOf(after, name)] : [{ "": entryOf(before, name) }, { "": entryOf(after, name) }];
        const key = (mapKey: string): string | undefined => (kind === "map" ? mapKey : undefined);
        const changes: EntryChange[] = [];
        for (const mapKey of Object.keys(beforeMap).sort()) {
          const [was, now] = [beforeMap[mapKey], afterMap[mapKey]];
          if (was === undefined) continue;
          if (now === undefined) changes.push({ field: name, key: key(mapKey), change: "removed", fields: [] });
          else {
            const fields = changedFields(was, now, struct.entryFields, idField);
            if (fields.length > 0) changes.push({ field: name, key: key(mapKey), change: "changed", fields });
          }
        }
        for (const mapKey of Object.keys(afterMap).sort()) {
          if (afterMap[mapKey] !== undefined && beforeMap[mapKey] === undefined) changes.push({ field: name, key: key(mapKey), change: "added", fields: [] });
        }
        return changes;
      }),
    entries,
    decideWrite: ({ desired, current, reread, now }, next) => {
      const clean = current.present && current.problems.length === 0;
      // The other writer left a complete, current half: our answers are older than theirs.
      if (reread && clean && half.workReason(desired, current.status, now) === undefined) return undefined;
      const decided = next(current.status);
      return decided === undefined || (clean && half.equals(decided, current.status)) ? undefined : decided;
    },
  };
  return half;
}

/** Whether a stored map holds exactly the desired identities (keys only; values ignored). */
function holdsExactly(desired: readonly KeyedIdentity[], stored: Readonly<Record<string, unknown>>): boolean {
  return Object.keys(stored).length === desired.length && desired.every((identity) => Object.prototype.hasOwnProperty.call(stored, identity.key));
}

/** Upstream's needsWork: a stored set other than the desired one, no recheck time, or one that has come. */
function gateReason(holdsDesired: boolean, earliestRecheckTime: string | undefined, now: Date): GateReason | undefined {
  if (!holdsDesired) return "desiredSetChanged";
  if (parseTimestamp(earliestRecheckTime) === undefined) return "neverChecked";
  return recheckDue(earliestRecheckTime, now) ? "recheckDue" : undefined;
}

/** Whether a recheck time has come (now at or after it); a missing or unparseable one has. */
export function recheckDue(earliestRecheckTime: string | undefined, now: Date): boolean {
  const recheck = parseTimestamp(earliestRecheckTime);
  return recheck === undefined || now.getTime() >= recheck.getTime();
}

/** Times compare by instant, as upstream registers them (both absent is equal). */
function sameInstant(left: string | undefined, right: string | undefined): boolean {
  return parseTimestamp(left)?.getTime() === parseTimestamp(right)?.getTime();
}

/** Entry maps equal under `entriesEqual`: the same keys, each entry equal. */
function sameEntries<Entry>(
  left: Readonly<Record<string, Entry>>,
  right: Readonly<Record<string, Entry>>,
  entriesEqual: (a: Entry, b: Entry) => boolean,
): boolean {
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length && keys.every((key) => Object.prototype.hasOwnProperty.call(right, key) && entriesEqual(left[key], right[key]))
  );
}

/** The fields of an entry that differ, in `fields`' order: `idField` (its resource ID) case-insensitively, the others exactly. */
function changedFields(before: HalfEntry, after: HalfEntry, fields: readonly string[], idField: string): string[] {
  return fields.filter((field) => {
    const [left, right] = [before[field], after[field]];
    return field === idField && left !== undefined && right !== undefined ? goToLower(left) !== goToLower(right) : left !== right;
  });
}
