/**
 * The shape every per-cluster error message shares: what is wrong and which setting or field fixes
 * it, then `Cluster <name>: <what was written>.`, then the document ID once. The cluster is named
 * as its resource is in the stack, so a message reads the same in the engine's output, in a log
 * and in the summary the CLI wrapper groups by cause (cli/failureSummary.ts). Pure.
 */
import { goToLower } from "./goStrings";
import type { ParsedResourceId } from "./azureResourceId";

/** What marks the end of a message's cause: the summary groups failures by the text before it. */
export const clusterMarker = " Cluster ";

/** `<subscription>/<resourceGroup>/<name>`, lowercased as Go does: the name of the cluster's resource in the stack. */
export function clusterNameOf(cluster: ParsedResourceId): string {
  return goToLower(`${cluster.subscriptionId}/${cluster.resourceGroupName}/${cluster.name}`);
}

/**
 * `<cause>. Cluster <name>: <outcome>. [<document>]`: the cause (its final period optional), the
 * cluster and what was written, and its full reference (a document ID, an ARM ID), once at the end.
 */
export function clusterMessage(parts: {
  readonly cause: string;
  readonly clusterName?: string;
  readonly outcome: string;
  readonly reference?: string;
  /** Lines listed below the message (the problems of a document, the identities that failed). */
  readonly details?: readonly string[];
}): string {
  // One detail reads best inside the cause; several are listed below the message.
  const inline = parts.details?.length === 1 ? `: ${parts.details[0]}` : "";
  const cause = `${parts.cause}${inline}`.replace(/[.\s]+$/, "");
  const outcome = parts.outcome.replace(/[.\s]+$/, "");
  const body = parts.clusterName === undefined ? `${cause}; ${outcome}.` : `${cause}.${clusterMarker}${parts.clusterName}: ${outcome}.`;
  const details = parts.details === undefined || parts.details.length < 2 ? "" : `\n  - ${parts.details.join("\n  - ")}`;
  return `${parts.reference === undefined ? body : `${body} [${parts.reference}]`}${details}`;
}

export function serviceProviderClusterDocumentLabel(documentId: string): string {
  return `ServiceProviderCluster document ${documentId}`;
}

export function clusterDocumentLabel(documentId: string): string {
  return `HCPOpenShiftCluster document ${documentId}`;
}

/** Said when a pass ends before any write. */
export const nothingWritten = "nothing was written (stored clientId/principalId values are unchanged)";

/** A data plane operators' failure whose pass wrote the MSI half: its "nothing was written" says which half was not. */
export function withMsiWritten(message: string): string {
  return message.includes(nothingWritten)
    ? message.replace(
        nothingWritten,
        "nothing of status.dataPlaneOperatorsManagedIdentities was written (its stored clientId/principalId values are unchanged); status.msiManagedIdentities was written",
      )
    : `${message} (status.msiManagedIdentities was written)`;
}
