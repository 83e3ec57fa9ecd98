/**
 * The MSI half of the status (msiManagedIdentities.ts) as the provider's outputs record it:
 * fingerprints, not IDs, because the engine keeps every output of every cluster in state. Each
 * identity is its `keyHash` (outputsStatus.ts) → `valueHash` (8 hex digits of the SHA-256 of its
 * clientId and principalId); the service managed identity is the pair. That is what `diff` (the
 * gate), `refresh` (what changed in Cosmos since) and `delete` need; the IDs are in Cosmos.
 */
import { createHash } from "node:crypto";
import { goToLower } from "./goStrings";
import { describeType } from "./azureResourceId";
import { isJsonObject, parsedJsonText } from "./json";
import { keyFinder, keyHashOf, keyHashPattern } from "./outputsStatus";
import type { MsiIdentityEntry, MsiManagedIdentities } from "./msiManagedIdentities";

/** The half as the outputs store it (its JSON text). */
export interface StoredMsiOutputs {
  readonly earliestRecheckTime?: string;
  /** keyHash → valueHash of each control plane operator identity. */
  readonly controlPlaneOperators?: Readonly<Record<string, string>>;
  /** [keyHash, valueHash] of the service managed identity. */
  readonly serviceManagedIdentity?: readonly [string, string];
}

/** The resource's `msiStatus` output: when the half is looked at next, and how many identities it records. */
export interface MsiOutputsStatus {
  readonly earliestRecheckTime?: string;
  readonly identityCount: number;
}

/** The key under which a fingerprint holds the service managed identity (no Cosmos key looks like it). */
const smiSlot = "(service managed identity)";

/** Each identity's value hash, by its Cosmos key ({@link smiSlot} for the service managed identity). */
export type MsiFingerprint = ReadonlyMap<string, string>;

function valueHash(entry: MsiIdentityEntry): string {
  return createHash("sha256")
    .update(`${entry.clientId ?? "\u0000"}\n${entry.principalId ?? "\u0000"}`, "utf8")
    .digest("hex")
    .slice(0, 8);
}

export function msiFingerprintOf(status: MsiManagedIdentities): MsiFingerprint {
  const fingerprint = new Map<string, string>();
  for (const [key, entry] of Object.entries(status.controlPlaneOperatorsIdentities ?? {})) fingerprint.set(key, valueHash(entry));
  if (status.serviceManagedIdentity !== undefined)
    fingerprint.set(smiSlot, `${goToLower(status.serviceManagedIdentity.resourceId ?? "")} ${valueHash(status.serviceManagedIdentity)}`);
  return fingerprint;
}

export function encodeMsiOutputs(status: MsiManagedIdentities): StoredMsiOutputs {
  const operators = Object.keys(status.controlPlaneOperatorsIdentities ?? {})
    .sort()
    .map((key) => [keyHashOf(key), valueHash((status.controlPlaneOperatorsIdentities ?? {})[key])] as const);
  const smi = status.serviceManagedIdentity;
  return {
    ...(status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.earliestRecheckTime }),
    ...(operators.length === 0 ? {} : { controlPlaneOperators: Object.fromEntries(operators) }),
    ...(smi === undefined ? {} : { serviceManagedIdentity: [keyHashOf(goToLower(smi.resourceId ?? "")), valueHash(smi)] as const }),
  };
}

/**
 * What the outputs recorded, read against the keys at hand (the cluster document's identities
 * during `diff`, the stored subtree's during `refresh`): the half's identities and recheck time,
 * without values (enough for the gate), and its fingerprint. An identity whose key is not among
 * `candidateKeys` gets the stand-in key `(identity <hash>)`, which equals no real key.
 */
