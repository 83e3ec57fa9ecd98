/**
 * The data plane operators' half as the provider's outputs record it (docs/design.md, "Small outputs"): an entry a declared
 * operator names sits under the operator's name with `keyHash` (12 hex digits of the SHA-256 of its Cosmos key) in place of
 * its key, found again among the keys at hand (the desired set during `diff`, the document's during `refresh`); other entries
 * stay in `identities`, as in Cosmos. Decoding gives back the subtree up to the case of `resourceID`, which every comparison ignores.
 */
import { createHash } from "node:crypto";
import { describeType } from "./azureResourceId";
import type { GoStruct } from "./goJson";
import { decodeGoStruct } from "./goJson";
import { goToLower } from "./goStrings";
import { isJsonObject, parsedJsonText, sortedRecord } from "./json";
import { isFailedRetrievalError, isNotFoundRetrievalError } from "./retrievalError";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities } from "./serviceProviderClusterDocument";
import { boundedMemo } from "./boundedMemo";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";
import type { StoredHalf } from "./goJson";

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

/** A stored status as read (statusHalf.ts): what is usable, and what was dropped, each problem naming its field. */
export type StatusReading<Status> = Omit<StoredHalf<Status>, "present">;

/** `fields` without the undefined ones and the empty lists and objects: outputs leave out what is empty. */
export function presentFields<Fields extends object>(fields: Fields): { [Key in keyof Fields]?: Exclude<Fields[Key], undefined> } {
  const present = (value: unknown): boolean => value !== undefined && (typeof value !== "object" || value === null || Object.keys(value).length > 0);
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => present(value))) as { [Key in keyof Fields]?: Exclude<Fields[Key], undefined> };
}

/** The 12 hex digits identifying a Cosmos key in the outputs. */
export const keyHashPattern = /^[0-9a-f]{12}$/;
export const keyHashOf: (key: string) => string = boundedMemo((key) => createHash("sha256").update(key, "utf8").digest("hex").slice(0, 12));

/** The keys at hand by their key hash: where a hash in the outputs finds its key again. */
export function keysByHash(candidateKeys: Iterable<string>): ReadonlyMap<string, string> {
  return new Map(Array.from(candidateKeys, (key) => [keyHashOf(key), key] as const));
}

/**
 * Digest of the declared inputs `diff` compares (the checked operator map, or null; the service managed identity or null; the
 * identity URL, left out when null so that digests without one stay the same), so the outputs need not repeat the inputs.
 */
export function inputsDigest(
  dataPlaneOperators: Readonly<Record<string, string>> | null,
  serviceManagedIdentity: string | null,
  identityUrl: string | null = null,
): string {
  const operators = dataPlaneOperators && Object.entries(dataPlaneOperators).sort(([left], [right]) => (left < right ? -1 : 1));
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
  const subtree = dataPlaneHalf.toJson(status) as DataPlaneOperatorsManagedIdentities;
  for (const [key, entry] of Object.entries(subtree.identities ?? {})) {
    const keyHash = keyHashOf(key);
    const names = operatorNames.get(keyHash) ?? [];
    if (names.length === 0) identities[key] = entry;
    const { resourceID, ...values } = entry;
    for (const name of names) operators[name] = { keyHash, ...values, ...(goToLower(resourceID) === key ? {} : { resourceID }) };
  }
  return presentFields({ earliestRecheckTime: status.earliestRecheckTime, operators: sortedRecord(operators), identities });
}

/** Gives back the subtree; an operator whose key is not at hand (its identity is gone from the document) gets the key `(operator <name>)`. */
export function decodeOutputsStatus(status: OutputsStatus, candidateKeys: Iterable<string>): DataPlaneOperatorsManagedIdentities {
  const keys = keysByHash(candidateKeys);
  const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = { ...status.identities };
  for (const [name, { keyHash, resourceID, ...values }] of Object.entries(status.operators ?? {})) {
    const key = keys.get(keyHash) ?? `(operator ${name})`;
    identities[key] = { resourceID: resourceID ?? key, ...values };
  }
  return presentFields({ identities, earliestRecheckTime: status.earliestRecheckTime });
}

