/**
 * The spans of a provider call, of a cluster's pass and of each of the pass's I/O calls, loaded only while
 * tracing is on; docs/operations.md ("Traces") lists their names and attributes, which operators filter by.
 */
import type { ClusterCredentialSource, ClusterReader } from "../azure/clusterCredentials";
import type { MsiAnswerSource } from "../azure/managedIdentitiesDataPlane";
import type { UserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import type { DocumentStore } from "../cosmos/documentStore";
import type { ParsedResourceId } from "../core/azureResourceId";
import { clusterNameOf, failureCauseOf, halvesOfFailure, messageOf } from "../core/clusterMessage";
import { locate } from "../core/documentLocation";
import { cosmosStatusCode, retryAfterInMs } from "../core/errorClassification";
import { failureCodes } from "../core/errors";
import type { SpanAttributes, SpanScope } from "../logging/spans";
import { inSpan } from "../logging/spans";
import type { SyncDependencies } from "../sync/syncDependencies";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";
import { partialResultOf } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";

/** The resource's type token (serviceProviderClusterIdentityStatus.ts; not imported: that module is above this one). */
const resourceType = "pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus";

function failureAttributes(error: unknown, clusterName?: string): SpanAttributes {
  const { dataPlane, msi } = halvesOfFailure(error);
  return {
    "aro_hcp.failure.class": error instanceof Error ? error.name : "Error",
    "aro_hcp.failure.cause": failureCauseOf(messageOf(error), clusterName),
    "aro_hcp.failure.half": dataPlane && msi ? "both" : dataPlane ? "data plane" : "msi",
  };
}

/** One provider call in its span, named by all of the resource's URN the provider host is told. */
export function callSpan<T>(method: string, clusterResourceId: string | undefined, run: () => Promise<T>): Promise<T> {
  const attributes = {
    "aro_hcp.provider.method": method,
    "pulumi.resource.type": resourceType,
    // The engine names the project to its plugins; the stack it does not.
    "pulumi.project": process.env.PULUMI_PROJECT,
    "aro_hcp.cluster.resource_id": clusterResourceId,
  };
  return inSpan(`provider ${method}`, attributes, run, failureAttributes);
}

export interface PassResults {
  readonly sync: SyncResult;
  readonly refresh: RefreshResult;
}
export type PassKind = keyof PassResults;

/** What a sync pass's result says: its work, its writes and its identities that failed. */
function syncResultAttributes(result: SyncResult): SpanAttributes {
  return {
    "aro_hcp.lookups": result.lookups,
    "aro_hcp.write_attempts": result.writeAttempts,
    "aro_hcp.identities.failed": result.failures.length,
    "aro_hcp.failure.codes": result.failures.length === 0 ? undefined : failureCodes(result.failures),
    "aro_hcp.data_plane.work_reason": result.workReason,
    "aro_hcp.msi.work_reason": result.msiWorkReason,
    "aro_hcp.skipped_reason": result.skippedReason,
    "aro_hcp.msi.skipped_reason": result.msiSkippedReason,
  };
}

/** A pass that returned: a sync is `written` when it wrote, else `current`; a refresh writes nothing, so `current`, with what it found. */
const resultAttributes: { readonly [K in PassKind]: (result: PassResults[K]) => SpanAttributes } = {
  sync: (result) => ({ "aro_hcp.outcome": result.wrote ? "written" : "current", ...syncResultAttributes(result) }),
  refresh: (result) => ({
    "aro_hcp.outcome": "current",
    "aro_hcp.refresh.presence": result.presence,
    "aro_hcp.refresh.drift": result.drift.length,
    "aro_hcp.lookups": result.lookups,
  }),
};

/**
 * What the pass's span counts of its requests: those made again after a failed attempt (ARM reads of
 * the same identity, Cosmos writes after 412), answers of HTTP 429 and the waits they asked for
 * (Retry-After), and the time the pass slept (retry backoffs, throttling waits, polls for a document).
 */
class PassTrace {
  retries = 0;
  throttled = 0;
  throttleWaitMs = 0;
  waitMs = 0;

  counts(): SpanAttributes {
    return {
      "aro_hcp.retries": this.retries,
      "aro_hcp.throttled": this.throttled,
      "aro_hcp.throttle_wait_ms": this.throttleWaitMs,
      "aro_hcp.wait_ms": this.waitMs,
    };
  }

  /** Runs `run` in a span; a failed request records its HTTP status and Retry-After. */
  request<T>(name: string, attributes: SpanAttributes, run: (span: SpanScope) => Promise<T>): Promise<T> {
    return inSpan(name, attributes, run, (error) => {
      const statusCode = cosmosStatusCode(error);
      const retryAfterMs = retryAfterInMs(error);
      if (statusCode === 429) {
        this.throttled += 1;
        this.throttleWaitMs += retryAfterMs ?? 0;
      }
      return { "http.response.status_code": statusCode, "aro_hcp.retry_after_ms": retryAfterMs };
    });
  }
}

/** One cluster's pass in its span: the dependencies it gets trace their I/O and count retries and waits. */
export function passSpan<K extends PassKind>(
  kind: K,
  cluster: ParsedResourceId,
  dependencies: SyncDependencies,
  run: (dependencies: SyncDependencies) => Promise<PassResults[K]>,
): Promise<PassResults[K]> {
  const trace = new PassTrace();
  // A pass that threw is `kept` with a result attached (answers persisted, failures beside kept IDs), else `failed`.
  const failed = (error: unknown): SpanAttributes => {
    const partial = partialResultOf(error);
    return {
      "aro_hcp.outcome": partial === undefined ? "failed" : "kept",
      ...(partial === undefined ? {} : syncResultAttributes(partial)),
      ...failureAttributes(error, clusterNameOf(cluster)),
      ...trace.counts(),
    };
  };
  const passed = async (span: SpanScope): Promise<PassResults[K]> => {
    const result = await run(tracedDependencies(dependencies, cluster, trace));
    span.set({ ...(resultAttributes[kind] as (result: PassResults[K]) => SpanAttributes)(result), ...trace.counts() });
    return result;
  };
  return inSpan(`cluster ${kind} pass`, { "aro_hcp.pass.kind": kind, "aro_hcp.cluster.resource_id": cluster.canonical }, passed, failed);
}

/** A reader of the data plane operators' identities (the fleet's, or a cluster's own credential's). */
function tracedReader(reader: UserAssignedIdentityReader, trace: PassTrace): UserAssignedIdentityReader {
  const attempts = new Map<string, number>();
  return {
    getUserAssignedIdentity(resourceId, options) {
      const key = resourceId.canonical.toLowerCase();
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      if (attempt > 1) trace.retries += 1;
      return trace.request(
        "arm read identity",
        { "aro_hcp.identity.resource_id": resourceId.canonical, "aro_hcp.status.half": "data plane", "aro_hcp.attempt": attempt },
        () => reader.getUserAssignedIdentity(resourceId, options),
      );
    },
    ...(reader.acquireToken === undefined
      ? {}
      : {
          acquireToken: (options: { readonly abortSignal: AbortSignal }) =>
            trace.request("arm token", { "aro_hcp.status.half": "data plane" }, () => reader.acquireToken?.(options) ?? Promise.resolve(undefined)),
        }),
  };
}

function tracedDocumentStore(store: DocumentStore, cluster: ParsedResourceId, trace: PassTrace): DocumentStore {
  const location = locate(cluster);
  const documentAttributes = (id: string): SpanAttributes => ({
    "aro_hcp.document.id": id,
    "aro_hcp.document.kind": id === location.documentId ? "ServiceProviderCluster" : id === location.clusterDocumentId ? "HCPOpenShiftCluster" : undefined,
  });
  let writes = 0;
  return {
    ...(store.location === undefined ? {} : { location: store.location }),
    readDocument(partitionKey, id) {
      return trace.request("cosmos read document", documentAttributes(id), async (span) => {
        const stored = await store.readDocument(partitionKey, id);
        span.set({ "aro_hcp.document.found": stored !== undefined });
        return stored;
      });
    },
    patchDocument(partitionKey, id, operations, ifMatchEtag) {
      writes += 1;
      if (writes > 1) trace.retries += 1;
      return trace.request("cosmos write status", { ...documentAttributes(id), "aro_hcp.patch.operations": operations.length, "aro_hcp.attempt": writes }, () =>
        store.patchDocument(partitionKey, id, operations, ifMatchEtag),
      );
    },
  };
}

function tracedClusterCredentials(source: ClusterCredentialSource, trace: PassTrace): ClusterCredentialSource {
  return {
    async readerFor(request, options): Promise<ClusterReader> {
      const built = await trace.request("cluster credential", { "aro_hcp.status.half": "data plane" }, () => source.readerFor(request, options));
      return { ...built, reader: tracedReader(built.reader, trace) };
    },
  };
}

function tracedMsiAnswers(source: MsiAnswerSource, trace: PassTrace): MsiAnswerSource {
  const name = source.standIn === undefined ? "data plane request" : "fixed identity answer";
  return {
    ...(source.standIn === undefined ? {} : { standIn: source.standIn }),
    answer: (identityUrl, identityIds, options) =>
      trace.request(name, { "aro_hcp.status.half": "msi", "aro_hcp.identities.asked": identityIds.length }, () =>
        source.answer(identityUrl, identityIds, options),
      ),
  };
}

/** The dependencies of one pass over `cluster`, each I/O call in a span, counted in `trace`. */
function tracedDependencies(dependencies: SyncDependencies, cluster: ParsedResourceId, trace: PassTrace): SyncDependencies {
  const { clusterCredentials, msiAnswers } = dependencies;
  return {
    ...dependencies,
    documentStore: tracedDocumentStore(dependencies.documentStore, cluster, trace),
    userAssignedIdentityReader: tracedReader(dependencies.userAssignedIdentityReader, trace),
    sleep: async (durationInMs) => {
      trace.waitMs += durationInMs;
      await dependencies.sleep(durationInMs);
    },
    ...(clusterCredentials === undefined ? {} : { clusterCredentials: tracedClusterCredentials(clusterCredentials, trace) }),
    ...(msiAnswers === undefined ? {} : { msiAnswers: tracedMsiAnswers(msiAnswers, trace) }),
  };
}
