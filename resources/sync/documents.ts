/**
 * Every Cosmos read of a pass and a refresh. A document is waited for a bounded time; a soft-deleted
 * one reads as absent, as upstream's listers treat it. Absence means "not in this container", so it
 * counts as deletion only when the subscription's document (same partition) is there.
 */
import type { ClusterDesiredSet, LiveClusterDesiredSet } from "../core/clusterDocument";
import { desiredFromClusterDocument } from "../core/clusterDocument";
import { serviceProviderClusterDocumentLabel } from "../core/clusterMessage";
import type { DocumentLocation } from "../core/documentLocation";
import { CosmosDocumentError, isCosmosConfigurationError, isCosmosDocumentError, nothingWrittenError } from "../core/errors";
import { cosmosStatusCode, describeCosmosError } from "../core/errorClassification";
import { withoutFinalPeriod } from "../core/retrievalError";
import { serviceProviderClusterDocumentProblems } from "../core/serviceProviderClusterDocument";
import type { StoredDocument } from "../cosmos/documentStore";
import { absentEverywhereError } from "../cosmos/settingsProblems";
import { log } from "../logging/logger";
import type { SyncDependencies } from "./syncDependencies";

export type DocumentDependencies = Pick<SyncDependencies, "documentStore" | "now" | "random" | "sleep" | "options">;

/** A pass's documents: the cluster document's verdict, and the ServiceProviderCluster document (absent only for a deleting cluster). */
export type PassDocuments =
  | { readonly kind: "deleting"; readonly fromCluster: Extract<ClusterDesiredSet, { kind: "deleting" }>; readonly stored: StoredDocument | undefined }
  | { readonly kind: "live"; readonly fromCluster: LiveClusterDesiredSet; readonly stored: StoredDocument };

/** The read step of a pass: both reads at once, the cluster document deciding first (its failure reported, `refuse` before any wait). */
export async function readPassDocuments(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  refuse: (fromCluster: LiveClusterDesiredSet) => Error | undefined,
): Promise<PassDocuments> {
  const serviceProviderClusterRead = readServiceProviderCluster(dependencies, location);
  const clusterRead = readClusterDocument(dependencies, location);
  const clusterDocument = await waitForClusterDocument(dependencies, location, clusterRead);
  // Settled by now: the wait awaited it as its first poll (and threw had it failed).
  const firstServiceProviderClusterRead = (await clusterRead) === undefined ? undefined : serviceProviderClusterRead;
  const fromCluster = desiredFromClusterDocument(clusterDocument.document);
  if (fromCluster.kind === "deleting") {
    const stored = await (firstServiceProviderClusterRead ?? readServiceProviderCluster(dependencies, location));
    return { kind: "deleting", fromCluster, stored };
  }
  const refusal = refuse(fromCluster);
  if (refusal !== undefined) throw refusal;
  const stored = await waitForDocument(
    dependencies,
    location.partitionKey,
    location.documentId,
    serviceProviderClusterDescription(location),
    firstServiceProviderClusterRead,
  );
  const problems = serviceProviderClusterDocumentProblems(stored.document);
  if (problems.length > 0) {
    throw nothingWrittenError(location.documentId, {
      cause: "the ServiceProviderCluster document is not in the layout upstream writes",
      clusterName: location.clusterName,
      reference: serviceProviderClusterDocumentLabel(location.documentId),
      details: problems,
    });
  }
  return { kind: "live", fromCluster, stored };
}

export function readServiceProviderCluster(dependencies: DocumentDependencies, location: DocumentLocation): Promise<StoredDocument | undefined> {
  return readLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location));
}

export function readClusterDocument(dependencies: DocumentDependencies, location: DocumentLocation): Promise<StoredDocument | undefined> {
  return readLive(dependencies, location.partitionKey, location.clusterDocumentId, clusterDocumentDescription(location));
}

/** The cluster document's verdict, read once (no wait); undefined when the document is not there. */
export async function readClusterDesiredSet(dependencies: DocumentDependencies, location: DocumentLocation): Promise<ClusterDesiredSet | undefined> {
  const stored = await readClusterDocument(dependencies, location);
  return stored === undefined ? undefined : desiredFromClusterDocument(stored.document);
}

