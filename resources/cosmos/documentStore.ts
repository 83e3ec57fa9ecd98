/**
 * Reads and conditionally patches documents in the Cosmos `Resources` container with
 * @azure/cosmos. Every write carries If-Match; there is no unconditional write path.
 *
 * Reads that wait at the same time (a `refresh` or `up` over many clusters) go to Cosmos together:
 * a transactional batch of Read operations when they share a partition, a bulk request of Read
 * operations when they do not (a fleet whose clusters each sit in their own subscription). One
 * round trip at the same request charge as the point reads, and a fraction of their client CPU.
 * At most {@link maxReadRequestsInFlight} read requests are in flight: reads that arrive while
 * they are out wait for one to be answered and then go together, so under load each request
 * carries more reads instead of there being more requests. A request out longer than
 * {@link slowReadRequestMs} (the SDK retrying a throttled read) stops counting. A lone read stays
 * a point read. Whatever the batch or bulk request does not answer with 200 or 404 (a failed
 * request, a throttled or aborted operation) is read again with a point read, so errors are
 * exactly a point read's.
 *
 * Only a 404 for a missing document in an existing container reads as absent. A database,
 * container or account that does not exist fails the read or write with a CosmosDocumentError
 * naming the settings to check (settingsProblems.ts): read as "absent", it made a refresh drop
 * every resource from state.
 */
import type { Container } from "@azure/cosmos";
import type { JsonObject } from "../core/json";
import type { PatchOperation } from "../core/serviceProviderClusterDocument";
import type { CosmosLocation } from "./settingsProblems";
import { answerOfError, isMissingDocumentSubstatus, settingsErrorFor, unansweredReadError } from "./settingsProblems";

/** A document with the etag it was read at. */
export interface StoredDocument {
  readonly document: JsonObject;
  readonly etag: string;
}

/** The narrow interface the sync pass uses. */
export interface DocumentStore {
  /**
   * Reads a document; `undefined` when it does not exist in the container.
   * @throws CosmosDocumentError with a `configurationProblem` when the account, database or
   * container of the settings does not exist.
   */
  readDocument(partitionKey: string, id: string): Promise<StoredDocument | undefined>;
  /**
   * Applies patch operations if the document still has `ifMatchEtag`.
   * @throws a Cosmos ErrorResponse with `code` 412 when the etag no longer matches, 404 when gone;
   * CosmosDocumentError with a `configurationProblem` when the account, database or container of
   * the settings does not exist.
   */
  patchDocument(partitionKey: string, id: string, operations: readonly PatchOperation[], ifMatchEtag: string): Promise<StoredDocument>;
  /** Where documents are read and written (the values in use, never a key), for messages about the settings. */
  readonly location?: CosmosLocation;
}

/** Most operations Cosmos accepts in one batch or one bulk request to a partition key range. */
export const maxReadsPerBatch = 100;

/**
 * Read requests (point, batch or bulk) the store has in flight at once. Reads arriving while they
 * are all out wait and go together in the next one: the count of requests adapts to the latency
 * instead of to the engine's parallelism (docs/performance.md, "Cosmos reads").
 */
export const maxReadRequestsInFlight = 2;

/**
 * A read request out this long stops counting against {@link maxReadRequestsInFlight}: one that
 * the SDK is retrying (a throttled partition, Retry-After) must not hold every other read back.
 */
export const slowReadRequestMs = 1_000;

interface PendingRead {
  readonly partitionKey: string;
  readonly id: string;
  resolve(value: StoredDocument | undefined): void;
  reject(error: unknown): void;
}

type Answer = StoredDocument | undefined | "again";

