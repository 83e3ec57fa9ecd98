/**
 * What both halves of the status share (`dataPlaneOperatorsManagedIdentities` and
 * `msiManagedIdentities`): upstream's needsWork gate and its semantic equality. Each half keeps
 * only what differs: which identities it holds and what an entry's values are. Pure.
 */
import { goToLower } from "./goStrings";

/** Why a half has work to do by upstream's gate, or undefined when it says skip. */
export type GateReason = "desiredSetChanged" | "neverChecked" | "recheckDue";

/** One identity a half should hold: its lowercase key and the canonical ID as declared. */
export interface KeyedIdentity {
  readonly key: string;
  readonly resourceId: string;
}

/** Whether a stored map holds exactly the desired identities (keys only; values ignored). */
export function holdsExactly(desired: readonly KeyedIdentity[], stored: Readonly<Record<string, unknown>>): boolean {
  return Object.keys(stored).length === desired.length && desired.every((identity) => Object.prototype.hasOwnProperty.call(stored, identity.key));
}

/**
 * Upstream's needsWork: a stored set other than the desired one, no recheck time, or a recheck
 * time that has come (now at or after it).
 */
export function gateReason(holdsDesired: boolean, earliestRecheckTime: string | undefined, now: Date): GateReason | undefined {
  if (!holdsDesired) return "desiredSetChanged";
  const recheck = parseTimestamp(earliestRecheckTime);
  if (recheck === undefined) return "neverChecked";
  return now.getTime() >= recheck.getTime() ? "recheckDue" : undefined;
}

/** Parses an RFC 3339 timestamp; undefined when absent or unparseable. */
export function parseTimestamp(value: unknown): Date | undefined {
  if (typeof value !== "string" || value.length === 0) {
    return undefined;
  }
  const instant = new Date(value);
  return Number.isNaN(instant.getTime()) ? undefined : instant;
}

/** Times compare by instant, as upstream registers them (both absent is equal). */
export function sameInstant(left: string | undefined, right: string | undefined): boolean {
  return parseTimestamp(left)?.getTime() === parseTimestamp(right)?.getTime();
}

/** Resource IDs compare case-insensitively, as upstream registers them (both absent is equal). */
export function sameResourceId(left: string | undefined, right: string | undefined): boolean {
  return left === undefined || right === undefined ? left === right : goToLower(left) === goToLower(right);
}

/** Entry maps equal under `entriesEqual`: the same keys, each entry equal; a missing map equals an empty one. */
export function sameEntries<Entry>(
  left: Readonly<Record<string, Entry>> | undefined,
  right: Readonly<Record<string, Entry>> | undefined,
  entriesEqual: (left: Entry, right: Entry) => boolean,
): boolean {
  const leftMap = left ?? {};
  const rightMap = right ?? {};
  const keys = Object.keys(leftMap);
  return (
    keys.length === Object.keys(rightMap).length &&
    keys.every((key) => Object.prototype.hasOwnProperty.call(rightMap, key) && entriesEqual(leftMap[key], rightMap[key]))
  );
}

/**
 * The fields of an entry that differ between two versions of it, in `fields`' order: `idField`
 * (the entry's resource ID) compared case-insensitively, the others exactly. What drift lines name.
 */
export function changedFields<Field extends string>(
  before: Readonly<Partial<Record<Field, string>>>,
  after: Readonly<Partial<Record<Field, string>>>,
  fields: readonly Field[],
  idField: Field,
): Field[] {
  return fields.filter((field) => (field === idField ? !sameResourceId(before[field], after[field]) : before[field] !== after[field]));
}
