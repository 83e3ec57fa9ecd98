/**
 * The other half of a cluster's identity status: `properties.status.msiManagedIdentities` of the
 * ServiceProviderCluster document, as upstream's FetchMSIIdentitiesInfo controller reads and
 * writes it (docs/cosmos-data-flow.md). It holds the clientId and principalId of the cluster's
 * control plane operator identities and of its service managed identity (SMI), resolved through
 * the Managed Identities data plane, and one recheck time for all of them. Pure.
 *
 * The JSON is Go's encoding of upstream's types: fields in struct order (`earliestRecheckTime`,
 * `controlPlaneOperatorsIdentities`, `serviceManagedIdentity`; in an entry `resourceId`,
 * `clientId`, `principalId`), nil pointers and empty maps omitted, `""` kept, map keys sorted,
 * times RFC 3339 in UTC with whole seconds; `resourceId` is the ID as the cluster document names
 * it, re-printed by the Azure SDK's parser (note the casing `resourceId`, unlike the data plane
 * operators' `resourceID`). Checked against vectors Go printed (tools/go-vectors).
 */
import { describeType } from "./azureResourceId";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";
import { goMap, withUnknownFields } from "./goJson";
import { parseTimestamp, sameEntries, sameInstant, sameResourceId } from "./statusHalf";

/** One identity's entry (a control plane operator's, or the SMI's). Written by: FetchMSIIdentitiesInfo and this hook. */
export interface MsiIdentityEntry {
  readonly resourceId?: string;
  readonly clientId?: string;
  readonly principalId?: string;
}

/** `properties.status.msiManagedIdentities`. Written by: FetchMSIIdentitiesInfo and this hook. */
export interface MsiManagedIdentities {
  readonly earliestRecheckTime?: string;
  /** Keyed by the lowercased identity resource ID. */
  readonly controlPlaneOperatorsIdentities?: Readonly<Record<string, MsiIdentityEntry>>;
  readonly serviceManagedIdentity?: MsiIdentityEntry;
}

/** The subtree as read: what is usable, whether it was there, and what was dropped. */
export interface StoredMsiStatus {
  readonly status: MsiManagedIdentities;
  readonly present: boolean;
  readonly problems: readonly string[];
}

const entryFields = ["resourceId", "clientId", "principalId"] as const;

/** Reads the subtree from a ServiceProviderCluster document, tolerating what Go's decoder tolerates. */
export function readStoredMsiStatus(document: JsonObject): StoredMsiStatus {
  const properties = isJsonObject(document.properties) ? document.properties : {};
  const status = isJsonObject(properties.status) ? properties.status : {};
  return readMsiSubtree(status.msiManagedIdentities);
}

/** Reads the subtree itself. Malformed parts are dropped and named in `problems`, so a later write replaces them. */
export function readMsiSubtree(subtree: unknown): StoredMsiStatus {
  if (subtree === undefined || subtree === null) return { status: {}, present: false, problems: [] };
  if (!isJsonObject(subtree)) return { status: {}, present: true, problems: [`msiManagedIdentities is ${describeType(subtree)}, expected an object`] };
  const problems: string[] = [];
  const result: { -readonly [K in keyof MsiManagedIdentities]: MsiManagedIdentities[K] } = {};
  const rawTime = subtree.earliestRecheckTime;
  if (typeof rawTime === "string" && parseTimestamp(rawTime) !== undefined) result.earliestRecheckTime = rawTime;
  else if (rawTime !== undefined && rawTime !== null) problems.push("msiManagedIdentities.earliestRecheckTime is not an RFC 3339 timestamp");
  const rawMap = subtree.controlPlaneOperatorsIdentities;
  if (rawMap !== undefined && rawMap !== null && !isJsonObject(rawMap)) {
    problems.push(`msiManagedIdentities.controlPlaneOperatorsIdentities is ${describeType(rawMap)}, expected an object`);
  }
  const map: Record<string, MsiIdentityEntry> = {};
  for (const [key, raw] of Object.entries(isJsonObject(rawMap) ? rawMap : {})) {
    // Go decodes `null` into a nil entry: the key is there, the entry says nothing.
    const entry = raw === null ? {} : readEntry(raw);
    if (entry === undefined) problems.push(`msiManagedIdentities.controlPlaneOperatorsIdentities['${key}'] is not a valid entry`);
    else Object.defineProperty(map, key, { value: entry, enumerable: true, writable: true, configurable: true });
  }
  if (Object.keys(map).length > 0) result.controlPlaneOperatorsIdentities = map;
  const rawSmi = subtree.serviceManagedIdentity;
  if (rawSmi !== undefined && rawSmi !== null) {
    const entry = readEntry(rawSmi);
    if (entry === undefined) problems.push("msiManagedIdentities.serviceManagedIdentity is not a valid entry");
    else result.serviceManagedIdentity = entry;
  }
  return { status: result, present: true, problems };
}

