/**
 * Why the MSI half of a pass (core/msiDecision.ts, sync/azureAnswers.ts) wrote nothing. Pure, no SDK imports.
 */
import { clusterMessage, serviceProviderClusterDocumentLabel } from "./clusterMessage";

/**
 * Thrown (after the other half was written, when it had anything to write) when the MSI half got
 * no complete answer: its stored clientId and principalId values are unchanged. The message starts
 * with the cause.
 */
export class MsiIdentitiesError extends Error {
  readonly documentId: string | undefined;

  constructor(options: {
    readonly reason: string;
    readonly documentId?: string;
    readonly clusterName?: string;
    readonly details?: readonly string[];
    readonly cause?: unknown;
  }) {
    super(
      clusterMessage({
        cause: options.reason,
        ...(options.clusterName === undefined ? {} : { clusterName: options.clusterName }),
        outcome: "nothing of status.msiManagedIdentities was written (stored clientId/principalId values are unchanged)",
        ...(options.documentId === undefined ? {} : { reference: serviceProviderClusterDocumentLabel(options.documentId) }),
        ...(options.details === undefined ? {} : { details: options.details }),
      }),
    );
    this.documentId = options.documentId;
    if (options.cause !== undefined) Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true, enumerable: false });
  }
}
MsiIdentitiesError.prototype.name = "MsiIdentitiesError";
