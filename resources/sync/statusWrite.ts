/**
 * The one write path of this hook: a patch of the owned subtree plus upstream's bookkeeping,
 * always with If-Match, re-read and recomputed on 412 up to `maxWriteAttempts` times. There is no
 * unconditional write and no whole-document replace.
 */
import { CosmosDocumentError, cosmosStatusCode, describeCosmosError } from "../core/errors";
import type { DocumentLocation } from "../core/documentLocation";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { readStoredStatus, statusPatchOperations } from "../core/serviceProviderClusterDocument";
import type { StoredDocument } from "../cosmos/documentStore";
import type { DocumentDependencies } from "./documentReads";
import { readLive } from "./documentReads";
import { log } from "../logging/logger";
import type { JsonObject } from "../core/json";
import type { ClaimChange } from "../core/statusClaim";
import { claimChanges, withClaim } from "../core/statusClaim";

/**
 * Writes the owned subtree with If-Match, re-reading and retrying on 412 up to
 * `maxWriteAttempts`. `decide` maps the stored subtree to the one to persist, or `undefined` when
 * nothing needs writing; it is called again on every re-read (`reread` true), so the decision is
 * made again against what the other writer left (core/statusDecision.ts), and its changes to the
 * rest of the document are kept. Fields of the subtree this hook does not know survive the patch
 * (statusPatchOperations). `claim` (core/statusClaim.ts): a create's claim is written with the
 * decided status, or alone over the stored one when nothing else changes; `drop` removes the claim
 * with a status that is written (a delete that clears).
 */
export async function writeStatus(
  dependencies: DocumentDependencies,
  location: DocumentLocation,
  initial: StoredDocument,
  decide: (stored: ReturnType<typeof readStoredStatus>, reread: boolean, document: JsonObject) => DataPlaneOperatorsManagedIdentities | undefined,
  claim?: ClaimChange,
): Promise<{ status: DataPlaneOperatorsManagedIdentities; wrote: boolean; writeAttempts: number }> {
  let current = initial;
  for (let attempt = 1; ; attempt += 1) {
    const storedStatus = readStoredStatus(current.document);
    const decided = decide(storedStatus, attempt > 1, current.document);
    // A claim alone goes over a stored status that reads whole; a malformed one waits for a pass that decides on it.
    const claimOnly = decided === undefined && claim !== undefined && claim !== "drop" && storedStatus.problems.length === 0;
    const desiredStatus = decided ?? (claimOnly && claimChanges(current.document, claim) ? storedStatus.status : undefined);
    if (desiredStatus === undefined) {
      return { status: storedStatus.status, wrote: false, writeAttempts: attempt - 1 };
    }
    const operations = statusPatchOperations(current.document, desiredStatus, current.etag);
    try {
      await dependencies.documentStore.patchDocument(
        location.partitionKey,
        location.documentId,
        claim === undefined ? operations : withClaim(operations, claim),
        current.etag,
      );
      log("info", "write", location.documentId, `status written (attempt ${attempt})`);
      return { status: desiredStatus, wrote: true, writeAttempts: attempt };
    } catch (error) {
      const statusCode = cosmosStatusCode(error);
      if (statusCode === 404) {
        // Deleted between our read and our write (Cosmos answers the patch with an empty 404 body).
        throw new CosmosDocumentError({
          documentId: location.documentId,
          statusCode,
          message: `failed to write ServiceProviderCluster document ${location.documentId}: NotFound (HTTP 404): the document was deleted while the status was being written; nothing was written`,
          cause: error,
        });
      }
      if (statusCode !== 412 || attempt >= dependencies.options.maxWriteAttempts) {
        const exhausted = statusCode === 412 ? ` after ${attempt} attempts (the document kept changing between read and write)` : "";
        throw new CosmosDocumentError({
          documentId: location.documentId,
          statusCode,
          message: `failed to write ServiceProviderCluster document ${location.documentId}${exhausted}: ${describeCosmosError(error)}`,
          cause: error,
        });
      }
      // Another writer changed the document: back off briefly, re-read and merge onto the new version.
      log("warning", "write", location.documentId, `HTTP 412 on attempt ${attempt}: another writer changed the document; re-reading`);
      await dependencies.sleep(Math.round((10 + dependencies.random() * 40) * attempt));
      const reread = await readLive(dependencies, location.partitionKey, location.documentId, `ServiceProviderCluster document ${location.documentId}`);
      if (reread === undefined) {
        throw new CosmosDocumentError({
          documentId: location.documentId,
          statusCode: 404,
          message: `ServiceProviderCluster document ${location.documentId} was deleted while the status was being written; nothing was written`,
        });
      }
      current = reread;
    }
  }
}
