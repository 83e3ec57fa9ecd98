/**
 * The cause of a per-cluster failure message, the same for every cluster that failed the same way:
 * the text before the cluster's name (core/clusterMessage.ts), with what differs per cluster or per
 * answer taken out (ARM IDs, GUIDs other than a tenant's, Entra's trace and correlation IDs and
 * timestamps). The CLI's summary and run report group failures by it (cli/failureSummary.ts) and
 * each failed pass's span carries it (telemetry/passAttributes.ts), so all name a cause alike. Pure.
 */
import { clusterMarker } from "./clusterMessage";

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
