/** The one write path: a status patch, always with If-Match (never a whole-document replace), re-read and decided again on 412. */
import { CosmosDocumentError, cosmosStatusCode, describeCosmosError, nothingWrittenError } from "../core/errors";
import type { DocumentLocation } from "../core/documentLocation";
import { withoutFinalPeriod } from "../core/retrievalError";
import type { JsonObject } from "../core/json";
import type { StatusHalves } from "../core/serviceProviderClusterDocument";
import { identityStatusPatchOperations } from "../core/serviceProviderClusterDocument";
import type { StoredDocument } from "../cosmos/documentStore";
import type { DocumentDependencies } from "./documents";
import { rereadPassDocuments } from "./documents";
import { clusterDocumentLabel, clusterMessage, serviceProviderClusterDocumentLabel } from "../core/clusterMessage";
import { log } from "../logging/logger";

/** What a write left: the document it was last based on and the halves it wrote. */
export interface WriteOutcome {
  readonly document: JsonObject;
  readonly written: StatusHalves;
  readonly wrote: boolean;
  readonly writeAttempts: number;
}

/** The cluster document changed between the pass's read and a conflict on its write: the pass starts over. */
export class ClusterDocumentChangedError extends CosmosDocumentError {}

/** Writes the halves `decide` asks for, deciding again after each conflict; `clusterAsRead`: the re-read cluster document still asks the same. */
export async function writeStatus(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  initial: StoredDocument,
  decide: (document: JsonObject, reread: boolean) => StatusHalves | undefined,
  clusterAsRead: (clusterDocument: JsonObject | undefined) => boolean,
): Promise<WriteOutcome> {
  let current = initial;
  for (let attempt = 1; ; attempt += 1) {
    const halves = decide(current.document, attempt > 1) ?? {};
    if (halves.dataPlane === undefined && halves.msi === undefined) {
      return { document: current.document, written: {}, wrote: false, writeAttempts: attempt - 1 };
    }
    const operations = identityStatusPatchOperations(current.document, halves, current.etag);
    try {
      await dependencies.documentStore.patchDocument(location.partitionKey, location.documentId, operations, current.etag);
      log("info", "write", location.documentId, `status written (attempt ${attempt})`);
      return { document: current.document, written: halves, wrote: true, writeAttempts: attempt };
    } catch (error) {
      const statusCode = cosmosStatusCode(error);
      if (statusCode === 404) {
        // Deleted between our read and our write (Cosmos answers the patch with an empty 404 body).
        throw writeFailure(location, "the ServiceProviderCluster document was deleted while the status was being written (NotFound, HTTP 404)", 404, error);
      }
      if (statusCode !== 412 || attempt >= dependencies.options.maxWriteAttempts) {
        const exhausted = statusCode === 412 ? ` after ${attempt} attempts (the document kept changing between read and write)` : "";
        const cause = `${withoutFinalPeriod(describeCosmosError(error))}${exhausted}, writing the ServiceProviderCluster document`;
        throw writeFailure(location, cause, statusCode, error);
      }
      // Another writer changed the document: back off briefly, re-read and merge onto the new version.
      log("warning", "write", location.documentId, `HTTP 412 on attempt ${attempt}: another writer changed the document; re-reading`);
      await dependencies.sleep(Math.round((10 + dependencies.random() * 40) * attempt));
      const [reread, clusterDocument] = await rereadPassDocuments(dependencies, location);
      if (!clusterAsRead(clusterDocument?.document)) {
        throw new ClusterDocumentChangedError({
          documentId: location.clusterDocumentId,
          statusCode: 412,
          message: clusterMessage({
            cause: "the cluster's HCPOpenShiftCluster document changed while the status was being written",
            clusterName: location.clusterName,
            outcome: "nothing was written",
            reference: clusterDocumentLabel(location.clusterDocumentId),
          }),
        });
      }
      if (reread === undefined) throw writeFailure(location, "the ServiceProviderCluster document was deleted while the status was being written", 404);
      current = reread;
    }
  }
}

function writeFailure(location: DocumentLocation, cause: string, statusCode: number | undefined, error?: unknown): CosmosDocumentError {
  const reference = serviceProviderClusterDocumentLabel(location.documentId);
  return nothingWrittenError(location.documentId, { cause, clusterName: location.clusterName, reference }, { statusCode, cause: error });
}
