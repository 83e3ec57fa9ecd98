/**
 * The data plane operators' half as the provider's outputs record it: the owned subtree of the
 * ServiceProviderCluster document, written small, because the engine keeps every output of every
 * cluster in state and rewrites it on each `up`; stored as one JSON text.
 *
 * In Cosmos an entry is keyed by its identity's lowercased ARM ID and repeats that ID in
 * `resourceID`: most of an entry's bytes. In the outputs an entry that a declared operator names
 * sits under the operator's name instead, with `keyHash` (the first 12 hex digits of the SHA-256 of
 * the Cosmos key) in place of both IDs. The provider finds the key again from the candidates at
 * hand: the desired set during `diff` (the same operators, or the inputs' digest would differ) and
 * the document's keys during `refresh`. `resourceID` is kept only when it is not the key in another
 * case. Entries no declared operator names stay in `identities`, as in Cosmos.
 *
 * Decoding gives back the subtree up to the case of `resourceID`, which every comparison of stored
 * entries ignores (upstream's rule). Pure: only node:crypto.
 */
import { createHash } from "node:crypto";
import { describeType } from "./azureResourceId";
import { goToLower } from "./goStrings";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject, parsedJsonText, sortedRecord } from "./json";
import { isFailedRetrievalError, isNotFoundRetrievalError } from "./retrievalError";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities } from "./serviceProviderClusterDocument";
import { boundedMemo } from "./boundedMemo";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";

export interface OperatorStatusEntry {
  readonly keyHash: string;
  readonly clientId?: string;
  readonly principalId?: string;
  readonly retrievalError?: string;
  /** Only when the entry's resourceID is not its key in another case. */
  readonly resourceID?: string;
}

/** `status` in the provider outputs, as an object. */
export interface OutputsStatus {
  readonly earliestRecheckTime?: string;
  /** By declared operator name. Two operators naming one identity both carry its entry. */
  readonly operators?: Readonly<Record<string, OperatorStatusEntry>>;
  /** Entries no declared operator names, keyed and written as in Cosmos. */
  readonly identities?: Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>>;
}

/** The 12 hex digits identifying a Cosmos key in the outputs. */
export const keyHashPattern = /^[0-9a-f]{12}$/;
export const keyHashOf: (key: string) => string = boundedMemo((key) => createHash("sha256").update(key, "utf8").digest("hex").slice(0, 12));

/** Finds the key of a key hash among the keys at hand; undefined when it is not among them. */
export function keyFinder(candidateKeys: Iterable<string>): (keyHash: string) => string | undefined {
  const keysByHash = new Map<string, string>();
  for (const key of candidateKeys) keysByHash.set(keyHashOf(key), key);
  return (keyHash) => keysByHash.get(keyHash);
}

/**
 * Digest of the declared inputs `diff` compares (the checked operator map, or null; the service
 * managed identity or null; the identity URL, left out when null so that digests without one stay
 * the same), so the outputs need not repeat the inputs.
 */
export function inputsDigest(
  dataPlaneOperators: Readonly<Record<string, string>> | null,
  serviceManagedIdentity: string | null,
  identityUrl: string | null = null,
): string {
  const operators =
    dataPlaneOperators === null
      ? null
      : Object.keys(dataPlaneOperators)
          .sort()
          .map((name) => [name, dataPlaneOperators[name]]);
  return createHash("sha256")
    .update(JSON.stringify(identityUrl === null ? [operators, serviceManagedIdentity] : [operators, serviceManagedIdentity, identityUrl]), "utf8")
    .digest("base64url")
    .slice(0, 22);
}

/** Operator names by key hash: from a declared map (name → key) or from outputs already written. */
export type OperatorNamesByKeyHash = ReadonlyMap<string, readonly string[]>;

export function operatorNamesFromKeys(keysByOperator: Iterable<readonly [string, string]>): OperatorNamesByKeyHash {
  return namesByKeyHash(Array.from(keysByOperator, ([name, key]) => [name, keyHashOf(key)] as const));
}

