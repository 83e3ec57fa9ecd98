/** The ServiceProviderCluster document, its `dataPlaneOperatorsManagedIdentities` half, and the patch that writes either half, as upstream reads and writes them. */
import { goToLower } from "./goStrings";
import { describeType, serviceProviderClusterResourceType } from "./azureResourceId";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject, withoutNil } from "./json";
import type { MsiManagedIdentities } from "./msiManagedIdentities";
import { msiHalf } from "./msiManagedIdentities";
import type { DesiredIdentity, Half } from "./statusHalf";
import { defineHalf } from "./statusHalf";

/** Version of the provider outputs' shape; other versions are unknown state (docs/design.md, "Migrating state"). */
export const outputsSchemaVersion = 1;

/** One identity entry, keyed in the map by the lowercased identity resource ID. Written by: this hook and FetchDataPlaneOperatorsManagedIdentitiesInfo. */
export interface DataPlaneOperatorManagedIdentityEntry {
  /** Identity ARM ID (note the capital `ID`, as upstream). */
  readonly resourceID: string;
  /** The IDs as Azure returned them; absent when unknown. */
  readonly clientId?: string;
  readonly principalId?: string;
  /** Normalised text of the last failed lookup, at most 1024 code points; absent on success. */
  readonly retrievalError?: string;
}

/** `properties.status.dataPlaneOperatorsManagedIdentities`. Written by: the same. */
export interface DataPlaneOperatorsManagedIdentities {
  readonly identities?: Readonly<Record<string, DataPlaneOperatorManagedIdentityEntry>>;
  /** RFC 3339 UTC, whole seconds; set only when every lookup succeeded or was NotFound. */
  readonly earliestRecheckTime?: string;
}

/** A Cosmos patch operation (the subset this hook issues). */
export type PatchOperation = { readonly op: "set"; readonly path: string; readonly value: JsonValue } | { readonly op: "remove"; readonly path: string };

/** The problems, each naming its field, that keep a document from being a ServiceProviderCluster to write into. */
export function serviceProviderClusterDocumentProblems(document: JsonObject): string[] {
  const problems: string[] = [];
  const { resourceType, properties } = document;
  if (typeof resourceType !== "string" || goToLower(resourceType) !== goToLower(serviceProviderClusterResourceType)) {
    problems.push(
      `resourceType is ${typeof resourceType === "string" ? `'${resourceType}'` : describeType(resourceType)}, expected '${serviceProviderClusterResourceType}'`,
    );
  }
  if (!isJsonObject(properties)) return [...problems, `properties is ${describeType(properties)}, expected an object`];
  if (properties.cosmosMetadata !== undefined && !isJsonObject(properties.cosmosMetadata)) {
    problems.push(`properties.cosmosMetadata is ${describeType(properties.cosmosMetadata)}, expected an object`);
  }
  if (properties.status !== undefined && properties.status !== null && !isJsonObject(properties.status)) {
    problems.push(`properties.status is ${describeType(properties.status)}, expected an object`);
  }
  return problems;
}

/** The data plane operators' half: upstream's `DataPlaneOperatorsManagedIdentities` struct (core/statusHalf.ts). */
export const dataPlaneHalf: Half<DataPlaneOperatorsManagedIdentities, readonly DesiredIdentity[]> = defineHalf(
  {
    name: "dataPlaneOperatorsManagedIdentities",
    problemsNamed: { subtree: "the status subtree", fieldPrefix: "" },
    fields: { identities: "map", earliestRecheckTime: "time" },
    entryFields: ["resourceID", "clientId", "principalId", "retrievalError"],
    strictEntries: true,
    // A field of this hook's own older documents, beside `identities`; upstream's type lacks it.
    dropped: ["claimedBy"],
  },
  (desired) => ({ identities: desired }),
);

/** The halves one write sets; a half left out stays as stored. */
export interface StatusHalves {
  readonly dataPlane?: DataPlaneOperatorsManagedIdentities;
  readonly msi?: MsiManagedIdentities;
}

/** The patch of the given halves with upstream's Replace bookkeeping: instanceVersion + 1 (missing counts as 1), the etag it was based on. */
export function identityStatusPatchOperations(document: JsonObject, halves: StatusHalves, basedOnEtag: string): PatchOperation[] {
  const properties = isJsonObject(document.properties) ? document.properties : {};
  const status = isJsonObject(properties.status) ? properties.status : undefined;
  const subtrees = withoutNil({
    msiManagedIdentities: halves.msi && msiHalf.toJson(halves.msi, status?.msiManagedIdentities),
    dataPlaneOperatorsManagedIdentities: halves.dataPlane && dataPlaneHalf.toJson(halves.dataPlane, status?.dataPlaneOperatorsManagedIdentities),
  });
  const operations: PatchOperation[] = [];
  if (status !== undefined)
    operations.push(...Object.entries(subtrees).map(([name, value]) => ({ op: "set" as const, path: `/properties/status/${name}`, value })));
  else if (Object.keys(subtrees).length > 0) operations.push({ op: "set", path: "/properties/status", value: subtrees });
  if (isJsonObject(properties.cosmosMetadata)) {
    const current = properties.cosmosMetadata.instanceVersion;
    const instanceVersion = typeof current === "number" && Number.isInteger(current) && current > 0 ? current : 1;
    operations.push({ op: "set", path: "/properties/cosmosMetadata/instanceVersion", value: instanceVersion + 1 });
    operations.push({ op: "set", path: "/properties/cosmosMetadata/etag", value: basedOnEtag });
  } else {
    // Creating the whole cosmosMetadata, as upstream's Replace does, lets its change-feed reader see this write.
    const { resourceID, partitionKey } = document;
    const value = {
      ...(typeof resourceID === "string" ? { resourceID } : {}),
      ...(basedOnEtag.length > 0 ? { etag: basedOnEtag } : {}),
      instanceVersion: 2,
      ...(typeof partitionKey === "string" ? { partitionKey } : {}),
    };
    operations.push({ op: "set", path: "/properties/cosmosMetadata", value });
  }
  return operations;
}
