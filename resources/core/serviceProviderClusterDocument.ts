/**
 * The persisted shape: the ServiceProviderCluster document's envelope and the subtree this hook
 * owns, `properties.status.dataPlaneOperatorsManagedIdentities`, exactly as the upstream backend
 * reads and writes it (docs/cosmos-data-flow.md). Pure: no I/O, no SDK imports.
 *
 * Field notes follow the upstream "Written by:" convention; docs/cosmos-data-flow.md has the table.
 */
import { goToLower } from "./goStrings";
import { describeType, serviceProviderClusterResourceType } from "./azureResourceId";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";
import { goMap, withUnknownFields } from "./goJson";

/**
 * Version of the provider outputs' shape, 1 since the first release: the small status of
 * outputsStatus.ts stored as its JSON text (one string instead of a tree of 18 values at 4
 * operators, which the engine and the provider host copy and encode on every call;
 * docs/performance.md). Outputs of any other version are unknown state to this release;
 * docs/design.md ("Migrating state in a later release") says how a release that changes the shape
 * reads the previous one.
 */
export const outputsSchemaVersion = 1;

/** One identity entry, keyed in the map by the lowercased identity resource ID. */
export interface DataPlaneOperatorManagedIdentityEntry {
  /** Identity ARM ID (note the capital `ID`, as upstream). Written by: this hook and FetchDataPlaneOperatorsManagedIdentitiesInfo. */
  readonly resourceID: string;
  /** As Azure returned it; absent when unknown or after any lookup error. Written by: same. */
  readonly clientId?: string;
  /** As Azure returned it; absent when unknown or after any lookup error. Written by: same. */
  readonly principalId?: string;
  /** Normalised text of the last failed lookup, at most 1024 code points; absent on success. Written by: same. */
  readonly retrievalError?: string;
}

/** `properties.status.dataPlaneOperatorsManagedIdentities`. */
export interface DataPlaneOperatorsManagedIdentities {
  /** Written by: this hook and FetchDataPlaneOperatorsManagedIdentitiesInfo. */
  readonly identities?: Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>>;
  /** RFC 3339 UTC, whole seconds; set only when every lookup succeeded or was NotFound. Written by: same. */
  readonly earliestRecheckTime?: string;
}

/** A Cosmos patch operation (the subset this hook issues). */
export type PatchOperation = { readonly op: "set"; readonly path: string; readonly value: JsonValue } | { readonly op: "remove"; readonly path: string };

/**
 * Checks that a document is a ServiceProviderCluster in the upstream layout, well enough to write
 * into. Returns the problems, each naming the field; empty when the document is usable.
 */
export function serviceProviderClusterDocumentProblems(document: JsonObject): string[] {
  const problems: string[] = [];
  const resourceType = document.resourceType;
  if (typeof resourceType !== "string" || goToLower(resourceType) !== goToLower(serviceProviderClusterResourceType)) {
    problems.push(
      `resourceType is ${typeof resourceType === "string" ? `'${resourceType}'` : describeType(resourceType)}, expected '${serviceProviderClusterResourceType}'`,
    );
  }
  const properties = document.properties;
  if (!isJsonObject(properties)) {
    problems.push(`properties is ${describeType(properties)}, expected an object`);
    return problems;
  }
  if (properties.cosmosMetadata !== undefined && !isJsonObject(properties.cosmosMetadata)) {
    problems.push(`properties.cosmosMetadata is ${describeType(properties.cosmosMetadata)}, expected an object`);
  }
  if (properties.status !== undefined && properties.status !== null && !isJsonObject(properties.status)) {
    problems.push(`properties.status is ${describeType(properties.status)}, expected an object`);
  }
  return problems;
}

/**
 * Reads the owned subtree from a document, tolerating what upstream tolerates (missing subtree,
 * null maps). Malformed parts are dropped from the result and listed in `problems`, so a later
 * write replaces them.
 */
export function readStoredStatus(document: JsonObject): StoredStatus {
  const properties = isJsonObject(document.properties) ? document.properties : {};
  const status = isJsonObject(properties.status) ? properties.status : {};
  return readStatusSubtree(status.dataPlaneOperatorsManagedIdentities);
}

/** The owned subtree as read: what is usable, whether it was there, and what was dropped. */
export interface StoredStatus {
  readonly status: DataPlaneOperatorsManagedIdentities;
  readonly present: boolean;
  readonly problems: readonly string[];
}

