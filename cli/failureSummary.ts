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
import { failureCauseOf } from "../resources/core/failureCause";

/** One failed resource: its name in the stack (the cluster) and the engine's message for it. */
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

/** The cause of a failure message, the same for every cluster that failed the same way (as the spans name it: core/failureCause.ts). */
export function causeOf(failure: ResourceFailure): string {
  // The engine may put the failed step before the provider's message ("Preview failed: ").
  // The engine wraps an update's error as a list ("1 error occurred:" then "\t* <message>"): the message is the cause.
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
