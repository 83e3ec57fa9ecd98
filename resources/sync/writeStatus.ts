/**
 * The pass's one write and what follows it: a status patch with If-Match, read back after a conflict
 * (HTTP 412) or after no answer, the halves decided again against the document as it is then.
 */
import type { LiveClusterDesiredSet } from "../core/clusterDocument";
import { clusterDocumentLabel, clusterMessage, serviceProviderClusterDocumentLabel } from "../core/clusterMessage";
import type { DocumentLocation } from "../core/documentLocation";
import { CosmosDocumentError, nothingWrittenError } from "../core/errors";
import { cosmosStatusCode, describeCosmosError, isUnansweredCosmosRequest } from "../core/errorClassification";
import type { JsonObject } from "../core/json";
import { msiHalf } from "../core/msiManagedIdentities";
import type { PassDecisions } from "../core/passDecision";
import { decideHalves } from "../core/passDecision";
import { withoutFinalPeriod } from "../core/retrievalError";
import type { StatusHalves } from "../core/serviceProviderClusterDocument";
import { dataPlaneHalf, identityStatusPatchOperations } from "../core/serviceProviderClusterDocument";
import type { StoredDocument } from "../cosmos/documentStore";
import { log } from "../logging/logger";
import { readClusterDesiredSet, readServiceProviderCluster } from "./documents";
import type { SyncDependencies } from "./syncDependencies";
import { msiOverwriteGuard } from "./syncDependencies";

/** The cluster document changed between the pass's read and a conflict on its write: the pass starts over. */
export class ClusterDocumentChangedError extends CosmosDocumentError {}

/**
 * The one write: a status patch, always with If-Match (never a whole-document replace), of the halves
 * decided against the document; on 412 both documents are read again and, while the cluster document
 * still says what the pass read (`fromCluster`), the halves decided again. A write that got no answer
 * (the connection reset under it) is read back the same way: the document then holds the halves sent
 * (it landed) or not (decided again against what is there, so nothing is written twice or over
 * another writer).
 */
export async function writeStatus(
  dependencies: SyncDependencies,
  location: DocumentLocation,
  initial: StoredDocument,
  decisions: PassDecisions,
  fromCluster: LiveClusterDesiredSet,
): Promise<{ readonly document: JsonObject; readonly halves: StatusHalves; readonly wrote: boolean; readonly writeAttempts: number }> {
  let current = initial;
  for (let attempt = 1; ; attempt += 1) {
    const halves = decideHalves(decisions, current.document, attempt > 1, {
      now: dependencies.now(),
      random: dependencies.random,
      idsOnLookupFailure: dependencies.options.idsOnLookupFailure,
      guard: msiOverwriteGuard(dependencies),
    });
    if (halves.dataPlane === undefined && halves.msi === undefined) return { document: current.document, halves: {}, wrote: false, writeAttempts: attempt - 1 };
    const operations = identityStatusPatchOperations(current.document, halves, current.etag);
    try {
      await dependencies.documentStore.patchDocument(location.partitionKey, location.documentId, operations, current.etag);
      log("info", "write", location.documentId, `status written (attempt ${attempt})`);
      return { document: current.document, halves, wrote: true, writeAttempts: attempt };
    } catch (error) {
      const statusCode = cosmosStatusCode(error);
      const unanswered = isUnansweredCosmosRequest(error);
      if ((statusCode !== 412 && !unanswered) || attempt >= dependencies.options.maxWriteAttempts) {
        if (unanswered) throw unansweredWriteFailure(location, `${withoutFinalPeriod(describeCosmosError(error))} after ${attempt} attempts`, error);
        const exhausted = statusCode === 412 ? ` after ${attempt} attempts (the document kept changing between read and write)` : "";
        // A 404: deleted between our read and our write (Cosmos answers the patch with an empty 404 body).
        const cause =
          statusCode === 404
            ? "the ServiceProviderCluster document was deleted while the status was being written (NotFound, HTTP 404)"
            : `${withoutFinalPeriod(describeCosmosError(error))}${exhausted}, writing the ServiceProviderCluster document`;
        throw writeFailure(location, cause, statusCode, error);
      }
      // Another writer changed the document, or the write got no answer: back off briefly, re-read and decide again.
      log(
        "warning",
        "write",
        location.documentId,
        unanswered
          ? `no answer to the write on attempt ${attempt} (${withoutFinalPeriod(describeCosmosError(error))}); reading the document back`
          : `HTTP 412 on attempt ${attempt}: another writer changed the document; re-reading`,
      );
      await dependencies.sleep(Math.round((10 + dependencies.random() * 40) * attempt));
      const [reread, nowFromCluster] = await Promise.all([
        readServiceProviderCluster(dependencies, location),
        readClusterDesiredSet(dependencies, location),
      ]).catch((readError: unknown) => {
        // Read back after no answer, a failed read leaves the write's fate unknown: the message says so.
        if (unanswered) throw unansweredWriteFailure(location, withoutFinalPeriod(describeCosmosError(error)), readError);
        throw readError;
      });
      if (nowFromCluster === undefined || JSON.stringify(nowFromCluster) !== JSON.stringify(fromCluster)) {
        throw new ClusterDocumentChangedError({
          documentId: location.clusterDocumentId,
          statusCode: 412,
          message: clusterMessage({
            cause: "the cluster's HCPOpenShiftCluster document changed while the status was being written",
            clusterName: location.clusterName,
            // After a write with no answer, what it did is not known; the pass starting over decides again either way.
            outcome: unanswered ? "the write before the change got no answer and may have landed" : "nothing was written",
            reference: clusterDocumentLabel(location.clusterDocumentId),
          }),
        });
      }
      if (reread === undefined) throw writeFailure(location, "the ServiceProviderCluster document was deleted while the status was being written", 404);
      if (unanswered && holdsHalves(reread.document, halves)) {
        log("info", "write", location.documentId, `status written (attempt ${attempt}; read back after no answer)`);
        return { document: current.document, halves, wrote: true, writeAttempts: attempt };
      }
      current = reread;
    }
  }
}

/** Whether a document holds each half as `halves` has it: a write that got no answer landed. */
function holdsHalves(document: JsonObject, halves: StatusHalves): boolean {
  const holds = <Status extends object>(
    half: { read(document: JsonObject): { readonly status: Status }; equals(left: Status, right: Status): boolean },
    sent: Status | undefined,
  ) => sent === undefined || half.equals(sent, half.read(document).status);
  return holds(dataPlaneHalf, halves.dataPlane) && holds(msiHalf, halves.msi);
}

/** A write with no answer whose fate the pass could not learn: it may have landed, and the next pass reads it back. */
function unansweredWriteFailure(location: DocumentLocation, cause: string, error: unknown): CosmosDocumentError {
  return new CosmosDocumentError({
    documentId: location.documentId,
    cause: error,
    message: clusterMessage({
      cause: `${cause}, writing the ServiceProviderCluster document`,
      clusterName: location.clusterName,
      outcome: "the write got no answer and may have landed; the next pass reads the document back and writes only what it still lacks",
      reference: serviceProviderClusterDocumentLabel(location.documentId),
    }),
  });
}

function writeFailure(location: DocumentLocation, cause: string, statusCode: number | undefined, error?: unknown): CosmosDocumentError {
  const reference = serviceProviderClusterDocumentLabel(location.documentId);
  return nothingWrittenError(location.documentId, { cause, clusterName: location.clusterName, reference }, { statusCode, cause: error });
}