/** Reads the owned subtree itself (as in a document, or as recorded in the provider's outputs). See {@link readStoredStatus}. */
export function readStatusSubtree(subtree: unknown): StoredStatus {
  if (subtree === undefined || subtree === null) {
    return { status: {}, present: false, problems: [] };
  }
  if (!isJsonObject(subtree)) {
    return { status: {}, present: true, problems: [`the status subtree is ${describeType(subtree)}, expected an object`] };
  }
  const problems: string[] = [];
  const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
  const rawIdentities = subtree.identities;
  if (rawIdentities !== undefined && rawIdentities !== null && !isJsonObject(rawIdentities)) {
    problems.push(`identities is ${describeType(rawIdentities)}, expected an object`);
  }
  for (const [key, rawEntry] of Object.entries(isJsonObject(rawIdentities) ? rawIdentities : {})) {
    const entry = readEntry(rawEntry);
    if (entry === undefined) {
      problems.push(`identities['${key}'] is not a valid entry`);
    } else if (key !== goToLower(key)) {
      problems.push(`identities['${key}'] is not keyed by the lowercased resource ID`);
    } else {
      identities[key] = entry;
    }
  }
  const rawTime = subtree.earliestRecheckTime;
  let earliestRecheckTime: string | undefined;
  if (typeof rawTime === "string" && !Number.isNaN(new Date(rawTime).getTime())) {
    earliestRecheckTime = rawTime;
  } else if (rawTime !== undefined && rawTime !== null) {
    problems.push("earliestRecheckTime is not an RFC 3339 timestamp");
  }
  const result: { identities?: Record<string, DataPlaneOperatorManagedIdentityEntry>; earliestRecheckTime?: string } = {};
  if (Object.keys(identities).length > 0) {
    result.identities = identities;
  }
  if (earliestRecheckTime !== undefined) {
    result.earliestRecheckTime = earliestRecheckTime;
  }
  return { status: result, present: true, problems };
}

function readEntry(value: JsonValue): DataPlaneOperatorManagedIdentityEntry | undefined {
  if (!isJsonObject(value) || typeof value.resourceID !== "string") {
    return undefined;
  }
  const entry: { -readonly [K in keyof DataPlaneOperatorManagedIdentityEntry]: DataPlaneOperatorManagedIdentityEntry[K] } = {
    resourceID: value.resourceID,
  };
  for (const field of ["clientId", "principalId", "retrievalError"] as const) {
    const fieldValue = value[field];
    if (typeof fieldValue === "string") {
      entry[field] = fieldValue;
    } else if (fieldValue !== undefined && fieldValue !== null) {
      return undefined;
    }
  }
  return entry;
}

/**
 * The fields of the subtree and of its entries this hook reads and writes; any other field is kept
 * as stored, except `claimedBy`, which earlier builds of this hook wrote beside `identities` (a
 * field upstream's type lacks): a write drops it.
 */
const knownSubtreeFields: ReadonlySet<string> = new Set(["identities", "earliestRecheckTime", "claimedBy"]);
const knownEntryFields: ReadonlySet<string> = new Set(["resourceID", "clientId", "principalId", "retrievalError"]);

/**
 * The subtree as JSON, as Go's encoder writes upstream's type (core/goJson.ts), omitting empty optional fields. With `stored`
 * (the subtree as it is in the document), every field this hook does not know — beside
 * `identities`, or inside an entry it keeps — is carried over unchanged, after the known ones
 * (say a `tenantId` upstream adds to each entry); an identity left out of `status` goes whole.
 */
export function statusToJson(status: DataPlaneOperatorsManagedIdentities, stored?: JsonValue): JsonObject {
  const storedSubtree = isJsonObject(stored) ? stored : {};
  const storedIdentities = isJsonObject(storedSubtree.identities) ? storedSubtree.identities : {};
  const json: JsonObject = {};
  const identities = status.identities ?? {};
  if (Object.keys(identities).length > 0) {
    json.identities = goMap(identities, (key, entry) => {
      const entryJson: JsonObject = { resourceID: entry.resourceID };
      if (entry.clientId !== undefined) entryJson.clientId = entry.clientId;
      if (entry.principalId !== undefined) entryJson.principalId = entry.principalId;
      if (entry.retrievalError !== undefined) entryJson.retrievalError = entry.retrievalError;
      const storedEntry = Object.prototype.hasOwnProperty.call(storedIdentities, key) ? storedIdentities[key] : undefined;
      return isJsonObject(storedEntry) ? withUnknownFields(entryJson, storedEntry, knownEntryFields) : entryJson;
    });
  }
  if (status.earliestRecheckTime !== undefined) {
    json.earliestRecheckTime = status.earliestRecheckTime;
  }
  return withUnknownFields(json, storedSubtree, knownSubtreeFields);
}
