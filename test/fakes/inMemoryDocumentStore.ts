/**
 * An in-memory DocumentStore with Cosmos semantics where they matter to the sync pass:
 * - every write gets a new `_etag` (and `_ts`); reads return deep copies carrying it;
 * - `patchDocument` with a stale etag throws a Cosmos-ErrorResponse-shaped error with code 412,
 *   a missing document 404, a patch into a missing parent 400;
 * - `set` / `remove` patch operations address the document by JSON pointer, as Cosmos does.
 *
 * Every call is recorded, and so is the most reads ever in flight at once (a read is in flight
 * from its call until its promise settles). Interference is scripted: run an action just before
 * the next patch of a document (another writer, a delete), or make the next call fail with a
 * given error.
 */
import type { DocumentStore, StoredDocument } from "../../resources/cosmos/documentStore";
import type { JsonObject, JsonValue } from "../../resources/core/json";
import type { PatchOperation } from "../../resources/core/serviceProviderClusterDocument";

/** One recorded call. */
export type DocumentStoreCall =
  | { readonly kind: "read"; readonly partitionKey: string; readonly id: string; readonly outcome: "found" | "missing" | "error" }
  | {
      readonly kind: "patch";
      readonly partitionKey: string;
      readonly id: string;
      readonly operations: readonly PatchOperation[];
      readonly ifMatchEtag: string;
      readonly outcome: "applied" | "error";
    };

/** The error shape of @azure/cosmos `ErrorResponse` (plain Error with numeric `code`). */
export type CosmosErrorLike = Error & {
  code: number;
  substatus?: number;
  body: { code: string; message: string };
  headers: Record<string, string>;
  activityId: string;
  retryAfterInMs?: number;
};

const cosmosCodeNames: Record<number, string> = {
  400: "BadRequest",
  404: "NotFound",
  409: "Conflict",
  412: "PreconditionFailed",
  429: "TooManyRequests",
  503: "ServiceUnavailable",
};

/** Builds an error shaped like a Cosmos ErrorResponse for the given HTTP status. */
export function cosmosError(code: number, message?: string, extra: { retryAfterInMs?: number } = {}): CosmosErrorLike {
  const text = message ?? `${cosmosCodeNames[code] ?? "Error"} (simulated)`;
  const error = new Error(`Message: {"Errors":["${text}"]}\r\nActivityId: 00000000-0000-0000-0000-00000000a11d, Request URI: /apps/simulated`);
  return Object.assign(error, {
    code,
    body: { code: cosmosCodeNames[code] ?? "Error", message: text },
    headers: {},
    activityId: "00000000-0000-0000-0000-00000000a11d",
    ...extra,
  });
}

type Action = (store: InMemoryDocumentStore) => void;

interface ScriptedFailure {
  readonly kind: "read" | "patch" | "any";
  readonly id: string | undefined;
  readonly error: Error;
  remaining: number;
}

interface ScriptedInterference {
  readonly id: string;
  readonly action: Action;
  remaining: number;
}

function deepCopy<T extends JsonValue>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function storeKey(partitionKey: string, id: string): string {
  return `${partitionKey}\u0000${id}`;
}

/** See the module comment. */
export class InMemoryDocumentStore implements DocumentStore {
  readonly calls: DocumentStoreCall[] = [];
  /** The most reads in flight at once so far. */
  maxReadsInFlight = 0;
  private readsInFlight = 0;
  private readonly documents = new Map<string, JsonObject>();
  private readonly failures: ScriptedFailure[] = [];
  private readonly interferences: ScriptedInterference[] = [];
  private etagCounter = 0;
  private timestamp = 1_786_708_800; // 2026-08-14T12:00:00Z, advanced by one second per write

  constructor(documents: readonly JsonObject[] = []) {
    for (const document of documents) {
      this.put(document);
    }
  }

  // ---- DocumentStore -------------------------------------------------------------------------

