/** A pass's dependencies with a span around each I/O call, counting retries, throttled answers and time spent waiting for the pass's span. */
import type { ClusterCredentialSource, ClusterReader } from "../azure/clusterCredentials";
import type { MsiAnswerSource } from "../azure/managedIdentitiesDataPlane";
import type { UserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import type { DocumentStore } from "../cosmos/documentStore";
import type { ParsedResourceId } from "../core/azureResourceId";
import { cosmosStatusCode } from "../core/errors";
import { retryAfterInMs } from "../core/retryAfter";
import { locate } from "../core/documentLocation";
import type { SpanAttributes, SpanScope } from "../logging/spans";
import { inSpan } from "../logging/spans";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { StatusHalf } from "./passAttributes";
import { attribute } from "./passAttributes";

/** What the pass's span reports about its requests. */
export interface PassCounters {
  /** Requests made again after a failed attempt (ARM reads of the same identity, Cosmos writes after 412). */
  retries: number;
  /** Answers that said "too many requests" (HTTP 429). */
  throttled: number;
  /** The waits those answers asked for (Retry-After), in milliseconds. */
  throttleWaitMs: number;
  /** Time the pass slept: retry backoffs, throttling waits, polls for a document. */
  waitMs: number;
}

/** The counters as span attributes. */
export function counterAttributes(counters: PassCounters): SpanAttributes {
  return {
    [attribute.retries]: counters.retries,
    [attribute.throttled]: counters.throttled,
    [attribute.throttleWaitMs]: counters.throttleWaitMs,
    [attribute.waitMs]: counters.waitMs,
  };
}

/** Runs `run` in a span; a rejection records its HTTP status and counts a throttled answer. */
function traced<T>(name: string, attributes: SpanAttributes, counters: PassCounters, run: (span: SpanScope) => Promise<T>): Promise<T> {
  return inSpan(name, attributes, async (span) => {
    try {
      return await run(span);
    } catch (error) {
      const statusCode = cosmosStatusCode(error);
      const retryAfterMs = retryAfterInMs(error);
      span.set({ [attribute.statusCode]: statusCode, [attribute.retryAfterMs]: retryAfterMs });
      if (statusCode === 429) {
        counters.throttled += 1;
        counters.throttleWaitMs += retryAfterMs ?? 0;
      }
      throw error;
    }
  });
}

function tracedReader(reader: UserAssignedIdentityReader, half: StatusHalf, counters: PassCounters): UserAssignedIdentityReader {
  const attempts = new Map<string, number>();
  return {
    getUserAssignedIdentity(resourceId, options) {
      const key = resourceId.canonical.toLowerCase();
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      if (attempt > 1) counters.retries += 1;
      return traced("arm read identity", { [attribute.identityId]: resourceId.canonical, [attribute.half]: half, "aro_hcp.attempt": attempt }, counters, () =>
        reader.getUserAssignedIdentity(resourceId, options),
      );
    },
    ...(reader.acquireToken === undefined
      ? {}
      : {
          acquireToken: (options: { readonly abortSignal: AbortSignal }) =>
            traced("arm token", { [attribute.half]: half }, counters, () => reader.acquireToken?.(options) ?? Promise.resolve(undefined)),
        }),
  };
}

function tracedDocumentStore(store: DocumentStore, cluster: ParsedResourceId, counters: PassCounters): DocumentStore {
  const location = locate(cluster);
  const kindOf = (id: string): string | undefined =>
    id === location.documentId ? "ServiceProviderCluster" : id === location.clusterDocumentId ? "HCPOpenShiftCluster" : undefined;
  let writes = 0;
  return {
    ...(store.location === undefined ? {} : { location: store.location }),
    readDocument(partitionKey, id) {
      return traced("cosmos read document", { [attribute.documentId]: id, [attribute.documentKind]: kindOf(id) }, counters, async (span) => {
        const stored = await store.readDocument(partitionKey, id);
        span.set({ "aro_hcp.document.found": stored !== undefined });
        return stored;
      });
    },
    patchDocument(partitionKey, id, operations, ifMatchEtag) {
      writes += 1;
      if (writes > 1) counters.retries += 1;
      return traced(
        "cosmos write status",
        { [attribute.documentId]: id, [attribute.documentKind]: kindOf(id), "aro_hcp.patch.operations": operations.length, "aro_hcp.attempt": writes },
        counters,
        () => store.patchDocument(partitionKey, id, operations, ifMatchEtag),
      );
    },
  };
}

function tracedClusterCredentials(source: ClusterCredentialSource, counters: PassCounters): ClusterCredentialSource {
  return {
    async readerFor(request, options): Promise<ClusterReader> {
      const built = await traced("cluster credential", { [attribute.half]: "data plane" }, counters, () => source.readerFor(request, options));
      return { ...built, reader: tracedReader(built.reader, "data plane", counters) };
    },
  };
}

function tracedMsiAnswers(source: MsiAnswerSource, counters: PassCounters): MsiAnswerSource {
  return {
    ...(source.standIn === undefined ? {} : { standIn: source.standIn }),
    answer(identityUrl, identityIds, options) {
      const name = source.standIn === undefined ? "data plane request" : "fixed identity answer";
      return traced(name, { [attribute.half]: "msi", "aro_hcp.identities.asked": identityIds.length }, counters, () =>
        source.answer(identityUrl, identityIds, options),
      );
    },
  };
}

/** The dependencies of one pass over `cluster`, each I/O call in a span, counting into `counters`. */
export function tracedDependencies(dependencies: SyncDependencies, cluster: ParsedResourceId, counters: PassCounters): SyncDependencies {
  return {
    ...dependencies,
    documentStore: tracedDocumentStore(dependencies.documentStore, cluster, counters),
    userAssignedIdentityReader: tracedReader(dependencies.userAssignedIdentityReader, "data plane", counters),
    sleep: async (durationInMs) => {
      counters.waitMs += durationInMs;
      await dependencies.sleep(durationInMs);
    },
    ...(dependencies.clusterCredentials === undefined ? {} : { clusterCredentials: tracedClusterCredentials(dependencies.clusterCredentials, counters) }),
    ...(dependencies.msiAnswers === undefined ? {} : { msiAnswers: tracedMsiAnswers(dependencies.msiAnswers, counters) }),
  };
}
