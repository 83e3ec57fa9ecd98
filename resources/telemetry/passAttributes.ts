/** The span attributes an operator filters a run by (docs/operations.md, "Traces"): outcome, failure class and cause, half. */
import { failureCauseOf } from "../core/failureCause";
import { errorCodeLabel } from "../core/retrievalError";
import type { SpanAttributes } from "../logging/spans";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";

/** Attribute names, one place: the docs' table lists the same. */
export const attribute = {
  clusterResourceId: "aro_hcp.cluster.resource_id",
  resourceType: "pulumi.resource.type",
  project: "pulumi.project",
  providerMethod: "aro_hcp.provider.method",
  passKind: "aro_hcp.pass.kind",
  outcome: "aro_hcp.outcome",
  half: "aro_hcp.status.half",
  failureClass: "aro_hcp.failure.class",
  failureCause: "aro_hcp.failure.cause",
  failureHalf: "aro_hcp.failure.half",
  failureCodes: "aro_hcp.failure.codes",
  identitiesFailed: "aro_hcp.identities.failed",
  lookups: "aro_hcp.lookups",
  writeAttempts: "aro_hcp.write_attempts",
  dataPlaneWorkReason: "aro_hcp.data_plane.work_reason",
  msiWorkReason: "aro_hcp.msi.work_reason",
  skippedReason: "aro_hcp.skipped_reason",
  msiSkippedReason: "aro_hcp.msi.skipped_reason",
  presence: "aro_hcp.refresh.presence",
  drift: "aro_hcp.refresh.drift",
  retries: "aro_hcp.retries",
  throttled: "aro_hcp.throttled",
  throttleWaitMs: "aro_hcp.throttle_wait_ms",
  waitMs: "aro_hcp.wait_ms",
  documentId: "aro_hcp.document.id",
  documentKind: "aro_hcp.document.kind",
  identityId: "aro_hcp.identity.resource_id",
  statusCode: "http.response.status_code",
  retryAfterMs: "aro_hcp.retry_after_ms",
} as const;

export type PassOutcome = "written" | "current" | "kept" | "failed";

export type StatusHalf = "data plane" | "msi" | "both";

/** The half a failure belongs to by its class; a document, setting or credential failure is both. */
function halfOfFailure(errorName: string): StatusHalf {
  switch (errorName) {
    case "UserAssignedIdentityReadError":
    case "AzureAccessError":
      return "data plane";
    case "MsiIdentitiesError":
    case "DataPlaneError":
      return "msi";
    default:
      return "both";
  }
}

export function failureAttributes(error: unknown, clusterName?: string): SpanAttributes {
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  return { [attribute.failureClass]: name, [attribute.failureCause]: failureCauseOf(message, clusterName), [attribute.failureHalf]: halfOfFailure(name) };
}

function failureCodes(result: SyncResult): string | undefined {
  const codes = [...new Set(result.failures.map(({ error }) => errorCodeLabel(error)))];
  return codes.length === 0 ? undefined : codes.join(", ");
}

/** What a sync pass's result says: its work, its writes and its identities that failed. */
function syncResultAttributes(result: SyncResult): SpanAttributes {
  return {
    [attribute.lookups]: result.lookups,
    [attribute.writeAttempts]: result.writeAttempts,
    [attribute.identitiesFailed]: result.failures.length,
    [attribute.failureCodes]: failureCodes(result),
    [attribute.dataPlaneWorkReason]: result.workReason,
    [attribute.msiWorkReason]: result.msiWorkReason,
    [attribute.skippedReason]: result.skippedReason,
    [attribute.msiSkippedReason]: result.msiSkippedReason,
  };
}

/** A pass that returned: `written` when it wrote, `current` when nothing needed writing. */
export function passResultAttributes(result: SyncResult): SpanAttributes {
  return { [attribute.outcome]: result.wrote ? "written" : "current", ...syncResultAttributes(result) };
}

/** A pass that threw: `kept` with a result attached (answers persisted, failures beside kept IDs), else `failed`. */
export function passFailureAttributes(error: unknown, partial: SyncResult | undefined, clusterName?: string): SpanAttributes {
  return {
    [attribute.outcome]: partial === undefined ? "failed" : "kept",
    ...(partial === undefined ? {} : syncResultAttributes(partial)),
    ...failureAttributes(error, clusterName),
  };
}

/** A refresh: `current` (it writes nothing), with what it found. */
export function refreshResultAttributes(result: RefreshResult): SpanAttributes {
  return { [attribute.outcome]: "current", [attribute.presence]: result.presence, [attribute.drift]: result.drift.length, [attribute.lookups]: result.lookups };
}
