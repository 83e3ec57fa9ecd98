/**
 * The MSI half of the status (msiManagedIdentities.ts) as the provider's outputs record it: fingerprints, not IDs. Each identity
 * is its `keyHash` (outputsStatus.ts) → `valueHash` (8 hex digits of the SHA-256 of its clientId and principalId); the service
 * managed identity is the pair. That is what `diff` (the gate), `refresh` (what changed in Cosmos since) and `delete` need.
 */
import { createHash } from "node:crypto";
import { goToLower } from "./goStrings";
import { describeType } from "./azureResourceId";
import { isJsonObject, parsedJsonText } from "./json";
import type { StatusReading } from "./outputsStatus";
import { keyHashOf, keysByHash, keyHashPattern, presentFields } from "./outputsStatus";
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
  const values = `${entry.clientId ?? "\u0000"}\n${entry.principalId ?? "\u0000"}`;
  return createHash("sha256").update(values, "utf8").digest("hex").slice(0, 8);
}

export function msiFingerprintOf(status: MsiManagedIdentities): MsiFingerprint {
  const fingerprint = new Map(Object.entries(status.controlPlaneOperatorsIdentities ?? {}).map(([key, entry]) => [key, valueHash(entry)]));
  const smi = status.serviceManagedIdentity;
  if (smi !== undefined) fingerprint.set(smiSlot, `${goToLower(smi.resourceId ?? "")} ${valueHash(smi)}`);
  return fingerprint;
}

export function encodeMsiOutputs(status: MsiManagedIdentities): StoredMsiOutputs {
  const operators = status.controlPlaneOperatorsIdentities ?? {};
  const smi = status.serviceManagedIdentity;
  return presentFields({
    earliestRecheckTime: status.earliestRecheckTime,
    controlPlaneOperators: Object.fromEntries(
      Object.keys(operators)
        .sort()
        .map((key) => [keyHashOf(key), valueHash(operators[key])]),
    ),
    serviceManagedIdentity: smi === undefined ? undefined : ([keyHashOf(goToLower(smi.resourceId ?? "")), valueHash(smi)] as const),
  });
}

/**
 * What the outputs recorded, read against the keys at hand: the half's identities and recheck time, without values (enough
 * for the gate), and its fingerprint. An identity whose key is not at hand gets the stand-in key `(identity <hash>)`, which equals no real key.
 */
export function decodeMsiOutputs(
  stored: StoredMsiOutputs,
  candidateKeys: Iterable<string>,
): { readonly status: MsiManagedIdentities; readonly fingerprint: MsiFingerprint } {
  const keys = keysByHash(candidateKeys);
  const keyOf = (hash: string): string => keys.get(hash) ?? `(identity ${hash})`;
  const operators = Object.entries(stored.controlPlaneOperators ?? {}).map(([hash, values]) => [keyOf(hash), values] as const);
  const smi = stored.serviceManagedIdentity;
  const fingerprint = new Map(operators);
  if (smi !== undefined) fingerprint.set(smiSlot, `${keyOf(smi[0])} ${smi[1]}`);
  return {
    status: presentFields({
      earliestRecheckTime: stored.earliestRecheckTime,
      controlPlaneOperatorsIdentities: Object.fromEntries(operators.map(([key]) => [key, { resourceId: key }])),
      serviceManagedIdentity: smi === undefined ? undefined : { resourceId: keyOf(smi[0]) },
    }),
    fingerprint,
  };
}

/** The keys where two fingerprints differ: `removed`, `added` or `changed`, by key ({@link smiSlot} for the SMI). */
export function fingerprintDifferences(
  before: MsiFingerprint,
  after: MsiFingerprint,
): Array<{ readonly key: string; readonly change: "removed" | "added" | "changed"; readonly serviceManagedIdentity: boolean }> {
  return [...new Set([...before.keys(), ...after.keys()])]
    .sort()
    .filter((key) => before.get(key) !== after.get(key))
    .map((key) => ({
      key,
      change: !before.has(key) ? "added" : !after.has(key) ? "removed" : "changed",
      serviceManagedIdentity: key === smiSlot,
    }));
}

const valueHashPattern = /^[0-9a-f]{8}$/;

/** Reads the stored half (JSON text; absent is the empty half); malformed parts are named in `problems`. */
export function readMsiOutputsText(value: unknown): StatusReading<StoredMsiOutputs> {
  if (value === undefined || value === null) return { status: {}, problems: [] };
  const parsed = typeof value === "string" ? parsedJsonText(value) : undefined;
  if (!isJsonObject(parsed)) return { status: {}, problems: [`is ${describeType(value)}, expected the MSI status as JSON text of an object`] };
  const problems: string[] = [];
  const hashes = (key: unknown, values: unknown): boolean =>
    typeof key === "string" && keyHashPattern.test(key) && typeof values === "string" && valueHashPattern.test(values);
  const { controlPlaneOperators: rawOperators, serviceManagedIdentity: smi, earliestRecheckTime: time } = parsed;
  if (rawOperators !== undefined && !isJsonObject(rawOperators)) problems.push("controlPlaneOperators is not an object");
  const operators: Record<string, string> = {};
  for (const [hash, values] of Object.entries(isJsonObject(rawOperators) ? rawOperators : {})) {
    if (hashes(hash, values)) operators[hash] = values as string;
    else problems.push(`controlPlaneOperators['${hash}'] is not a key hash and a value hash`);
  }
  const smiOk = Array.isArray(smi) && smi.length === 2 && hashes(smi[0], smi[1]);
  if (smi !== undefined && !smiOk) problems.push("serviceManagedIdentity is not a key hash and a value hash");
  if (time !== undefined && typeof time !== "string") problems.push("earliestRecheckTime is not a string");
  return {
    status: presentFields({
      earliestRecheckTime: typeof time === "string" ? time : undefined,
      controlPlaneOperators: operators,
      serviceManagedIdentity: smiOk ? ([smi[0], smi[1]] as [string, string]) : undefined,
    }),
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
