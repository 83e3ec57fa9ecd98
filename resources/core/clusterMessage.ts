/**
 * The shape every per-cluster error message shares, and the cause read back from it: the text before
 * the cluster's name, with what differs per cluster or per answer taken out, by which the CLI's
 * summary, the run report and the failed pass's span group and name failures. Pure.
 */
import { goToLower } from "./goStrings";
import { withoutFinalPeriod } from "./retrievalError";
import type { ParsedResourceId } from "./azureResourceId";

/** What marks the end of a message's cause. */
const clusterMarker = " Cluster ";

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

const armId = /\/subscriptions\/[^\s,;)\]'"]+/gi;
const uuid = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
// Entra ID's refusals end with a trace and correlation ID and a timestamp, new on every answer.
const entraTrace = /\s*(?:Trace ID|Correlation ID|Timestamp):\s*(?:[0-9a-f-]{36}|\d{4}-\d{2}-\d{2}[ T][\d:.]+Z?)/gi;
const timestamp = /\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?/g;

/** The cause of the first line of `message`; `clusterName` (the resource's name), when given, reads `<cluster>`. */
export function failureCauseOf(message: string, clusterName?: string): string {
  const firstLine = message.trim().split("\n")[0] ?? "";
  const marker = firstLine.indexOf(clusterMarker);
  const cause = marker === -1 ? firstLine : firstLine.slice(0, marker);
  return (
    (clusterName === undefined || clusterName === "" ? cause : cause.split(clusterName).join("<cluster>"))
      .replace(armId, "<id>")
      .replace(entraTrace, "")
      // MSAL's list separators left empty by the parts taken out.
      .replace(/(?:\s+-)+(?=\s)/g, " -")
      .replace(timestamp, "<time>")
      // A tenant is the cause of a refusal, the same for every cluster of that tenant: its ID stays.
      .replace(uuid, (id: string, offset: number, text: string) => (/\btenant $/i.test(text.slice(Math.max(0, offset - 7), offset)) ? id : "<id>"))
      .replace(/\s+/g, " ")
      .replace(/[\s.;:]+$/, "")
      .trim()
  );
}

/** One failed resource: its name in the stack (the cluster) and the engine's or the provider's message for it. */
export interface ResourceFailure {
  readonly resource: string;
  readonly message: string;
}

/** Failures that share a cause. */
export interface FailureGroup {
  /** The cause and its fix, with the cluster-specific parts (names, IDs) taken out. */
  readonly cause: string;
  readonly count: number;
  /** The clusters, in the order their failures arrived. */
  readonly resources: readonly string[];
}

// Terminal colours, which the engine adds with `color: "always"` or "auto" on a terminal.
// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m|<\{%[^%]*%\}>/g;

/** The cause of a failure as the engine or the provider host reports it: the same for every cluster that failed the same way. */
export function causeOf(failure: ResourceFailure): string {
  // The engine may put the failed step before the provider's message ("Preview failed: "), and wraps
  // an update's error as a list ("1 error occurred:" then "\t* <message>"): the message is the cause.
  const text = failure.message
    .replace(ansi, "")
    .trim()
    .replace(/^\d+ errors? occurred:\s*\*?\s*/, "");
  const firstLine = (text.split("\n")[0] ?? "").replace(/^[A-Za-z ]{0,30}failed: /, "");
  return failureCauseOf(firstLine, failure.resource);
}

/** Groups failures by cause, the most frequent first. */
export function groupFailures(failures: readonly ResourceFailure[]): FailureGroup[] {
  const groups = new Map<string, string[]>();
  for (const failure of failures) {
    const cause = causeOf(failure);
    const resources = groups.get(cause) ?? [];
    if (!resources.includes(failure.resource)) resources.push(failure.resource);
    groups.set(cause, resources);
  }
  return [...groups]
    .map(([cause, resources]) => ({ cause, count: resources.length, resources }))
    .sort((left, right) => right.count - left.count || left.cause.localeCompare(right.cause));
}

/** A flag per half of the status: the halves a pass wrote, was forced in, or a failure is about. */
export type Halves = Readonly<Record<"dataPlane" | "msi", boolean>>;

/** An error's message, or the text of a thrown value that is not an Error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What joins the two halves' errors when both failed in one pass (core/passDecision.ts reportPass). */
export const bothHalvesFailed = "\nand: ";

/**
 * The halves a failed pass's error is about, by its class; both when the halves' errors are joined or
 * the pass failed as a whole (a document, a setting, the process's credential). The run records, the
 * stack output's `failure` and the pass's span all take it from here.
 */
export function halvesOfFailure(error: unknown): Halves {
  const name = error instanceof Error ? error.name : "";
  if (messageOf(error).includes(bothHalvesFailed)) return { dataPlane: true, msi: true };
  if (name === "UserAssignedIdentityReadError" || name === "AzureAccessError") return { dataPlane: true, msi: false };
  if (name === "MsiIdentitiesError" || name === "DataPlaneError") return { dataPlane: false, msi: true };
  return { dataPlane: true, msi: true };
}