  async readDocument(partitionKey: string, id: string): Promise<StoredDocument | undefined> {
    this.readsInFlight += 1;
    this.maxReadsInFlight = Math.max(this.maxReadsInFlight, this.readsInFlight);
    try {
      return await this.readNow(partitionKey, id);
    } finally {
      this.readsInFlight -= 1;
    }
  }

  private async readNow(partitionKey: string, id: string): Promise<StoredDocument | undefined> {
    // A read answers in a later turn, as over the network: reads started together overlap.
    await Promise.resolve();
    const failure = this.takeFailure("read", id);
    if (failure !== undefined) {
      this.calls.push({ kind: "read", partitionKey, id, outcome: "error" });
      throw failure;
    }
    const document = this.documents.get(storeKey(partitionKey, id));
    this.calls.push({ kind: "read", partitionKey, id, outcome: document === undefined ? "missing" : "found" });
    if (document === undefined) {
      return undefined;
    }
    return { document: deepCopy(document), etag: document._etag as string };
  }

  async patchDocument(partitionKey: string, id: string, operations: readonly PatchOperation[], ifMatchEtag: string): Promise<StoredDocument> {
    await Promise.resolve();
    const record = (outcome: "applied" | "error"): void => {
      this.calls.push({
        kind: "patch",
        partitionKey,
        id,
        operations: deepCopy(operations as unknown as JsonValue) as unknown as PatchOperation[],
        ifMatchEtag,
        outcome,
      });
    };
    const interference = this.interferences.find((candidate) => candidate.id === id && candidate.remaining > 0);
    if (interference !== undefined) {
      interference.remaining -= 1;
      interference.action(this);
    }
    const failure = this.takeFailure("patch", id);
    if (failure !== undefined) {
      record("error");
      throw failure;
    }
    if (ifMatchEtag.length === 0) {
      record("error");
      throw new RangeError("refusing an unconditional write: no etag to match");
    }
    const current = this.documents.get(storeKey(partitionKey, id));
    if (current === undefined) {
      record("error");
      throw cosmosError(404, "Entity with the specified id does not exist in the system.");
    }
    if (current._etag !== ifMatchEtag) {
      record("error");
      throw cosmosError(412, "One of the specified pre-condition is not met.");
    }
    if (operations.length > 10) {
      record("error");
      throw cosmosError(400, "Patch request has more than 10 operations.");
    }
    const next = deepCopy(current);
    try {
      for (const operation of operations) {
        applyPatchOperation(next, operation);
      }
    } catch (error) {
      record("error");
      throw error;
    }
    this.stamp(next);
    this.documents.set(storeKey(partitionKey, id), next);
    record("applied");
    return { document: deepCopy(next), etag: next._etag as string };
  }

  // ---- Arrangement ---------------------------------------------------------------------------

  /** Stores a document (keyed by its `partitionKey` and `id`) as a create/replace would; returns its etag. */
  put(document: JsonObject): string {
    const copy = deepCopy(document);
    if (typeof copy.id !== "string" || typeof copy.partitionKey !== "string") {
      throw new TypeError("a stored document needs string id and partitionKey");
    }
    this.stamp(copy);
    this.documents.set(storeKey(copy.partitionKey, copy.id), copy);
    return copy._etag as string;
  }

  /** As another writer would: changes the stored document and gives it a new etag. */
  mutate(partitionKey: string, id: string, mutation: (document: JsonObject) => void): string {
    const current = this.documents.get(storeKey(partitionKey, id));
    if (current === undefined) {
      throw new Error(`cannot mutate missing document ${id}`);
    }
    const next = deepCopy(current);
    mutation(next);
    this.stamp(next);
    this.documents.set(storeKey(partitionKey, id), next);
    return next._etag as string;
  }

  /** Removes a document (hard delete). */
  remove(partitionKey: string, id: string): void {
    this.documents.delete(storeKey(partitionKey, id));
  }

  /** Runs `action` just before the next `times` patches of document `id` are evaluated. */
  beforeNextPatch(id: string, action: Action, times = 1): void {
    this.interferences.push({ id, action, remaining: times });
  }

