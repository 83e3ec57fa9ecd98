/**
 * The status as the provider's outputs store it, as text: the {@link OutputsStatus} of
 * outputsStatus.ts written compact, read back, and counted. Pure.
 */
import { describeType } from "./azureResourceId";
import type { StatusCounts } from "./identityStatus";
import { isFailedRetrievalError, isNotFoundRetrievalError } from "./retrievalError";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";
import type { OperatorStatusEntry, OutputsStatus } from "./outputsStatus";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";

/**
 * The status as the outputs store it: JSON text of {@link OutputsStatus} with each operator's entry
 * written as a list, `[keyHash, clientId, principalId, retrievalError, resourceID]` (null for an
 * absent value, trailing nulls left out), which keeps four field names out of state per identity.
 * One string is one value for the engine and the provider host to copy and encode on every call.
 * The resource's `status` output gives the object back ({@link statusFromOutputs}).
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
 * The `status` output as a program sees it: the object, whether the state holds its JSON text (what
 * the provider writes) or the object itself (what a user's `setMocks` test may return). Text that
 * does not parse, or a value of another type, gives `undefined`; the next update rewrites such state.
 */
export function statusFromOutputs(value: unknown): OutputsStatus | undefined {
  if (typeof value === "string") {
    const read = readOutputsStatusText(value);
    return read.problems.length === 0 ? read.status : undefined;
  }
  return isJsonObject(value) ? value : undefined;
}

/**
 * How many identities the status records, and how many of them resolved, were not found or
 * failed (a retrievalError recording ARM's ResourceNotFound counts as not found). Two operators naming one
 * identity count once, as in Cosmos.
 */
export function statusCounts(status: OutputsStatus): StatusCounts {
  const byKey = new Map<string, { readonly retrievalError?: string }>();
  for (const entry of Object.values(status.operators ?? {})) byKey.set(entry.keyHash, entry);
  for (const [key, entry] of Object.entries(status.identities ?? {})) byKey.set(key, entry);
  const entries = [...byKey.values()];
  const notFoundCount = entries.filter((entry) => isNotFoundRetrievalError(entry.retrievalError)).length;
  const failedCount = entries.filter((entry) => isFailedRetrievalError(entry.retrievalError)).length;
  return { identityCount: entries.length, resolvedCount: entries.length - notFoundCount - failedCount, notFoundCount, failedCount };
}

/** The value of JSON text; `undefined` (which JSON cannot hold) when it is not JSON. */
export function parsedJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
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
  if (typeof value.keyHash !== "string" || !/^[0-9a-f]{12}$/.test(value.keyHash)) {
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
