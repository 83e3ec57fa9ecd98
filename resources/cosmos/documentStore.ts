/**
 * Reads and conditionally patches documents in the Cosmos `Resources` container with
 * @azure/cosmos. Every write carries If-Match; there is no unconditional write path.
 *
 * Reads of one partition that wait at the same time (a `refresh` or `up` over many clusters of a
 * subscription) go to Cosmos as one transactional batch of Read operations: one round trip at the
 * same request charge as the point reads. A partition has one read request in flight at a time:
 * reads that arrive while it is out wait for its answer and then go together, so under load the
 * batches grow instead of the request count. A read of a partition with nothing in flight goes at
 * once, and a lone read stays a point read. Whatever the batch does not answer with 200 or 404 (a
 * failed batch, a throttled or aborted operation) is read again with a point read, so errors are
 * exactly a point read's.
 */
import type { Container, OperationInput } from "@azure/cosmos";
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

/** Most operations Cosmos accepts in one transactional batch. */
export const maxReadsPerBatch = 100;

interface PendingRead {
  readonly id: string;
  resolve(value: StoredDocument | undefined): void;
  reject(error: unknown): void;
}

/** Builds the store over a container handle. */
export function createDocumentStore(container: Container): DocumentStore {
  const pending = new Map<string, PendingRead[]>();
  let flushScheduled = false;

  const pointRead = async (partitionKey: string, id: string): Promise<StoredDocument | undefined> => {
    const response = await container.item(id, partitionKey).read<JsonObject>();
    if (response.statusCode === 404 || response.resource === undefined) {
      return undefined;
    }
    return { document: response.resource, etag: response.etag };
  };
  const settleWithPointRead = async (partitionKey: string, read: PendingRead): Promise<void> => {
    try {
      read.resolve(await pointRead(partitionKey, read.id));
    } catch (error) {
      read.reject(error);
    }
  };

  const readTogether = async (partitionKey: string, reads: readonly PendingRead[]): Promise<void> => {
    if (reads.length === 1) {
      await settleWithPointRead(partitionKey, reads[0]);
      return;
    }
    const ids = [...new Set(reads.map((read) => read.id))];
    let answers: Map<string, StoredDocument | undefined | "again">;
    try {
      const operations: OperationInput[] = ids.map((id) => ({ operationType: "Read", id }));
      const response = await container.items.batch(operations, partitionKey);
      answers = new Map(ids.map((id, index) => [id, batchAnswer(response.result?.[index])]));
    } catch {
      // The SDK drops the status code of a failed batch; point reads give each caller the real error.
      answers = new Map();
    }
    const handedOut = new Set<string>();
    await Promise.all(
      reads.map(async (read) => {
        const answer = answers.get(read.id) ?? "again";
        if (answer === "again") {
          await settleWithPointRead(partitionKey, read);
        } else if (answer === undefined) {
          read.resolve(undefined);
        } else {
          // The same document asked for twice: each caller gets its own copy.
          read.resolve(handedOut.has(read.id) ? structuredClone(answer) : answer);
          handedOut.add(read.id);
        }
      }),
    );
  };

  // Partitions with a read request (a batch or a point read) in flight: at most one each. Reads of
  // such a partition wait in `pending` and go together once it is answered.
  const busy = new Set<string>();
  const send = (partitionKey: string): void => {
    const reads = pending.get(partitionKey);
    if (reads === undefined || busy.has(partitionKey)) return;
    const taken = reads.splice(0, maxReadsPerBatch);
    if (reads.length === 0) pending.delete(partitionKey);
    busy.add(partitionKey);
    const done = (): void => {
      busy.delete(partitionKey);
      // Whatever arrived meanwhile goes now, as one batch.
      send(partitionKey);
    };
    // readTogether settles every read it took and does not throw; should it, its reads fail with that error.
    readTogether(partitionKey, taken).then(done, (error: unknown) => {
      for (const read of taken) read.reject(error);
      done();
    });
  };

  const flush = (): void => {
    flushScheduled = false;
    for (const partitionKey of [...pending.keys()]) send(partitionKey);
  };

  return {
    readDocument(partitionKey, id) {
      return new Promise<StoredDocument | undefined>((resolve, reject) => {
        const reads = pending.get(partitionKey);
        if (reads === undefined) {
          pending.set(partitionKey, [{ id, resolve, reject }]);
        } else {
          reads.push({ id, resolve, reject });
        }
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      });
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

/** A document, `undefined` for 404, or "again" for anything a point read should answer instead. */
function batchAnswer(result: { statusCode: number; eTag?: string; resourceBody?: unknown } | undefined): StoredDocument | undefined | "again" {
  if (result?.statusCode === 404) {
    return undefined;
  }
  const document = result?.resourceBody;
  if (result?.statusCode !== 200 || typeof document !== "object" || document === null || Array.isArray(document)) {
    return "again";
  }
  const etag = result.eTag ?? (document as JsonObject)._etag;
  return typeof etag === "string" && etag.length > 0 ? { document: document as JsonObject, etag } : "again";
}