/** Builds the store over a container handle; `options.endpoint` (as configured) is named in configuration errors. */
export function createDocumentStore(container: Container, options: { readonly endpoint?: string } = {}): DocumentStore {
  const waiting: PendingRead[] = [];
  let flushScheduled = false;
  let inFlight = 0;
  const location: CosmosLocation = { ...options, database: container.database.id, container: container.id };
  /** The error to throw for an SDK error: a configuration error when it is about the settings. */
  const classified = (error: unknown, verb: "read" | "write", id: string): unknown => settingsErrorFor(answerOfError(error), verb, id, location) ?? error;

  const pointRead = async (partitionKey: string, id: string): Promise<StoredDocument | undefined> => {
    const response = await container
      .item(id, partitionKey)
      .read<JsonObject>()
      .catch((error: unknown) => {
        throw classified(error, "read", id);
      });
    if (response.statusCode === 404 && isMissingDocumentSubstatus(response.substatus)) {
      return undefined;
    }
    if (response.resource === undefined) {
      // Any other answer without a document (a missing database or container, a read session not
      // yet available) says nothing about the document: never "absent".
      throw unansweredReadError(response, id, location);
    }
    return { document: response.resource, etag: response.etag };
  };
  const settleWithPointRead = async (read: PendingRead): Promise<void> => {
    try {
      read.resolve(await pointRead(read.partitionKey, read.id));
    } catch (error) {
      read.reject(error);
    }
  };

  /** One request for distinct documents: a transactional batch within one partition, bulk across partitions. */
  const requestTogether = async (documents: ReadonlyArray<{ partitionKey: string; id: string }>): Promise<Answer[]> => {
    const partitionKey = documents[0].partitionKey;
    try {
      if (documents.every((document) => document.partitionKey === partitionKey)) {
        const response = await container.items.batch(
          documents.map(({ id }) => ({ operationType: "Read", id })),
          partitionKey,
        );
        return documents.map((_, index) => batchAnswer(response.result?.[index]));
      }
      // `items.bulk` (non-atomic, one request per partition key range) is marked deprecated for
      // executeBulkOperations, which holds every call at least a second before it answers
      // (docs/performance.md): fit for loading data, not for reads an engine step waits on. The SDK
      // is pinned; should a later one drop `bulk`, the build fails here.
      const response = await container.items.bulk(documents.map(({ partitionKey: key, id }) => ({ operationType: "Read", id, partitionKey: key })));
      return documents.map((_, index) => batchAnswer(response[index]));
    } catch {
      // The SDK drops the status code of a failed batch; point reads give each caller the real error.
      return documents.map(() => "again");
    }
  };

  const readTogether = async (reads: readonly PendingRead[]): Promise<void> => {
    if (reads.length === 1) {
      await settleWithPointRead(reads[0]);
      return;
    }
    // One operation per distinct document; every one of them gets an answer (requestTogether).
    const keys = reads.map(documentKey);
    const distinct = new Map<string, PendingRead>();
    reads.forEach((read, index) => {
      if (!distinct.has(keys[index])) distinct.set(keys[index], read);
    });
    const answerList = await requestTogether([...distinct.values()]);
    const answers = new Map([...distinct.keys()].map((key, index) => [key, answerList[index]]));
    const handedOut = new Set<string>();
    await Promise.all(
      reads.map(async (read, index) => {
        const key = keys[index];
        // Every key has an answer, so `undefined` here is Cosmos's 404.
        const answer = answers.get(key);
        if (answer === "again") {
          await settleWithPointRead(read);
        } else if (answer === undefined) {
          read.resolve(undefined);
        } else {
          // The same document asked for twice: each caller gets its own copy.
          read.resolve(handedOut.has(key) ? structuredClone(answer) : answer);
          handedOut.add(key);
        }
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
      const slow = setTimeout(release, slowReadRequestMs);
      slow.unref();
      const done = (): void => {
        clearTimeout(slow);
        release();
      };
      // readTogether settles every read it took and does not throw; should it, its reads fail with that error.
      readTogether(taken).then(done, (error: unknown) => {
        for (const read of taken) read.reject(error);
        done();
      });
    }
  };

  const flush = (): void => {
    flushScheduled = false;
    send();
  };

  return {
    location,
    readDocument(partitionKey, id) {
      return new Promise<StoredDocument | undefined>((resolve, reject) => {
        waiting.push({ partitionKey, id, resolve, reject });
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
        .patch<JsonObject>({ operations: operations.map((operation) => ({ ...operation })) }, { accessCondition: { type: "IfMatch", condition: ifMatchEtag } })
        .catch((error: unknown) => {
          throw classified(error, "write", id);
        });
      if (response.resource === undefined) {
        throw new Error(`Cosmos returned no document after patching ${id}`);
      }
      return { document: response.resource, etag: response.etag };
    },
  };
}

/**
 * A document, `undefined` for a missing one, or "again" for anything a point read should answer
 * instead. A batch or bulk request below a missing database or container fails as a whole, so its
 * point reads name the settings; an operation's 404 with a substatus other than a missing
 * document's goes to a point read too.
 */
function batchAnswer(result: { statusCode: number; subStatusCode?: unknown; eTag?: string; resourceBody?: unknown } | undefined): Answer {
  if (result?.statusCode === 404) {
    const substatus = result.subStatusCode;
    return substatus === undefined || (typeof substatus === "number" && isMissingDocumentSubstatus(substatus)) ? undefined : "again";
  }
  const document = result?.resourceBody;
  if (result?.statusCode !== 200 || typeof document !== "object" || document === null || Array.isArray(document)) {
    return "again";
  }
  const etag = result.eTag ?? (document as JsonObject)._etag;
  return typeof etag === "string" && etag.length > 0 ? { document: document as JsonObject, etag } : "again";
}

/** Identifies a document across partitions. */
function documentKey(document: { readonly partitionKey: string; readonly id: string }): string {
  return JSON.stringify([document.partitionKey, document.id]);
}
