import type Account from "@vercel/cosmosdb-server/lib/account";
import type Collection from "@vercel/cosmosdb-server/lib/account/collection";
import { type ForeignEdit } from "./faultInjector";
import { getAtJsonPointer, removeAtJsonPointer, setAtJsonPointer } from "./jsonPointer";

/** A Cosmos document as stored, including the system fields `_etag`, `_rid`, `_ts`, `_self`. */
export type StoredDocument = Record<string, unknown> & { id: string };

/** Thrown when a document or the container is missing. */
export class DocumentNotFoundError extends Error {
  override readonly name = "DocumentNotFoundError";
}

/** The value set by the default foreign edit of a `race` fault. */
export const defaultForeignEditPath = "/properties/sandboxForeignEditCount";

const systemFields = ["_etag", "_rid", "_self", "_ts", "_attachments"];

function withoutSystemFields(document: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(document).filter(([key]) => !systemFields.includes(key)));
}

/**
 * Direct access to the documents of the sandbox container, bypassing HTTP, authorization, faults
 * and counters. Every change gets a new `_etag`, exactly as a write over the wire would, so
 * clients holding the old etag get 412.
 */
export class CosmosDocumentStore {
  /**
   * @param account - The cosmosdb-server account behind the HTTPS server.
   * @param databaseName - The database holding the container.
   * @param containerName - The container (partition key path `/partitionKey`).
   */
  constructor(
    private readonly account: Account,
    readonly databaseName: string,
    readonly containerName: string,
  ) {}

  private collection(): Collection {
    const collection = this.account.database(this.databaseName).collection(this.containerName);
    if (!collection.read()) {
      throw new DocumentNotFoundError(`container ${this.databaseName}/${this.containerName} does not exist`);
    }
    return collection;
  }

  /**
   * @param partitionKey - The document's partition key value.
   * @param id - The document id.
   * @returns A deep copy of the stored document, or undefined.
   */
  read(partitionKey: string, id: string): StoredDocument | undefined {
    const data = this.collection().document(id, partitionKey).read() as StoredDocument | undefined | null;
    return data ? structuredClone(data) : undefined;
  }

  /**
   * @param partitionKey - Only documents of this partition; all when omitted.
   * @returns Deep copies of the stored documents.
   */
  list(partitionKey?: string): StoredDocument[] {
    const documents = [...this.collection().documents._data.values()].map((item) => item.read() as StoredDocument);
    return structuredClone(partitionKey === undefined ? documents : documents.filter((document) => document.partitionKey === partitionKey));
  }

  /**
   * Creates or replaces a document with exactly the given JSON (system fields in it are ignored).
   *
   * @param document - The document; needs `id` and `partitionKey`.
   * @returns The stored document with its new `_etag`.
   */
  put(document: Record<string, unknown>): StoredDocument {
    if (typeof document.id !== "string" || typeof document.partitionKey !== "string") {
      throw new TypeError("a document needs string id and partitionKey fields");
    }
    return structuredClone(this.collection().documents.upsert(withoutSystemFields(document)) as StoredDocument);
  }

  /**
   * Creates many documents at once, without HTTP round trips.
   *
   * @param documents - The documents; existing ones with the same id are replaced.
   * @returns How many documents were written.
   */
  putMany(documents: readonly Record<string, unknown>[]): number {
    const collection = this.collection();
    for (const document of documents) {
      collection.documents.upsert(withoutSystemFields(document));
    }
    return documents.length;
  }

  /**
   * Sets (or, with `value` undefined, removes) the value at a JSON pointer of a stored document.
   * Missing parent objects are created.
   *
   * @param partitionKey - The document's partition key value.
   * @param id - The document id.
   * @param pointer - E.g. `/properties/status/x`.
   * @param value - The new value; undefined removes the member.
   * @returns The stored document with its new `_etag`.
   * @throws DocumentNotFoundError when the document does not exist.
   */
  patch(partitionKey: string, id: string, pointer: string, value: unknown): StoredDocument {
    const document = this.read(partitionKey, id);
    if (document === undefined) {
      throw new DocumentNotFoundError(`document ${partitionKey}/${id} does not exist`);
    }
    if (value === undefined) {
      removeAtJsonPointer(document, pointer);
    } else {
      setAtJsonPointer(document, pointer, value);
    }
    return this.put(document);
  }

  /**
   * Applies the edit of a `race` fault: sets `edit.value` at `edit.path`, or by default increments
   * `/properties/sandboxForeignEditCount`.
   *
   * @param partitionKey - The document's partition key value.
   * @param id - The document id.
   * @param edit - The edit; the default when omitted.
   * @returns The stored document, or undefined when it does not exist.
   */
  applyForeignEdit(partitionKey: string, id: string, edit?: ForeignEdit): StoredDocument | undefined {
    if (this.read(partitionKey, id) === undefined) {
      return undefined;
    }
    if (edit !== undefined) {
      return this.patch(partitionKey, id, edit.path, edit.value);
    }
    const current = getAtJsonPointer(this.read(partitionKey, id), defaultForeignEditPath);
    return this.patch(partitionKey, id, defaultForeignEditPath, (typeof current === "number" ? current : 0) + 1);
  }

  /**
   * @param partitionKey - The document's partition key value.
   * @param id - The document id.
   * @returns Whether a document was deleted.
   */
  delete(partitionKey: string, id: string): boolean {
    const collection = this.collection();
    if (!collection.document(id, partitionKey).read()) {
      return false;
    }
    collection.documents.delete(id, partitionKey);
    return true;
  }
}
