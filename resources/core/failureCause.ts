/**
 * The cause of a per-cluster failure message, the same for every cluster that failed the same way:
 * the text before the cluster's name (core/clusterMessage.ts), with ARM IDs and GUIDs taken out.
 * The CLI's summary groups failures by it (cli/failureSummary.ts) and each failed pass's span
 * carries it (telemetry/passAttributes.ts), so both name a cause alike. Pure.
 */
import { clusterMarker } from "./clusterMessage";

const armId = /\/subscriptions\/[^\s,;)\]'"]+/gi;
const uuid = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/** The cause of the first line of `message`; `clusterName` (the resource's name), when given, reads `<cluster>`. */
export function failureCauseOf(message: string, clusterName?: string): string {
  const firstLine = message.trim().split("\n")[0] ?? "";
  const marker = firstLine.indexOf(clusterMarker);
  const cause = marker === -1 ? firstLine : firstLine.slice(0, marker);
  return (clusterName === undefined || clusterName === "" ? cause : cause.split(clusterName).join("<cluster>"))
    .replace(armId, "<id>")
    .replace(uuid, "<id>")
    .replace(/\s+/g, " ")
    .replace(/[\s.;:]+$/, "")
    .trim();
}
