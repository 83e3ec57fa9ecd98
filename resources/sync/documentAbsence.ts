/**
 * What a missing ServiceProviderCluster document means. Cosmos answers a read of a document that
 * was deleted and of one that was never in the container the settings name (another container of
 * the same database, a copy of the database) alike: 404. Read as "deleted", a `cosmosContainer`
 * that names another existing container made a refresh drop every resource from state. So the
 * absence counts only where the fleet's documents provably are: the resource provider keeps each
 * subscription's own document (id: uuid5 of `/subscriptions/<id>`) in the same container and
 * partition as its clusters' documents for as long as it knows the subscription, a deleted
 * subscription's included. Used only once the ServiceProviderCluster document read as absent, so
 * a refresh of a cluster whose document exists pays nothing.
 */
import { CosmosDocumentError, cosmosStatusCode, describeCosmosError, isCosmosConfigurationError, isCosmosDocumentError } from "../core/errors";
import type { DocumentLocation } from "../core/documentLocation";
import type { StoredDocument } from "../cosmos/documentStore";
import { absentEverywhereError } from "../cosmos/settingsProblems";
import type { DocumentDependencies } from "./documentReads";
import { clusterDocumentDescription, readLive, serviceProviderClusterDescription, startReadLive, waitForDocument } from "./documentReads";

/**
 * `clusterDocumentPresent`: the cluster's HCPOpenShiftCluster document is there (the cluster exists,
 * or is being deleted), so the container is the fleet's and only the ServiceProviderCluster document
 * is missing. `deleted`: neither cluster document is there but the subscription's is: the cluster's
 * documents were deleted from where the fleet's documents are.
 */
export type ServiceProviderClusterAbsence = "clusterDocumentPresent" | "deleted";

/**
 * Says what the absence of a cluster's ServiceProviderCluster document means; both reads go out at
 * once (one request: they share the partition key).
 * @throws CosmosDocumentError with a `configurationProblem`, naming the container, database and
 * endpoint settings, when the subscription's document is missing too: nothing of the fleet is
 * where the settings point.
 */
export async function explainMissingServiceProviderCluster(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  verb: "refresh",
): Promise<ServiceProviderClusterAbsence> {
  const clusterRead = startReadLive(dependencies, location.partitionKey, location.clusterDocumentId, clusterDocumentDescription(location));
  const subscriptionRead = readEvenSoftDeleted(dependencies, location.partitionKey, location.subscriptionDocumentId);
  subscriptionRead.catch(() => undefined);
  if ((await clusterRead) !== undefined) {
    return "clusterDocumentPresent";
  }
  if ((await subscriptionRead) !== undefined) {
    return "deleted";
  }
  throw nothingOfTheSubscription(dependencies, location, verb);
}

/**
 * Waits (bounded) for the cluster's HCPOpenShiftCluster document as a pass does
 * (documentReads.ts); when it never appears and neither the ServiceProviderCluster document nor the
 * subscription's is there either, the pass fails naming the settings instead of the document.
 */
export async function waitForClusterDocument(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  description: string,
  firstRead: Promise<StoredDocument | undefined>,
): Promise<StoredDocument> {
  try {
    return await waitForDocument(dependencies, location.partitionKey, location.clusterDocumentId, description, firstRead);
  } catch (error) {
    if (!isCosmosDocumentError(error) || error.statusCode !== 404 || isCosmosConfigurationError(error)) throw error;
    const serviceProviderCluster = readLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location));
    const subscription = readEvenSoftDeleted(dependencies, location.partitionKey, location.subscriptionDocumentId);
    // Only a proof changes the report: a read that fails here leaves the missing cluster document as the failure.
    const [spc, subscriptionDocument] = await Promise.all([serviceProviderCluster, subscription]).catch(() => [true, true]);
    throw spc === undefined && subscriptionDocument === undefined ? nothingOfTheSubscription(dependencies, location, "update") : error;
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

/** A document as stored, a soft-deleted one included: any trace of the subscription proves the container. */
async function readEvenSoftDeleted(dependencies: DocumentDependencies, partitionKey: string, id: string): Promise<StoredDocument | undefined> {
  try {
    return await dependencies.documentStore.readDocument(partitionKey, id);
  } catch (error) {
    throw new CosmosDocumentError({
      documentId: id,
      statusCode: cosmosStatusCode(error),
      message: `${describeCosmosError(error).replace(/[.\s]+$/, "")}; nothing was written. [reading the subscription's document ${id}]`,
      cause: error,
    });
  }
}
