/**
 * The cluster document is the authority on the desired set: a hook writing another set would undo
 * upstream's entries and be undone by them, so inputs naming another set fail the cluster first.
 */
import type { DesiredIdentity } from "./statusHalf";
import { clusterDocumentLabel, clusterMessage } from "./clusterMessage";
import { ClusterError } from "./errors";

/** Identities each list of the message names before it counts the rest. */
export const listedIdentities = 10;

/** Thrown by a pass whose inputs name another desired set than the cluster document. */
export class DesiredSetDisagreementError extends ClusterError {}
DesiredSetDisagreementError.prototype.name = "DesiredSetDisagreementError";

/** The error for inputs whose desired set differs from the cluster document's (a document without the map declares the empty set), or undefined. */
export function desiredSetDisagreement(
  inputs: readonly DesiredIdentity[],
  document: readonly DesiredIdentity[],
  clusterDocumentId: string,
  clusterName: string,
): DesiredSetDisagreementError | undefined {
  const documentKeys = new Set(document.map((identity) => identity.key));
  const inputKeys = new Set(inputs.map((identity) => identity.key));
  const onlyInputs = inputs.filter((identity) => !documentKeys.has(identity.key)).map((identity) => identity.resourceId);
  const onlyDocument = document.filter((identity) => !inputKeys.has(identity.key)).map((identity) => identity.resourceId);
  if (onlyInputs.length === 0 && onlyDocument.length === 0) return undefined;
  const list = (identities: readonly string[]): string =>
    identities.length === 0
      ? "none"
      : identities.length <= listedIdentities
        ? identities.join(", ")
        : `${identities.slice(0, listedIdentities).join(", ")} and ${identities.length - listedIdentities} more`;
  return new DesiredSetDisagreementError(
    clusterMessage({
      cause:
        "the dataPlaneOperators input names other identities than the cluster's HCPOpenShiftCluster document, the authority upstream's controller reads: " +
        "declare the document's set in dataPlaneOperators, or leave dataPlaneOperators out to follow the document",
      clusterName,
      outcome: "nothing was read from Azure or written",
      reference: clusterDocumentLabel(clusterDocumentId),
      details: [
        `The inputs name: ${list(inputs.map((identity) => identity.resourceId))}. The document names: ${list(document.map((identity) => identity.resourceId))}`,
        `only in the inputs: ${list(onlyInputs)}; only in the document: ${list(onlyDocument)}`,
      ],
    }),
    clusterDocumentId,
  );
}