export function operatorNamesFromOutputs(status: OutputsStatus): OperatorNamesByKeyHash {
  return namesByKeyHash(Object.entries(status.operators ?? {}).map(([name, entry]) => [name, entry.keyHash] as const));
}

function namesByKeyHash(pairs: ReadonlyArray<readonly [string, string]>): OperatorNamesByKeyHash {
  const names = new Map<string, string[]>();
  for (const [name, hash] of pairs) names.set(hash, [...(names.get(hash) ?? []), name]);
  return names;
}

export function encodeOutputsStatus(status: DataPlaneOperatorsManagedIdentities, operatorNames: OperatorNamesByKeyHash): OutputsStatus {
  const operators: Record<string, OperatorStatusEntry> = {};
  const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
  const subtree = dataPlaneHalf.toJson(status) as { identities?: Record<string, DataPlaneOperatorManagedIdentityEntry> };
  for (const [key, entry] of Object.entries(subtree.identities ?? {})) {
    const keyHash = keyHashOf(key);
    const names = operatorNames.get(keyHash) ?? [];
    if (names.length === 0) {
      identities[key] = entry;
      continue;
    }
    const { resourceID, ...values } = entry;
    const compact: OperatorStatusEntry = { keyHash, ...values, ...(goToLower(resourceID) === key ? {} : { resourceID }) };
    for (const name of names) operators[name] = compact;
  }
  return {
    ...(status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.earliestRecheckTime }),
    ...(Object.keys(operators).length === 0 ? {} : { operators: sortedRecord(operators) }),
    ...(Object.keys(identities).length === 0 ? {} : { identities }),
  };
}

/**
 * Gives back the subtree. An operator whose key is not among `candidateKeys` (its identity is gone
 * from the document) gets the stand-in key `(operator <name>)`, which equals no real key.
 */
export function decodeOutputsStatus(status: OutputsStatus, candidateKeys: Iterable<string>): DataPlaneOperatorsManagedIdentities {
  const keyOf = keyFinder(candidateKeys);
  const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = { ...status.identities };
  for (const [name, entry] of Object.entries(status.operators ?? {})) {
    const key = keyOf(entry.keyHash) ?? `(operator ${name})`;
    const { keyHash: _keyHash, resourceID, ...values } = entry;
    identities[key] = { resourceID: resourceID ?? key, ...values };
  }
  return {
    ...(Object.keys(identities).length === 0 ? {} : { identities }),
    ...(status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.earliestRecheckTime }),
  };
}

/**
 * The JSON text of {@link OutputsStatus}, each operator's entry written as a list,
 * `[keyHash, clientId, principalId, retrievalError, resourceID]` (null for an absent value,
 * trailing nulls left out), which keeps four field names out of state per identity.
 */
export function outputsStatusText(status: OutputsStatus): string {
  const operators =
    status.operators === undefined ? undefined : Object.fromEntries(Object.entries(status.operators).map(([name, entry]) => [name, entryList(entry)]));
  return JSON.stringify({ ...status, ...(operators === undefined ? {} : { operators }) });
}

const listFields = ["keyHash", "clientId", "principalId", "retrievalError", "resourceID"] as const;

function entryList(entry: OperatorStatusEntry): Array<string | null> {
  const list = listFields.map((field) => entry[field] ?? null);
  while (list.length > 1 && list[list.length - 1] === null) list.pop();
  return list;
}

/** Reads `status` from stored outputs (JSON text); malformed parts are named in `problems`. */
export function readOutputsStatusText(value: unknown): { readonly status: OutputsStatus; readonly problems: readonly string[] } {
  if (typeof value !== "string") {
    return { status: {}, problems: [`is ${describeType(value)}, expected the status as JSON text`] };
  }
  const parsed = parsedJsonText(value);
  return parsed === undefined ? { status: {}, problems: ["is not JSON text"] } : readOutputsStatusObject(parsed);
}

