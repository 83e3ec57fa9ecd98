/**
 * The status as the provider's outputs record it (as its JSON text, outputsStatusText below): the
 * owned subtree of the ServiceProviderCluster document, written small, because the engine keeps
 * every output of every cluster in state and rewrites it on each `up`.
 *
 * In Cosmos an entry is keyed by its identity's lowercased ARM ID and repeats that ID in
 * `resourceID`: about 330 of an entry's 420 bytes. In the outputs an entry that a declared operator
 * names sits under the operator's name instead, with `keyHash` (the first 12 hex digits of the
 * SHA-256 of the Cosmos key) in place of both IDs. The provider finds the key again from the
 * candidates it has at hand: the desired set during `diff` (the same operators, or the inputs'
 * digest below would differ) and the document's keys during `refresh`. `resourceID` is kept only when it is not
 * the key in another case. Entries no declared operator names (the desired set read from the
 * cluster document, or an entry someone else added) stay in `identities`, as in Cosmos.
 *
 * Decoding gives back the subtree up to the case of `resourceID`, which every comparison of
 * stored entries ignores (dataPlaneHalf.equals, upstream's rule). Pure: only
 * node:crypto.
 */
import { createHash } from "node:crypto";
import { goToLower } from "./goStrings";
import type { DataPlaneOperatorManagedIdentityEntry, DataPlaneOperatorsManagedIdentities } from "./serviceProviderClusterDocument";
import { boundedMemo } from "./boundedMemo";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";

/** One operator's entry in the outputs. */
export interface OperatorStatusEntry {
  /** First 12 hex digits of the SHA-256 of the Cosmos key (the identity's lowercased ARM ID). */
  readonly keyHash: string;
  readonly clientId?: string;
  readonly principalId?: string;
  readonly retrievalError?: string;
  /** Only when the entry's resourceID is not its key in another case. */
  readonly resourceID?: string;
}

/** `status` in the provider outputs: the object whose JSON text the outputs store. */
export interface OutputsStatus {
  readonly earliestRecheckTime?: string;
  /** By declared operator name. Two operators naming one identity both carry its entry. */
  readonly operators?: Readonly<Record<string, OperatorStatusEntry>>;
  /** Entries no declared operator names, keyed and written as in Cosmos. */
  readonly identities?: Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>>;
}

/** The 12 hex digits identifying a Cosmos key in the outputs. */
export const keyHashOf: (key: string) => string = boundedMemo((key) => createHash("sha256").update(key, "utf8").digest("hex").slice(0, 12));

/** Finds the key of a key hash among the keys at hand (both halves' outputs name identities by hash); undefined when it is not among them. */
export function keyFinder(candidateKeys: Iterable<string>): (keyHash: string) => string | undefined {
  const keysByHash = new Map<string, string>();
  for (const key of candidateKeys) keysByHash.set(keyHashOf(key), key);
  return (keyHash) => keysByHash.get(keyHash);
}

/**
 * Digest of the declared inputs `diff` compares (the checked operator map, names sorted and IDs
 * canonical as `check` returns them, or null; the service managed identity or null; the identity
 * URL, left out when null so that digests without one stay as they were): 22 base64url
 * characters (132 bits), so the outputs need not repeat the inputs.
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

/** The names of each declared identity, by the hash of its key. */
export function operatorNamesFromKeys(keysByOperator: Iterable<readonly [string, string]>): OperatorNamesByKeyHash {
  const names = new Map<string, string[]>();
  for (const [name, key] of keysByOperator) {
    const hash = keyHashOf(key);
    names.set(hash, [...(names.get(hash) ?? []), name]);
  }
  return names;
}

/** The names recorded in outputs written earlier, by key hash. */
export function operatorNamesFromOutputs(status: OutputsStatus): OperatorNamesByKeyHash {
  const names = new Map<string, string[]>();
  for (const [name, entry] of Object.entries(status.operators ?? {})) {
    names.set(entry.keyHash, [...(names.get(entry.keyHash) ?? []), name]);
  }
  return names;
}

/** Writes the subtree small: see the module comment. */
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
 * Gives back the subtree. An operator's key is found among `candidateKeys` by its hash; one that
 * is not among them (its identity is gone from the document) gets the stand-in key
 * `(operator <name>)`, which equals no real key, so every comparison sees it as different.
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

function sortedRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key]]),
  );
}
