/**
 * Reads and conditionally patches documents in the Cosmos `Resources` container with
 * @azure/cosmos. Every write carries If-Match; there is no unconditional write path.
 */
import type { Container } from "@azure/cosmos";
import type { JsonObject } from "../core/json";
import type { PatchOperation } from "../core/serviceProviderClusterDocument";

/** A document with the etag it was read at. */
export interface StoredDocument {
  readonly document: JsonObject;
  readonly etag: string;
}

/** The narrow interface the sync pass uses. */
export interface DocumentStore {
  /** Reads a document; `undefined` when it does not exist. */
  readDocument(partitionKey: string, id: string): Promise<StoredDocument | undefined>;
  /**
   * Applies patch operations if the document still has `ifMatchEtag`.
   * @throws a Cosmos ErrorResponse with `code` 412 when the etag no longer matches, 404 when gone.
   */
  patchDocument(partitionKey: string, id: string, operations: readonly PatchOperation[], ifMatchEtag: string): Promise<StoredDocument>;
}

/** Builds the store over a container handle. */
export function createDocumentStore(container: Container): DocumentStore {
  return {
    async readDocument(partitionKey, id) {
      const response = await container.item(id, partitionKey).read<JsonObject>();
      if (response.statusCode === 404 || response.resource === undefined) {
        return undefined;
      }
      return { document: response.resource, etag: response.etag };
    },
    async patchDocument(partitionKey, id, operations, ifMatchEtag) {
      if (ifMatchEtag.length === 0) {
        throw new RangeError("refusing an unconditional write: no etag to match");
      }
      const response = await container
        .item(id, partitionKey)
        .patch<JsonObject>({ operations: operations.map((operation) => ({ ...operation })) }, { accessCondition: { type: "IfMatch", condition: ifMatchEtag } });
      if (response.resource === undefined) {
        throw new Error(`Cosmos returned no document after patching ${id}`);
      }
      return { document: response.resource, etag: response.etag };
    },
  };
}