function readEntry(value: JsonValue): MsiIdentityEntry | undefined {
  if (!isJsonObject(value)) return undefined;
  const entry: { -readonly [K in keyof MsiIdentityEntry]: MsiIdentityEntry[K] } = {};
  for (const field of entryFields) {
    const fieldValue = value[field];
    if (typeof fieldValue === "string") entry[field] = fieldValue;
    else if (fieldValue !== undefined && fieldValue !== null) return undefined;
  }
  return entry;
}

/**
 * The subtree as JSON, as Go's encoder writes upstream's type. With `stored` (the subtree as it is
 * in the document), fields this hook does not know are carried over after the known ones, and so
 * are those of an entry it keeps: a field upstream adds later survives this hook's write.
 */
export function msiStatusToJson(status: MsiManagedIdentities, stored?: JsonValue): JsonObject {
  const storedSubtree = isJsonObject(stored) ? stored : {};
  const storedMap = isJsonObject(storedSubtree.controlPlaneOperatorsIdentities) ? storedSubtree.controlPlaneOperatorsIdentities : {};
  const json: JsonObject = {};
  if (status.earliestRecheckTime !== undefined) json.earliestRecheckTime = status.earliestRecheckTime;
  const identities = status.controlPlaneOperatorsIdentities ?? {};
  if (Object.keys(identities).length > 0) {
    json.controlPlaneOperatorsIdentities = goMap(identities, (key, entry) =>
      entryJson(entry, Object.prototype.hasOwnProperty.call(storedMap, key) ? storedMap[key] : undefined),
    );
  }
  if (status.serviceManagedIdentity !== undefined) json.serviceManagedIdentity = entryJson(status.serviceManagedIdentity, storedSubtree.serviceManagedIdentity);
  return withUnknownFields(json, storedSubtree, new Set(["earliestRecheckTime", "controlPlaneOperatorsIdentities", "serviceManagedIdentity"]));
}

function entryJson(entry: MsiIdentityEntry, stored: JsonValue | undefined): JsonObject {
  const json: JsonObject = {};
  for (const field of entryFields) {
    const value = entry[field];
    if (value !== undefined) json[field] = value;
  }
  return isJsonObject(stored) ? withUnknownFields(json, stored, new Set(entryFields)) : json;
}

/** Semantic equality as upstream registers it: IDs case-insensitive, times by instant, empty and missing maps equal. */
export function msiStatusEquals(left: MsiManagedIdentities, right: MsiManagedIdentities): boolean {
  return (
    sameInstant(left.earliestRecheckTime, right.earliestRecheckTime) &&
    entriesEqual(left.serviceManagedIdentity, right.serviceManagedIdentity) &&
    sameEntries(left.controlPlaneOperatorsIdentities, right.controlPlaneOperatorsIdentities, entriesEqual)
  );
}

/** Two entries (or two absent ones) equal under {@link msiStatusEquals}. */
export function entriesEqual(left: MsiIdentityEntry | undefined, right: MsiIdentityEntry | undefined): boolean {
  if (left === undefined || right === undefined) return left === right;
  return sameResourceId(left.resourceId, right.resourceId) && left.clientId === right.clientId && left.principalId === right.principalId;
}