/**
 * The `status` output as a program sees it: the object, whether the state holds its JSON text or
 * the object itself (what a `setMocks` test may return); `undefined` for anything else.
 */
export function statusFromOutputs(value: unknown): OutputsStatus | undefined {
  if (typeof value === "string") {
    const read = readOutputsStatusText(value);
    return read.problems.length === 0 ? read.status : undefined;
  }
  return isJsonObject(value) ? value : undefined;
}

/** How many identities the status records, and how many resolved, were not found or failed; two operators naming one identity count once. */
export function statusCounts(status: OutputsStatus): {
  readonly identityCount: number;
  readonly resolvedCount: number;
  readonly notFoundCount: number;
  readonly failedCount: number;
} {
  const byKey = new Map<string, { readonly retrievalError?: string }>();
  for (const entry of Object.values(status.operators ?? {})) byKey.set(entry.keyHash, entry);
  for (const [key, entry] of Object.entries(status.identities ?? {})) byKey.set(key, entry);
  const entries = [...byKey.values()];
  const notFoundCount = entries.filter((entry) => isNotFoundRetrievalError(entry.retrievalError)).length;
  const failedCount = entries.filter((entry) => isFailedRetrievalError(entry.retrievalError)).length;
  return { identityCount: entries.length, resolvedCount: entries.length - notFoundCount - failedCount, notFoundCount, failedCount };
}

/** Reads the parsed JSON text of `status`; malformed parts are named in `problems`. */
function readOutputsStatusObject(value: unknown): { readonly status: OutputsStatus; readonly problems: readonly string[] } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { status: {}, problems: [`is ${describeType(value)}, expected an object`] };
  }
  const record = value as Record<string, unknown>;
  const subtree = dataPlaneHalf.readSubtree({ identities: record.identities ?? null, earliestRecheckTime: record.earliestRecheckTime ?? null });
  const problems = [...subtree.problems];
  const operators: Record<string, OperatorStatusEntry> = {};
  const rawOperators = record.operators;
  if (rawOperators !== undefined && rawOperators !== null && !isJsonObject(rawOperators)) {
    problems.push(`operators is ${describeType(rawOperators)}, expected an object`);
  }
  for (const [name, raw] of Object.entries(isJsonObject(rawOperators as JsonValue) ? (rawOperators as JsonObject) : {})) {
    const entry = readOperatorEntry(raw);
    if (entry === undefined) problems.push(`operators['${name}'] is not a valid entry`);
    else operators[name] = entry;
  }
  return {
    status: {
      ...(subtree.status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: subtree.status.earliestRecheckTime }),
      ...(Object.keys(operators).length === 0 ? {} : { operators }),
      ...(subtree.status.identities === undefined ? {} : { identities: subtree.status.identities }),
    },
    problems,
  };
}

function readOperatorEntry(raw: JsonValue): OperatorStatusEntry | undefined {
  // The stored list, or the object it stands for.
  const value: JsonValue = Array.isArray(raw) ? Object.fromEntries(raw.map((item, index) => [listFields[index] ?? `extra${index}`, item])) : raw;
  if (!isJsonObject(value) || (Array.isArray(raw) && raw.length > listFields.length)) return undefined;
  if (typeof value.keyHash !== "string" || !keyHashPattern.test(value.keyHash)) {
    return undefined;
  }
  const entry: { -readonly [K in keyof OperatorStatusEntry]: OperatorStatusEntry[K] } = { keyHash: value.keyHash };
  for (const field of ["clientId", "principalId", "retrievalError", "resourceID"] as const) {
    const fieldValue = value[field];
    if (typeof fieldValue === "string") entry[field] = fieldValue;
    else if (fieldValue !== undefined && fieldValue !== null) return undefined;
  }
  return entry;
}