/** An operator's entry as a list, `[keyHash, clientId, principalId, retrievalError, resourceID]`, which keeps field names out of state. */
const listFields = ["keyHash", "clientId", "principalId", "retrievalError", "resourceID"] as const;

/** The JSON text of {@link OutputsStatus}, each operator's entry written as its list (null for an absent value, trailing nulls left out). */
export function outputsStatusText(status: OutputsStatus): string {
  const asList = (entry: OperatorStatusEntry): Array<string | null> => {
    const list = listFields.map((field) => entry[field] ?? null);
    while (list.length > 1 && list[list.length - 1] === null) list.pop();
    return list;
  };
  const operators =
    status.operators === undefined ? {} : { operators: Object.fromEntries(Object.entries(status.operators).map(([name, entry]) => [name, asList(entry)])) };
  return JSON.stringify({ ...status, ...operators });
}

/** The operators' map read as Go's decoder reads a struct's map field (goJson.ts), entries being objects of {@link listFields}. */
const operatorsStruct: GoStruct = {
  name: "operators",
  problemsNamed: { subtree: "status", fieldPrefix: "" },
  fields: { operators: "map" },
  entryFields: listFields,
};

/** Reads `status` from stored outputs (JSON text), each operator's entry a list or the object it stands for. */
export function readOutputsStatusText(value: unknown): StatusReading<OutputsStatus> {
  if (typeof value !== "string") return { status: {}, problems: [`is ${describeType(value)}, expected the status as JSON text`] };
  const parsed = parsedJsonText(value);
  if (parsed === undefined) return { status: {}, problems: ["is not JSON text"] };
  if (!isJsonObject(parsed)) return { status: {}, problems: [`is ${describeType(parsed)}, expected an object`] };
  const subtree = dataPlaneHalf.readSubtree(parsed);
  // An entry that is not a list of at most five values or an object, or lacks a key hash, becomes `false`, which the decoder names.
  const entryObject = (entry: unknown): unknown => {
    const object =
      Array.isArray(entry) && entry.length <= listFields.length ? Object.fromEntries(entry.map((item, index) => [listFields[index], item])) : entry;
    return isJsonObject(object) && typeof object.keyHash === "string" && keyHashPattern.test(object.keyHash) ? object : false;
  };
  const raw = parsed.operators;
  const operators = decodeGoStruct(operatorsStruct, {
    operators: isJsonObject(raw) ? Object.fromEntries(Object.entries(raw).map(([name, entry]) => [name, entryObject(entry)])) : raw,
  });
  const { earliestRecheckTime, identities } = subtree.status;
  return {
    status: presentFields({ earliestRecheckTime, operators: operators.status.operators as OutputsStatus["operators"], identities }),
    problems: [...subtree.problems, ...operators.problems],
  };
}

/** The `status` output as a program sees it, from the state's JSON text or the object itself (a `setMocks` test's); `undefined` for anything else. */
export function statusFromOutputs(value: unknown): OutputsStatus | undefined {
  if (typeof value !== "string") return isJsonObject(value) ? value : undefined;
  const read = readOutputsStatusText(value);
  return read.problems.length === 0 ? read.status : undefined;
}

/** How many identities the status records, and how many resolved, were not found or failed; two operators naming one identity count once. */
export function statusCounts(status: OutputsStatus): Readonly<Record<"identityCount" | "resolvedCount" | "notFoundCount" | "failedCount", number>> {
  const byKey = new Map<string, { readonly retrievalError?: string }>([
    ...Object.values(status.operators ?? {}).map((entry) => [entry.keyHash, entry] as const),
    ...Object.entries(status.identities ?? {}),
  ]);
  const entries = [...byKey.values()];
  const notFoundCount = entries.filter((entry) => isNotFoundRetrievalError(entry.retrievalError)).length;
  const failedCount = entries.filter((entry) => isFailedRetrievalError(entry.retrievalError)).length;
  return { identityCount: entries.length, resolvedCount: entries.length - notFoundCount - failedCount, notFoundCount, failedCount };
}
