/**
 * Reading, waiting for and conditionally writing the Cosmos documents of a cluster: where they
 * live, a bounded wait for them to appear (this hook never creates them), soft-delete handling
 * as upstream, and the If-Match patch of the owned subtree with re-read and retry on 412.
 */
import type { ParsedResourceId } from "./azureResourceId";
import { serviceProviderClusterIdFor } from "./azureResourceId";
import type { StoredDocument } from "./azure/serviceProviderClusterStore";
import { cosmosItemIdFor } from "./documentId";
import { StatusRecordWriteError, cosmosStatusCode, describeCosmosError } from "./errors";
import type { DataPlaneOperatorsManagedIdentities } from "./statusRecord";
import { readStoredStatus, serviceProviderClusterDocumentProblems, statusPatchOperations } from "./statusRecord";
import type { SyncDependencies } from "./syncManagedIdentityStatus";
import { goToLower } from "./core/goStrings";

type DocumentDependencies = Pick<SyncDependencies, "documentStore" | "now" | "random" | "sleep" | "options">;

/** Where a cluster's documents live. */
export function locate(cluster: ParsedResourceId): { documentId: string; partitionKey: string; serviceProviderClusterResourceId: string; clusterDocumentId: string } {
  const serviceProviderClusterResourceId = serviceProviderClusterIdFor(cluster);
  return {
    documentId: cosmosItemIdFor(serviceProviderClusterResourceId),
    partitionKey: goToLower(cluster.subscriptionId),
    serviceProviderClusterResourceId,
    clusterDocumentId: cosmosItemIdFor(cluster.canonical),
  };
}

/** Waits for the ServiceProviderCluster document and refuses one that is not in the expected layout. */
export async function waitForServiceProviderCluster(
  dependencies: DocumentDependencies,
  location: ReturnType<typeof locate>,
): Promise<StoredDocument> {
  const stored = await waitForDocument(
    dependencies,
    location.partitionKey,
    location.documentId,
    `ServiceProviderCluster document ${location.documentId} (${location.serviceProviderClusterResourceId})`,
  );
  const problems = serviceProviderClusterDocumentProblems(stored.document);
  if (problems.length > 0) {
    throw new StatusRecordWriteError({
      recordId: location.documentId,
      message: `document ${location.documentId} is not a ServiceProviderCluster this hook can write to; nothing was written:\n  - ${problems.join("\n  - ")}`,
    });
  }
  return stored;
}

/** Reads a document, polling until it exists or the wait runs out. Never creates it. */
export async function waitForDocument(dependencies: DocumentDependencies, partitionKey: string, id: string, description: string): Promise<StoredDocument> {
  const deadline = dependencies.now().getTime() + dependencies.options.documentWaitInMs;
  // Bounded by the clock and, should the clock stand still, by the number of polls.
  const maxPolls = Math.ceil(dependencies.options.documentWaitInMs / Math.max(1, dependencies.options.documentPollIntervalInMs)) + 1;
  for (let poll = 1; ; poll += 1) {
    const stored = await readLive(dependencies, partitionKey, id, description);
    if (stored !== undefined) {
      return stored;
    }
    const remaining = deadline - dependencies.now().getTime();
    if (remaining <= 0 || poll >= maxPolls) {
      throw new StatusRecordWriteError({
        recordId: id,
        statusCode: 404,
        message:
          `${description} does not exist (waited ${Math.round(dependencies.options.documentWaitInMs / 1000)} s for the resource provider to create it); ` +
          "nothing was written. This hook never creates it: check that the cluster exists and that cosmosEndpoint/cosmosDatabase/cosmosContainer point at the right container.",
      });
    }
    await dependencies.sleep(Math.min(dependencies.options.documentPollIntervalInMs, remaining));
  }
}

/** Reads a document, treating a soft-deleted one (envelope deletionTimestamp) as absent, as upstream does. */
export async function readLive(dependencies: DocumentDependencies, partitionKey: string, id: string, description: string): Promise<StoredDocument | undefined> {
  let stored: StoredDocument | undefined;
  try {
    stored = await dependencies.documentStore.readDocument(partitionKey, id);
  } catch (error) {
    throw new StatusRecordWriteError({ recordId: id, statusCode: cosmosStatusCode(error), message: `failed to read ${description}: ${describeCosmosError(error)}`, cause: error });
  }
  if (stored === undefined || typeof stored.document.deletionTimestamp === "string") {
    return undefined;
  }
  return stored;
}

/**
 * Writes the owned subtree with If-Match, re-reading and retrying on 412 up to
 * `maxWriteAttempts`. `decide` maps the stored subtree to the one to persist, or `undefined` when
 * nothing needs writing; it is called again on every re-read, so a concurrent writer's changes
 * to the rest of the document are kept.
 */
export async function writeStatus(
  dependencies: DocumentDependencies,
  location: ReturnType<typeof locate>,
  initial: StoredDocument,
  decide: (stored: ReturnType<typeof readStoredStatus>) => DataPlaneOperatorsManagedIdentities | undefined,
): Promise<{ status: DataPlaneOperatorsManagedIdentities; wrote: boolean; writeAttempts: number }> {
  let current = initial;
  for (let attempt = 1; ; attempt += 1) {
    const storedStatus = readStoredStatus(current.document);
    const desiredStatus = decide(storedStatus);
    if (desiredStatus === undefined) {
      return { status: storedStatus.status, wrote: false, writeAttempts: attempt - 1 };
    }
    try {
      await dependencies.documentStore.patchDocument(
        location.partitionKey,
        location.documentId,
        statusPatchOperations(current.document, desiredStatus, current.etag),
        current.etag,
      );
      return { status: desiredStatus, wrote: true, writeAttempts: attempt };
    } catch (error) {
      const statusCode = cosmosStatusCode(error);
      if (statusCode === 404) {
        // Deleted between our read and our write (Cosmos answers the patch with an empty 404 body).
        throw new StatusRecordWriteError({
          recordId: location.documentId,
          statusCode,
          message: `failed to write ServiceProviderCluster document ${location.documentId}: NotFound (HTTP 404): the document was deleted while the status was being written; nothing was written`,
          cause: error,
        });
      }
      if (statusCode !== 412 || attempt >= dependencies.options.maxWriteAttempts) {
        const exhausted = statusCode === 412 ? ` after ${attempt} attempts (the document kept changing between read and write)` : "";
        throw new StatusRecordWriteError({
          recordId: location.documentId,
          statusCode,
          message: `failed to write ServiceProviderCluster document ${location.documentId}${exhausted}: ${describeCosmosError(error)}`,
          cause: error,
        });
      }
      // Another writer changed the document: back off briefly, re-read and merge onto the new version.
      await dependencies.sleep(Math.round((10 + dependencies.random() * 40) * attempt));
      const reread = await readLive(dependencies, location.partitionKey, location.documentId, `ServiceProviderCluster document ${location.documentId}`);
      if (reread === undefined) {
        throw new StatusRecordWriteError({
          recordId: location.documentId,
          statusCode: 404,
          message: `ServiceProviderCluster document ${location.documentId} was deleted while the status was being written; nothing was written`,
        });
      }
      current = reread;
    }
  }
}
