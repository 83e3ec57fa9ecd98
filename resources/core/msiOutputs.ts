/**
 * The MSI half of the status (msiManagedIdentities.ts) as the provider's outputs record it: small,
 * because the engine keeps every output of every cluster in state. A control plane operator
 * identity sits under `keyHash` (outputsStatus.ts keyHashOf: 12 hex digits of the SHA-256 of its
 * Cosmos key) instead of its ARM ID, twice in Cosmos; the service managed identity carries its
 * `keyHash` beside its IDs. Decoding finds each key again among the candidate keys at hand (the
 * cluster document's identities during `diff`, the stored subtree's during `refresh`); `resourceId`
 * comes back as the key, which every comparison reads case-insensitively. Pure.
 */
import { goToLower } from "./goStrings";
import { describeType } from "./azureResourceId";
import { isJsonObject } from "./json";
import { keyHashOf } from "./outputsStatus";
import type { MsiIdentityEntry, MsiManagedIdentities } from "./msiManagedIdentities";

/** One identity's IDs in the outputs. */
export interface MsiOutputsEntry {
  readonly clientId?: string;
  readonly principalId?: string;
}

/** `msiStatus` in the provider outputs: the object whose JSON text the outputs store. */
export interface MsiOutputsStatus {
  readonly earliestRecheckTime?: string;
  /** By the hash of each identity's Cosmos key. */
  readonly controlPlaneOperators?: Readonly<Record<string, MsiOutputsEntry>>;
  readonly serviceManagedIdentity?: MsiOutputsEntry & { readonly keyHash: string };
}

/** Writes the half small: see the module comment. */
export function encodeMsiOutputs(status: MsiManagedIdentities): MsiOutputsStatus {
  const values = (entry: MsiIdentityEntry): MsiOutputsEntry => ({
    ...(entry.clientId === undefined ? {} : { clientId: entry.clientId }),
    ...(entry.principalId === undefined ? {} : { principalId: entry.principalId }),
  });
  const operators = Object.keys(status.controlPlaneOperatorsIdentities ?? {})
    .sort()
    .map((key) => [keyHashOf(key), values((status.controlPlaneOperatorsIdentities ?? {})[key])] as const);
  const smi = status.serviceManagedIdentity;
  return {
    ...(status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.earliestRecheckTime }),
    ...(operators.length === 0 ? {} : { controlPlaneOperators: Object.fromEntries(operators) }),
    ...(smi === undefined ? {} : { serviceManagedIdentity: { keyHash: keyHashOf(goToLower(smi.resourceId ?? "")), ...values(smi) } }),
  };
}

/**
 * Gives the half back. An identity whose key is not among `candidateKeys` gets the stand-in key
 * `(identity <hash>)`, which equals no real key, so every comparison sees it as different.
 */
export function decodeMsiOutputs(status: MsiOutputsStatus, candidateKeys: Iterable<string>): MsiManagedIdentities {
  const keysByHash = new Map<string, string>();
  for (const key of candidateKeys) keysByHash.set(keyHashOf(key), key);
  const keyOf = (hash: string): string => keysByHash.get(hash) ?? `(identity ${hash})`;
  const operators = Object.entries(status.controlPlaneOperators ?? {}).map(([hash, entry]) => [keyOf(hash), { resourceId: keyOf(hash), ...entry }] as const);
  const smi = status.serviceManagedIdentity;
  const smiEntry = smi === undefined ? undefined : { resourceId: keyOf(smi.keyHash), ...valuesOf(smi) };
  return {
    ...(status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.earliestRecheckTime }),
    ...(operators.length === 0 ? {} : { controlPlaneOperatorsIdentities: Object.fromEntries(operators) }),
    ...(smiEntry === undefined ? {} : { serviceManagedIdentity: smiEntry }),
  };
}

function valuesOf(entry: MsiOutputsEntry): MsiOutputsEntry {
  return {
    ...(entry.clientId === undefined ? {} : { clientId: entry.clientId }),
    ...(entry.principalId === undefined ? {} : { principalId: entry.principalId }),
  };
}

/** Reads `msiStatus` from stored outputs (JSON text; absent is the empty half); malformed parts are named in `problems`. */
export function readMsiOutputsText(value: unknown): { readonly status: MsiOutputsStatus; readonly problems: readonly string[] } {
  if (value === undefined || value === null) return { status: {}, problems: [] };
  let parsed: unknown;
  try {
    parsed = typeof value === "string" ? JSON.parse(value) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!isJsonObject(parsed)) return { status: {}, problems: [`is ${describeType(value)}, expected the MSI status as JSON text of an object`] };
  const record = parsed as Record<string, unknown>;
  const problems: string[] = [];
  const entry = (raw: unknown, where: string): MsiOutputsEntry | undefined => {
    const ok =
      isJsonObject(raw) &&
      ["clientId", "principalId"].every(
        (field) => (raw as Record<string, unknown>)[field] === undefined || typeof (raw as Record<string, unknown>)[field] === "string",
      );
    if (!ok) problems.push(`${where} is not a valid entry`);
    return ok ? valuesOf(raw) : undefined;
  };
  const operators: Record<string, MsiOutputsEntry> = {};
  for (const [hash, raw] of Object.entries(
    isJsonObject(record.controlPlaneOperators as never) ? (record.controlPlaneOperators as Record<string, unknown>) : {},
  )) {
    const read = /^[0-9a-f]{12}$/.test(hash) ? entry(raw, `controlPlaneOperators['${hash}']`) : undefined;
    if (read !== undefined) operators[hash] = read;
    else if (!/^[0-9a-f]{12}$/.test(hash)) problems.push(`controlPlaneOperators['${hash}'] is not keyed by a key hash`);
  }
  const rawSmi = record.serviceManagedIdentity as { keyHash?: unknown } | undefined;
  const smiValues = rawSmi === undefined ? undefined : entry(rawSmi, "serviceManagedIdentity");
  const smiHash = typeof rawSmi?.keyHash === "string" && /^[0-9a-f]{12}$/.test(rawSmi.keyHash) ? rawSmi.keyHash : undefined;
  if (rawSmi !== undefined && smiHash === undefined) problems.push("serviceManagedIdentity has no keyHash");
  const time = record.earliestRecheckTime;
  if (time !== undefined && typeof time !== "string") problems.push("earliestRecheckTime is not a string");
  return {
    status: {
      ...(typeof time === "string" ? { earliestRecheckTime: time } : {}),
      ...(Object.keys(operators).length === 0 ? {} : { controlPlaneOperators: operators }),
      ...(smiValues === undefined || smiHash === undefined ? {} : { serviceManagedIdentity: { keyHash: smiHash, ...smiValues } }),
    },
    problems,
  };
}

/** The `msiStatus` output as a program sees it: the object, from the stored JSON text or a mock's object; `{}` for anything else. */
export function msiStatusFromOutputs(value: unknown): MsiOutputsStatus {
  if (typeof value === "string") return readMsiOutputsText(value).status;
  return isJsonObject(value as never) ? (value as MsiOutputsStatus) : {};
}