  /** Makes the next `times` calls of `kind` (optionally only for document `id`) throw `error`. */
  failNext(kind: "read" | "patch" | "any", error: Error, options: { id?: string; times?: number } = {}): void {
    this.failures.push({ kind, id: options.id, error, remaining: options.times ?? 1 });
  }

  // ---- Inspection (not recorded) ------------------------------------------------------------

  /** A deep copy of the stored document, or undefined. */
  get(partitionKey: string, id: string): JsonObject | undefined {
    const document = this.documents.get(storeKey(partitionKey, id));
    return document === undefined ? undefined : deepCopy(document);
  }

  /** The current etag of a stored document. */
  etagOf(partitionKey: string, id: string): string | undefined {
    return this.documents.get(storeKey(partitionKey, id))?._etag as string | undefined;
  }

  reads(id?: string): Array<Extract<DocumentStoreCall, { kind: "read" }>> {
    return this.calls.filter((call): call is Extract<DocumentStoreCall, { kind: "read" }> => call.kind === "read" && (id === undefined || call.id === id));
  }

  patches(id?: string): Array<Extract<DocumentStoreCall, { kind: "patch" }>> {
    return this.calls.filter((call): call is Extract<DocumentStoreCall, { kind: "patch" }> => call.kind === "patch" && (id === undefined || call.id === id));
  }

  appliedPatches(id?: string): Array<Extract<DocumentStoreCall, { kind: "patch" }>> {
    return this.patches(id).filter((call) => call.outcome === "applied");
  }

  private stamp(document: JsonObject): void {
    this.etagCounter += 1;
    this.timestamp += 1;
    document._etag = `"0000${this.etagCounter.toString(16).padStart(4, "0")}-0000-0000-0000-000000000000"`;
    document._ts = this.timestamp;
    document._rid ??= `rid${this.etagCounter}==`;
    document._self ??= `dbs/simulated/colls/simulated/docs/${typeof document.id === "string" ? document.id : JSON.stringify(document.id)}/`;
    document._attachments ??= "attachments/";
  }

  private takeFailure(kind: "read" | "patch", id: string): Error | undefined {
    const failure = this.failures.find(
      (candidate) => (candidate.kind === kind || candidate.kind === "any") && (candidate.id === undefined || candidate.id === id) && candidate.remaining > 0,
    );
    if (failure === undefined) {
      return undefined;
    }
    failure.remaining -= 1;
    return failure.error;
  }
}

/** Applies one Cosmos patch operation in place. Cosmos requires the parent of the target to exist. */
export function applyPatchOperation(document: JsonObject, operation: PatchOperation): void {
  const segments = parsePointer(operation.path);
  if (segments.length === 0) {
    throw cosmosError(400, `patch path '${operation.path}' must address a property`);
  }
  let parent: JsonValue = document;
  for (const segment of segments.slice(0, -1)) {
    const child: JsonValue | undefined = isObject(parent) ? parent[segment] : Array.isArray(parent) ? parent[Number(segment)] : undefined;
    if (child === undefined || child === null || typeof child !== "object") {
      throw cosmosError(400, `patch path '${operation.path}': parent '${segment}' does not exist or is not an object`);
    }
    parent = child;
  }
  const last = segments[segments.length - 1];
  if (!isObject(parent)) {
    throw cosmosError(400, `patch path '${operation.path}': only object parents are supported by this fake`);
  }
  if (operation.op === "set") {
    parent[last] = deepCopy(operation.value);
  } else {
    if (!(last in parent)) {
      throw cosmosError(400, `patch path '${operation.path}' does not exist and cannot be removed`);
    }
    delete parent[last];
  }
}

function parsePointer(path: string): string[] {
  if (!path.startsWith("/")) {
    throw cosmosError(400, `patch path '${path}' is not a JSON pointer`);
  }
  return path
    .slice(1)
    .split("/")
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
