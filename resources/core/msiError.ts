import { clusterMessage, serviceProviderClusterDocumentLabel } from "./clusterMessage";
import { setCause } from "./errors";

/** Thrown when the MSI half got no complete answer (after the other half was written, when it had anything to write). */
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
    setCause(this, options.cause);
  }
}
MsiIdentitiesError.prototype.name = "MsiIdentitiesError";
