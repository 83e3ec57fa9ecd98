/**
 * Reading and waiting for the Cosmos documents of a cluster: a bounded wait for them to appear
 * (this hook never creates them), and soft-delete handling as upstream (an envelope
 * `deletionTimestamp` reads as absent).
 */
import { CosmosDocumentError, cosmosStatusCode, describeCosmosError, isCosmosConfigurationError } from "../core/errors";
import { clusterMessage, serviceProviderClusterDocumentLabel } from "../core/clusterMessage";
import type { DocumentLocation } from "../core/documentLocation";
import { serviceProviderClusterDocumentProblems } from "../core/serviceProviderClusterDocument";
import type { StoredDocument } from "../cosmos/documentStore";
import { log } from "../logging/logger";
import type { SyncDependencies } from "./syncDependencies";

/** What reading and writing documents needs of a pass's dependencies. */
export type DocumentDependencies = Pick<SyncDependencies, "documentStore" | "now" | "random" | "sleep" | "options">;

/** How messages name the cluster's HCPOpenShiftCluster document. */
export function clusterDocumentDescription(location: DocumentLocation): string {
  return `the HCPOpenShiftCluster document of cluster ${location.clusterName} (${location.clusterDocumentId})`;
}

/** How messages name the ServiceProviderCluster document of a location. */
export function serviceProviderClusterDescription(location: DocumentLocation): string {
  return `the ServiceProviderCluster document of cluster ${location.clusterName} (${location.documentId})`;
}

/**
 * Waits for the ServiceProviderCluster document and refuses one that is not in the expected layout.
 * @param firstRead - A read of it already started ({@link startReadLive}), used as the first poll.
 */
export async function waitForServiceProviderCluster(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  firstRead?: Promise<StoredDocument | undefined>,
): Promise<StoredDocument> {
  const stored = await waitForDocument(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location), firstRead);
  const problems = serviceProviderClusterDocumentProblems(stored.document);
  if (problems.length > 0) {
    throw new CosmosDocumentError({
      documentId: location.documentId,
      message: clusterMessage({
        cause: `the ServiceProviderCluster document is not in the layout upstream writes`,
        clusterName: location.clusterName,
        outcome: "nothing was written",
        reference: serviceProviderClusterDocumentLabel(location.documentId),
        details: problems,
      }),
    });
  }
  return stored;
}

/**
 * Reads a document, polling until it exists or the wait runs out. Never creates it.
 * @param firstRead - A read of it already started ({@link startReadLive}), used as the first poll.
 */
export async function waitForDocument(
  dependencies: DocumentDependencies,
  partitionKey: string,
  id: string,
  description: string,
  firstRead?: Promise<StoredDocument | undefined>,
): Promise<StoredDocument> {
  const deadline = dependencies.now().getTime() + dependencies.options.documentWaitInMs;
  // Bounded by the clock and, should the clock stand still, by the number of polls.
  const maxPolls = Math.ceil(dependencies.options.documentWaitInMs / Math.max(1, dependencies.options.documentPollIntervalInMs)) + 1;
  for (let poll = 1; ; poll += 1) {
    const stored = poll === 1 && firstRead !== undefined ? await firstRead : await readLive(dependencies, partitionKey, id, description);
    if (stored !== undefined) {
      return stored;
    }
    const remaining = deadline - dependencies.now().getTime();
    if (remaining <= 0 || poll >= maxPolls) {
      throw new CosmosDocumentError({
        documentId: id,
        statusCode: 404,
        message:
          `${description} does not exist after ${Math.round(dependencies.options.documentWaitInMs / 1000)} s ('aro-hcp-identity-status:documentWaitSeconds'): ` +
          "the resource provider creates it, this hook never does; check that the cluster exists and that cosmosEndpoint/cosmosDatabase/cosmosContainer " +
          "point at the fleet's container. Nothing was written.",
      });
    }
    if (poll === 1) {
      log("info", "wait", id, `${description} does not exist yet; polling for up to ${Math.round(remaining / 1000)} s`);
    }
    await dependencies.sleep(Math.min(dependencies.options.documentPollIntervalInMs, remaining));
  }
}

/**
 * Starts {@link readLive} now, for a caller that awaits it later or, when it fails first for
 * another reason, never: the rejection is handled here, so a read left behind never becomes an
 * unhandled rejection (which Node treats as a crash by default). Awaiting the returned promise
 * still throws its error.
 */
export function startReadLive(dependencies: DocumentDependencies, partitionKey: string, id: string, description: string): Promise<StoredDocument | undefined> {
  const read = readLive(dependencies, partitionKey, id, description);
  read.catch(() => undefined);
  return read;
}

/** Reads a document, treating a soft-deleted one (envelope deletionTimestamp) as absent, as upstream does. */
export async function readLive(dependencies: DocumentDependencies, partitionKey: string, id: string, description: string): Promise<StoredDocument | undefined> {
  let stored: StoredDocument | undefined;
  try {
    stored = await dependencies.documentStore.readDocument(partitionKey, id);
  } catch (error) {
    throw new CosmosDocumentError({
      documentId: id,
      statusCode: cosmosStatusCode(error),
      // Cause first; a settings problem already says that nothing was written and what to check.
      message: `${describeCosmosError(error).replace(/[.\s]+$/, "")}${isCosmosConfigurationError(error) ? "" : "; nothing was written"}. [reading ${description}]`,
      cause: error,
    });
  }
  if (stored === undefined || typeof stored.document.deletionTimestamp === "string") {
    return undefined;
  }
  return stored;
}
