/**
 * Reads and conditionally patches documents in the Cosmos `Resources` container; every write carries
 * If-Match; reads waiting at the same time go together (docs/design.md, "Reads that wait at the same
 * time"). Only a 404 for a missing document reads as absent: a missing database, container or account
 * is a configuration error, never "absent", which would drop resources from state.
 */
import type { Container } from "@azure/cosmos";
import type { JsonObject } from "../core/json";
import { isJsonObject } from "../core/json";
import type { PatchOperation } from "../core/serviceProviderClusterDocument";
import type { CosmosLocation } from "./settingsProblems";
import { answerOfError, settingsErrorFor, unansweredReadError } from "./settingsProblems";

export interface StoredDocument {
  readonly document: JsonObject;
  readonly etag: string;
}

export interface DocumentStore {
  /** Reads a document; `undefined` when it does not exist in the container. */
  readDocument(partitionKey: string, id: string): Promise<StoredDocument | undefined>;
  /** Applies patch operations if the document still has `ifMatchEtag` (else Cosmos's 412; 404 when gone). */
  patchDocument(partitionKey: string, id: string, operations: readonly PatchOperation[], ifMatchEtag: string): Promise<StoredDocument>;
  /** For messages about the settings. */
  readonly location?: CosmosLocation;
}

/** Most operations Cosmos accepts in one batch, or one bulk request to a partition key range. */
const maxReadsPerBatch = 100;

/** Read requests in flight at once: reads arriving meanwhile go together in the next one. */
export const maxReadRequestsInFlight = 2;

/** A read request out this long (the SDK retrying a throttled read) stops holding the other reads back. */
export const slowReadRequestMs = 1_000;

interface PendingRead {
  readonly partitionKey: string;
  readonly id: string;
  readonly resolve: (value: StoredDocument | undefined) => void;
  readonly reject: (error: unknown) => void;
}

type Answer = StoredDocument | undefined | "again";

/** The store over a container handle; `options.endpoint` is named in configuration errors. */
export function createDocumentStore(container: Container, options: { readonly endpoint?: string } = {}): DocumentStore {
  const waiting: PendingRead[] = [];
  let flushScheduled = false;
  let inFlight = 0;
  const location: CosmosLocation = { ...options, database: container.database.id, container: container.id };
  /** Rethrows a failed request's error, as a configuration error when the settings are at fault. */
  const rethrowFor =
    (verb: "read" | "write", id: string) =>
    (error: unknown): never => {
      throw settingsErrorFor(answerOfError(error), verb, id, location) ?? error;
    };

  const pointRead = async (partitionKey: string, id: string): Promise<StoredDocument | undefined> => {
    const response = await container.item(id, partitionKey).read<JsonObject>().catch(rethrowFor("read", id));
    if (response.statusCode === 404 && isMissingDocument(response.substatus)) return undefined;
    // Any other answer without a document (a missing container, a read session not yet available) is never "absent".
    if (response.resource === undefined) throw unansweredReadError(response, id, location);
    return { document: response.resource, etag: response.etag };
  };
  const settle = (read: PendingRead): Promise<void> => pointRead(read.partitionKey, read.id).then(read.resolve, read.reject);

  /** One request for distinct documents: a transactional batch within one partition, bulk across partitions. */
  const requestTogether = async (documents: ReadonlyArray<{ partitionKey: string; id: string }>): Promise<Answer[]> => {
    const partitionKey = documents[0].partitionKey;
    try {
      // Not executeBulkOperations, which `bulk`'s deprecation points to: it holds every call before
      // answering, fit for loading data, not for reads an engine step waits on.
      const read = ({ id }: { readonly id: string }): { operationType: "Read"; id: string } => ({ operationType: "Read", id });
      const results = documents.every((document) => document.partitionKey === partitionKey)
        ? (await container.items.batch(documents.map(read), partitionKey)).result
        : await container.items.bulk(documents.map((document) => ({ ...read(document), partitionKey: document.partitionKey })));
      return documents.map((_, index) => batchAnswer(results?.[index]));
    } catch {
      // The SDK drops the status code of a failed batch; point reads give each caller the real error.
      return documents.map(() => "again");
    }
  };

  const readTogether = async (reads: readonly PendingRead[]): Promise<void> => {
    if (reads.length === 1) return settle(reads[0]);
    // One operation per distinct document.
    const keyOf = (read: PendingRead): string => JSON.stringify([read.partitionKey, read.id]);
    const distinct = [...new Map(reads.map((read) => [keyOf(read), read])).values()];
    const answerList = await requestTogether(distinct);
    const answers = new Map(distinct.map((read, index) => [keyOf(read), answerList[index]]));
    const handedOut = new Set<string>();
    await Promise.all(
      reads.map(async (read) => {
        const key = keyOf(read);
        // Every key has an answer, so `undefined` here is Cosmos's 404.
        const answer = answers.get(key);
        if (answer === "again") return settle(read);
        // The same document asked for twice: each caller gets its own copy.
        read.resolve(answer !== undefined && handedOut.has(key) ? structuredClone(answer) : answer);
        handedOut.add(key);
      }),
    );
  };

  const send = (): void => {
    while (inFlight < maxReadRequestsInFlight && waiting.length > 0) {
      const taken = waiting.splice(0, maxReadsPerBatch);
      inFlight += 1;
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        inFlight -= 1;
        // Whatever arrived meanwhile goes now, together.
        send();
      };
      const slow = setTimeout(release, slowReadRequestMs).unref();
      // readTogether settles every read and does not throw; should it, its reads fail with that error.
      void readTogether(taken)
        .catch((error: unknown) => {
          for (const read of taken) read.reject(error);
        })
        .finally(() => {
          clearTimeout(slow);
          release();
        });
    }
  };

  return {
    location,
    readDocument(partitionKey, id) {
      return new Promise<StoredDocument | undefined>((resolve, reject) => {
        waiting.push({ partitionKey, id, resolve, reject });
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(() => {
            flushScheduled = false;
            send();
          });
        }
      });
    },
    async patchDocument(partitionKey, id, operations, ifMatchEtag) {
      if (ifMatchEtag.length === 0) throw new RangeError("refusing an unconditional write: no etag to match");
      const response = await container
        .item(id, partitionKey)
        .patch<JsonObject>({ operations: operations.map((operation) => ({ ...operation })) }, { accessCondition: { type: "IfMatch", condition: ifMatchEtag } })
        .catch(rethrowFor("write", id));
      if (response.resource === undefined) throw new Error(`Cosmos returned no document after patching ${id}`);
      return { document: response.resource, etag: response.etag };
    },
  };
}

/** A document, `undefined` for a missing one, or "again" for what a point read answers instead, so errors are a point read's. */
function batchAnswer(result: { statusCode: number; subStatusCode?: unknown; eTag?: string; resourceBody?: unknown } | undefined): Answer {
  if (result?.statusCode === 404) return isMissingDocument(result.subStatusCode) ? undefined : "again";
  const document = result?.resourceBody;
  const etag = isJsonObject(document) ? (result?.eTag ?? document._etag) : undefined;
  return result?.statusCode === 200 && typeof etag === "string" && etag.length > 0 ? { document: document as JsonObject, etag } : "again";
}

/** A 404's substatus for a missing document: 0 or none (1003 is a missing database or container). */
function isMissingDocument(substatus: unknown): boolean {
  return substatus === undefined || substatus === 0;
}
