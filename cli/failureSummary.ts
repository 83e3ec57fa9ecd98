/**
 * The summary `npm run pulumi` and `npm start` print after a run in which resources failed: the
 * failures grouped by cause, each with its count, the first few clusters and the fix.
 *
 * The engine reports each failed resource on its own, as an error diagnostic under that resource,
 * and that message is the whole report through the literal `pulumi` CLI (it starts with the cause
 * and names the setting that fixes it, core/clusterMessage.ts). By default the engine stops
 * scheduling new steps after the first failure, so a plain `up` shows one or a few; with
 * `--continue-on-error` every cluster runs and one cause can fail hundreds of them. The engine
 * has no place for a grouping of its own, so the wrapper builds one from the engine's events
 * (Automation API `onEvent`).
 */
import type { EngineEvent } from "@pulumi/pulumi/automation";
import type { ResourceFailure } from "../resources/core/clusterMessage";
import { groupFailures } from "../resources/core/clusterMessage";

/** The printed summary, or undefined when no resource failed. */
export function formatFailureSummary(failures: readonly ResourceFailure[], shown = 3): string | undefined {
  const groups = groupFailures(failures);
  if (groups.length === 0) return undefined;
  const clusters = groups.reduce((sum, group) => sum + group.count, 0);
  const lines = [`${clusters} cluster${clusters === 1 ? "" : "s"} failed, by cause (each cluster's own message is above):`];
  for (const group of groups) {
    const rest = group.count - Math.min(shown, group.count);
    lines.push(`  ${group.count} × ${group.cause}`);
    lines.push(`      ${group.resources.slice(0, shown).join(", ")}${rest > 0 ? `, and ${rest} more` : ""}`);
  }
  return lines.join("\n");
}

/** Collects the failed resources of a run from the engine's events: the first error diagnostic of each resource. */
export function failureCollector(): { readonly onEvent: (event: EngineEvent) => void; readonly failures: ResourceFailure[] } {
  const failures: ResourceFailure[] = [];
  const seen = new Set<string>();
  return {
    failures,
    onEvent(event) {
      const diagnostic = event.diagnosticEvent;
      // The stack's own errors ("update failed") are not a cluster's.
      if (diagnostic?.severity !== "error" || diagnostic.urn === undefined || diagnostic.urn.includes("::pulumi:pulumi:Stack::") || seen.has(diagnostic.urn))
        return;
      seen.add(diagnostic.urn);
      failures.push({ resource: diagnostic.urn.split("::").pop() ?? diagnostic.urn, message: diagnostic.message });
    },
  };
}