export function decodeMsiOutputs(
  stored: StoredMsiOutputs,
  candidateKeys: Iterable<string>,
): { readonly status: MsiManagedIdentities; readonly fingerprint: MsiFingerprint } {
  const find = keyFinder(candidateKeys);
  const keyOf = (hash: string): string => find(hash) ?? `(identity ${hash})`;
  const fingerprint = new Map<string, string>();
  const operators: Record<string, MsiIdentityEntry> = {};
  for (const [hash, values] of Object.entries(stored.controlPlaneOperators ?? {})) {
    operators[keyOf(hash)] = { resourceId: keyOf(hash) };
    fingerprint.set(keyOf(hash), values);
  }
  const smi = stored.serviceManagedIdentity;
  if (smi !== undefined) fingerprint.set(smiSlot, `${keyOf(smi[0])} ${smi[1]}`);
  return {
    status: {
      ...(stored.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: stored.earliestRecheckTime }),
      ...(Object.keys(operators).length === 0 ? {} : { controlPlaneOperatorsIdentities: operators }),
      ...(smi === undefined ? {} : { serviceManagedIdentity: { resourceId: keyOf(smi[0]) } }),
    },
    fingerprint,
  };
}

/** The keys where two fingerprints differ: `removed`, `added` or `changed`, by key ({@link smiSlot} for the SMI). */
export function fingerprintDifferences(
  before: MsiFingerprint,
  after: MsiFingerprint,
): Array<{ readonly key: string; readonly change: "removed" | "added" | "changed"; readonly serviceManagedIdentity: boolean }> {
  const differences: Array<{ key: string; change: "removed" | "added" | "changed"; serviceManagedIdentity: boolean }> = [];
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const [was, now] = [before.get(key), after.get(key)];
    if (was === now) continue;
    differences.push({ key, change: was === undefined ? "added" : now === undefined ? "removed" : "changed", serviceManagedIdentity: key === smiSlot });
  }
  return differences;
}

const valueHashPattern = /^[0-9a-f]{8}$/;

/** Reads the stored half (JSON text; absent is the empty half); malformed parts are named in `problems`. */
export function readMsiOutputsText(value: unknown): { readonly status: StoredMsiOutputs; readonly problems: readonly string[] } {
  if (value === undefined || value === null) return { status: {}, problems: [] };
  const parsed = typeof value === "string" ? parsedJsonText(value) : undefined;
  if (!isJsonObject(parsed)) return { status: {}, problems: [`is ${describeType(value)}, expected the MSI status as JSON text of an object`] };
  const record = parsed as Record<string, unknown>;
  const problems: string[] = [];
  const hex = (text: unknown, length: 8 | 12): text is string => typeof text === "string" && (length === 12 ? keyHashPattern : valueHashPattern).test(text);
  const operators: Record<string, string> = {};
  const rawOperators = record.controlPlaneOperators;
  if (rawOperators !== undefined && !isJsonObject(rawOperators)) problems.push("controlPlaneOperators is not an object");
  for (const [hash, values] of Object.entries(isJsonObject(rawOperators as never) ? (rawOperators as Record<string, unknown>) : {})) {
    if (hex(hash, 12) && hex(values, 8)) operators[hash] = values;
    else problems.push(`controlPlaneOperators['${hash}'] is not a key hash and a value hash`);
  }
  const smi = record.serviceManagedIdentity;
  const smiOk = Array.isArray(smi) && smi.length === 2 && hex(smi[0], 12) && hex(smi[1], 8);
  if (smi !== undefined && !smiOk) problems.push("serviceManagedIdentity is not a key hash and a value hash");
  const time = record.earliestRecheckTime;
  if (time !== undefined && typeof time !== "string") problems.push("earliestRecheckTime is not a string");
  return {
    status: {
      ...(typeof time === "string" ? { earliestRecheckTime: time } : {}),
      ...(Object.keys(operators).length === 0 ? {} : { controlPlaneOperators: operators }),
      ...(smiOk ? { serviceManagedIdentity: [smi[0] as string, smi[1] as string] as const } : {}),
    },
    problems,
  };
}

/** The `msiStatus` output as a program sees it, from the stored JSON text (or a mock's object of the same shape). */
export function msiStatusFromOutputs(value: unknown): MsiOutputsStatus {
  const stored = typeof value === "string" ? readMsiOutputsText(value).status : isJsonObject(value) ? (value as StoredMsiOutputs) : {};
  return {
    ...(typeof stored.earliestRecheckTime === "string" ? { earliestRecheckTime: stored.earliestRecheckTime } : {}),
    identityCount: Object.keys(stored.controlPlaneOperators ?? {}).length + (stored.serviceManagedIdentity === undefined ? 0 : 1),
  };
}
