/** The patch that writes either half or both in one conditional write, touching nothing else of the document. */
import type { JsonObject } from "./json";
import { isJsonObject } from "./json";
import type { MsiManagedIdentities } from "./msiManagedIdentities";
import type { DataPlaneOperatorsManagedIdentities, PatchOperation } from "./serviceProviderClusterDocument";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";
import { msiHalf } from "./msiManagedIdentities";

/** The halves one write sets; a half left out stays as stored. */
export interface StatusHalves {
  readonly dataPlane?: DataPlaneOperatorsManagedIdentities;
  readonly msi?: MsiManagedIdentities;
}

/** The patch of the given halves with upstream's Replace bookkeeping: instanceVersion + 1 (missing counts as 1), the etag it was based on. */
export function identityStatusPatchOperations(document: JsonObject, halves: StatusHalves, basedOnEtag: string): PatchOperation[] {
  const properties = isJsonObject(document.properties) ? document.properties : {};
  const operations: PatchOperation[] = [];
  const status = isJsonObject(properties.status) ? properties.status : undefined;
  const subtrees: Array<[string, JsonObject]> = [];
  if (halves.msi !== undefined) subtrees.push(["msiManagedIdentities", msiHalf.toJson(halves.msi, status?.msiManagedIdentities)]);
  if (halves.dataPlane !== undefined) {
    subtrees.push(["dataPlaneOperatorsManagedIdentities", dataPlaneHalf.toJson(halves.dataPlane, status?.dataPlaneOperatorsManagedIdentities)]);
  }
  if (status !== undefined) {
    for (const [name, json] of subtrees) operations.push({ op: "set", path: `/properties/status/${name}`, value: json });
  } else if (subtrees.length > 0) {
    operations.push({ op: "set", path: "/properties/status", value: Object.fromEntries(subtrees) });
  }
  if (isJsonObject(properties.cosmosMetadata)) {
    const current = properties.cosmosMetadata.instanceVersion;
    const instanceVersion = typeof current === "number" && Number.isInteger(current) && current > 0 ? current : 1;
    operations.push({ op: "set", path: "/properties/cosmosMetadata/instanceVersion", value: instanceVersion + 1 });
    operations.push({ op: "set", path: "/properties/cosmosMetadata/etag", value: basedOnEtag });
  } else {
    // A legacy document without the bookkeeping: upstream's Replace writes the whole cosmosMetadata
    // (instanceVersion 1 + 1); creating it is what lets upstream's change-feed reader see this write.
    operations.push({ op: "set", path: "/properties/cosmosMetadata", value: legacyCosmosMetadata(document, basedOnEtag) });
  }
  return operations;
}

/** The cosmosMetadata upstream's Replace writes into a document that had none. */
function legacyCosmosMetadata(document: JsonObject, basedOnEtag: string): JsonObject {
  return {
    ...(typeof document.resourceID === "string" ? { resourceID: document.resourceID } : {}),
    ...(basedOnEtag.length > 0 ? { etag: basedOnEtag } : {}),
    instanceVersion: 2,
    ...(typeof document.partitionKey === "string" ? { partitionKey: document.partitionKey } : {}),
  };
}