/** The read step of a refresh: the ServiceProviderCluster document, or what its absence means (`clusterDocumentPresent`, `deleted`, or an error). */
export async function readRefreshDocument(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
): Promise<{ readonly stored: StoredDocument } | { readonly absence: "clusterDocumentPresent" | "deleted" }> {
  const stored = await readServiceProviderCluster(dependencies, location);
  if (stored !== undefined) return { stored };
  const clusterRead = readClusterDocument(dependencies, location);
  const subscriptionRead = readEvenSoftDeleted(dependencies, location);
  subscriptionRead.catch(() => undefined);
  if ((await clusterRead) !== undefined) return { absence: "clusterDocumentPresent" };
  if ((await subscriptionRead) !== undefined) return { absence: "deleted" };
  throw nothingOfTheSubscription(dependencies, location, "refresh");
}

/** Waits for the cluster document; when neither it, the ServiceProviderCluster document nor the subscription's is there, the error names the settings. */
async function waitForClusterDocument(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  firstRead: Promise<StoredDocument | undefined>,
): Promise<StoredDocument> {
  try {
    return await waitForDocument(dependencies, location.partitionKey, location.clusterDocumentId, clusterDocumentDescription(location), firstRead);
  } catch (error) {
    if (!isCosmosDocumentError(error) || error.statusCode !== 404 || isCosmosConfigurationError(error)) throw error;
    // Only a proof changes the report: a read that fails here leaves the missing cluster document as the failure.
    const [spc, subscription] = await Promise.all([readServiceProviderCluster(dependencies, location), readEvenSoftDeleted(dependencies, location)]).catch(
      () => [true, true],
    );
    throw spc === undefined && subscription === undefined ? nothingOfTheSubscription(dependencies, location, "update") : error;
  }
}

function nothingOfTheSubscription(dependencies: DocumentDependencies, location: DocumentLocation, verb: "refresh" | "update"): CosmosDocumentError {
  return absentEverywhereError(
    verb,
    {
      serviceProviderClusterDocumentId: location.documentId,
      clusterDocumentId: location.clusterDocumentId,
      subscriptionDocumentId: location.subscriptionDocumentId,
      subscriptionResourceId: `/subscriptions/${location.partitionKey}`,
      clusterName: location.clusterName,
    },
    dependencies.documentStore.location,
  );
}

/** Reads a document, polling until it exists or the wait runs out (`firstRead`, already started, is the first poll). Never creates it. */
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
    if (stored !== undefined) return stored;
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
    if (poll === 1) log("info", "wait", id, `${description} does not exist yet; polling for up to ${Math.round(remaining / 1000)} s`);
    await dependencies.sleep(Math.min(dependencies.options.documentPollIntervalInMs, remaining));
  }
}

/** Reads a document, treating a soft-deleted one (envelope deletionTimestamp) as absent, as upstream does. */
export function readLive(dependencies: DocumentDependencies, partitionKey: string, id: string, description: string): Promise<StoredDocument | undefined> {
  const read = readOrFail(dependencies, partitionKey, id, description).then((stored) =>
    stored === undefined || typeof stored.document.deletionTimestamp === "string" ? undefined : stored,
  );
  // Started early by a pass that may never await it: its rejection is handled here, never an unhandled one.
  read.catch(() => undefined);
  return read;
}

/** The subscription's document as stored, a soft-deleted one included: any trace of the subscription proves the container. */
function readEvenSoftDeleted(dependencies: DocumentDependencies, location: DocumentLocation): Promise<StoredDocument | undefined> {
  return readOrFail(dependencies, location.partitionKey, location.subscriptionDocumentId, `the subscription's document ${location.subscriptionDocumentId}`);
}

async function readOrFail(dependencies: DocumentDependencies, partitionKey: string, id: string, description: string): Promise<StoredDocument | undefined> {
  try {
    return await dependencies.documentStore.readDocument(partitionKey, id);
  } catch (error) {
    throw new CosmosDocumentError({
      documentId: id,
      statusCode: cosmosStatusCode(error),
      // Cause first; a settings problem already says that nothing was written and what to check.
      message: `${withoutFinalPeriod(describeCosmosError(error))}${isCosmosConfigurationError(error) ? "" : "; nothing was written"}. [reading ${description}]`,
      cause: error,
    });
  }
}

export function clusterDocumentDescription(location: DocumentLocation): string {
  return `the HCPOpenShiftCluster document of cluster ${location.clusterName} (${location.clusterDocumentId})`;
}

export function serviceProviderClusterDescription(location: DocumentLocation): string {
  return `the ServiceProviderCluster document of cluster ${location.clusterName} (${location.documentId})`;
}
