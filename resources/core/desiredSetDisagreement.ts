/**
 * Two declarations of one desired set: the provider's inputs (`dataPlaneOperators`) and the
 * cluster's HCPOpenShiftCluster document. This hook records the inputs' set, upstream's controller
 * the document's, so when they differ each undoes the other's entries; the disagreement is made
 * visible (a warning and a `drift` line) instead of churning in silence. Pure.
 */
import type { DesiredIdentity } from "./identityStatus";

/**
 * Names the identities only the inputs or only the cluster document declare, or undefined when
 * both declare the same set (compared by key, as upstream's gate compares).
 */
export function disagreementOf(inputs: readonly DesiredIdentity[], clusterDocument: readonly DesiredIdentity[]): string | undefined {
  const documentKeys = new Set(clusterDocument.map((identity) => identity.key));
  const inputKeys = new Set(inputs.map((identity) => identity.key));
  const onlyInputs = inputs.filter((identity) => !documentKeys.has(identity.key)).map((identity) => identity.resourceId);
  const onlyDocument = clusterDocument.filter((identity) => !inputKeys.has(identity.key)).map((identity) => identity.resourceId);
  if (onlyInputs.length === 0 && onlyDocument.length === 0) {
    return undefined;
  }
  const list = (ids: readonly string[]): string => (ids.length === 0 ? "none" : ids.join(", "));
  return (
    `${desiredSetDisagreementPrefix} the inputs' dataPlaneOperators and the HCPOpenShiftCluster document declare different identities ` +
    `(only in the inputs: ${list(onlyInputs)}; only in the document: ${list(onlyDocument)}). This hook records the inputs' set and upstream's ` +
    "controller the document's, so each undoes the other's entries: declare the same set, or leave dataPlaneOperators out to follow the document"
  );
}

/** How a desired-set disagreement starts, in logs and in the `drift` output. */
export const desiredSetDisagreementPrefix = "desired set:";

/**
 * The drift lines an update can fix: every line but a desired-set disagreement, which only the
 * user can settle (an update forced by it would only undo upstream's entries again).
 */
export function fixableDrift(drift: readonly string[]): string[] {
  return drift.filter((line) => !isDesiredSetDisagreement(line));
}

/** True for the drift line of a desired-set disagreement ({@link disagreementOf}). */
export function isDesiredSetDisagreement(line: string): boolean {
  return line.startsWith(desiredSetDisagreementPrefix);
}
