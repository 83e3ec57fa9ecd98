/** The shape every per-cluster error message shares, so the CLI wrapper can group them by cause. */
import { goToLower } from "./goStrings";
import { withoutFinalPeriod } from "./retrievalError";
import type { ParsedResourceId } from "./azureResourceId";

/** What marks the end of a message's cause: the summary groups failures by the text before it. */
export const clusterMarker = " Cluster ";

/** `<subscription>/<resourceGroup>/<name>`, lowercased as Go does: the name of the cluster's resource in the stack. */
export function clusterNameOf(cluster: ParsedResourceId): string {
  return goToLower(`${cluster.subscriptionId}/${cluster.resourceGroupName}/${cluster.name}`);
}

/** `<cause>. Cluster <name>: <outcome>. [<reference>]`, the cause's final period optional. */
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
  const cause = withoutFinalPeriod(`${parts.cause}${inline}`);
  const outcome = withoutFinalPeriod(parts.outcome);
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
