/**
 * The run report (cli/runReport.ts) from the provider's records (resources/report/runRecord.ts):
 * what each half of each cluster came to over a refresh and an update, failures grouped by cause.
 */
import { describe, expect, it } from "vitest";
import { buildRunReport, formatRunReport, parseRunRecords } from "../../resources/report/runReport";
import { causeOf } from "../../resources/core/clusterMessage";
import type { RunRecord } from "../../resources/report/runRecordFormat";
import { recordOfFailedPass, recordOfPass, recordOfRefresh } from "../../resources/report/runRecord";
import { AzureAccessError } from "../../resources/core/errors";
import { UserAssignedIdentityReadError } from "../../resources/core/errors";
import type { SyncResult } from "../../resources/sync/syncManagedIdentityStatus";

const tenant = "4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7a9b11";
const cluster = (index: number): string => `1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/rg-${index}/cluster-${index}`;
const clusterId = (index: number): string =>
  `/subscriptions/1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/resourceGroups/rg-${index}/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-${index}`;
const identity = (index: number, operation: RunRecord["operation"]): Pick<RunRecord, "cluster" | "clusterResourceId" | "operation" | "at"> => ({
  cluster: cluster(index),
  clusterResourceId: clusterId(index),
  operation,
  at: "2026-12-05T03:00:00.000Z",
});

/** A refusal as Entra ID words it, with the trace, correlation ID and timestamp of each answer. */
function refusedCredential(index: number, trace: string, time: string): AzureAccessError {
  return new AzureAccessError({
    documentId: `00000000-0000-5000-8000-00000000000${index}`,
    clusterName: cluster(index),
    error: {
      code: "invalid_client",
      statusCode: 401,
      message: `AADSTS7000215: Invalid client secret provided (in tenant ${tenant}). Trace ID: ${trace} Correlation ID: ${trace} Timestamp: ${time}`,
    },
    credential: "the cluster's service managed identity",
  });
}

const passResult = (overrides: Partial<SyncResult>): SyncResult => ({
  documentId: "d",
  partitionKey: "p",
  serviceProviderClusterResourceId: "s",
  desiredSource: "clusterDocument",
  serviceManagedIdentity: undefined,
  status: {},
  skippedReason: undefined,
  workReason: undefined,
  wrote: false,
  writeAttempts: 0,
  lookups: 0,
  failures: [],
  msiStatus: {},
  msiSkippedReason: undefined,
  msiWorkReason: undefined,
  ...overrides,
});

describe("the cause of a failure", () => {
  it("leaves Entra ID's trace, correlation ID and timestamp out, and keeps the tenant", () => {
    const first = causeOf({ resource: cluster(1), message: refusedCredential(1, "11111111-1111-4111-8111-111111111111", "2026-12-05 02:47:17.123Z").message });
    const second = causeOf({ resource: cluster(2), message: refusedCredential(2, "22222222-2222-4222-8222-222222222222", "2026-12-05 02:48:01.9Z").message });
    expect(first).toBe(second);
    expect(first).toContain(`tenant ${tenant}`);
    expect(first).not.toMatch(/Trace ID|Timestamp|2026-12-05| - -/);
    // MSAL's own wording of the same refusal, its list separators left single.
    const msal = (trace: string, time: string): string =>
      `invalid_client: Error(s): 90033 - Timestamp: ${time} - Description: AADSTS90033: Revoked. Trace ID: ${trace} Correlation ID: ${trace} Timestamp: ${time} - Correlation ID: ${trace} - Trace ID: ${trace} (in tenant ${tenant}). Cluster ${cluster(1)}: nothing was written.`;
    expect(causeOf({ resource: cluster(1), message: msal("11111111-1111-4111-8111-111111111111", "2026-12-05 02:52:44.236Z") })).toBe(
      `invalid_client: Error(s): 90033 - Description: AADSTS90033: Revoked. - (in tenant ${tenant})`,
    );
  });

  it("reads the message inside the engine's error list, not its count", () => {
    const message = refusedCredential(1, "11111111-1111-4111-8111-111111111111", "2026-12-05 02:47:17Z").message;
    expect(causeOf({ resource: cluster(1), message: `1 error occurred:\n\t* ${message}` })).toBe(causeOf({ resource: cluster(1), message }));
  });
});

describe("the run report", () => {
  it("says failed for a cluster whose refresh failed, though the update's diff found nothing to do, and groups one tenant's clusters under one cause", () => {
    const records: RunRecord[] = [
      recordOfFailedPass(identity(1, "read"), refusedCredential(1, "11111111-1111-4111-8111-111111111111", "2026-12-05 02:47:17Z")),
      recordOfFailedPass(identity(2, "read"), refusedCredential(2, "22222222-2222-4222-8222-222222222222", "2026-12-05 02:47:18Z")),
      recordOfRefresh(identity(3, "read"), { presence: "present", drift: ["data plane identity x: clientId changed"] }),
      { ...identity(1, "diff"), dataPlane: "current", msi: "current" },
      { ...identity(2, "diff"), dataPlane: "current", msi: "current" },
      recordOfPass(identity(3, "update"), passResult({ workReason: "forced", wrote: true, halvesWritten: { dataPlane: true, msi: false } }), {
        dataPlane: true,
        msi: false,
      }),
    ];
    const report = buildRunReport(parseRunRecords(records.map((record) => JSON.stringify(record)).join("\n") + "\n{cut"));
    expect(report.verdict).toBe("failed");
    expect(report.clusters[cluster(1)]).toMatchObject({ outcome: "failed", dataPlane: { outcome: "failed", operation: "read" }, msi: { outcome: "failed" } });
    expect(report.clusters[cluster(3)]).toMatchObject({ outcome: "driftCorrected", dataPlane: { outcome: "driftCorrected" }, msi: { outcome: "current" } });
    expect(report.causes).toHaveLength(1);
    expect(report.causes[0]).toMatchObject({ count: 2, resources: [cluster(1), cluster(2)] });
    expect(report.causes[0].cause).toContain(`tenant ${tenant}`);
    expect(report.counts).toEqual({ clusters: 3, failed: 2, driftCorrected: 1 });
    const text = formatRunReport(report);
    expect(text.split("\n").filter((line) => line.includes("AADSTS7000215"))).toHaveLength(1);
    expect(text).toMatch(/^Run report: FAILED \(2 clusters\); 3 clusters: 2 failed, 1 drift corrected/);
  });

  it("says so when an update answers after a failed refresh, and when nothing was recorded", () => {
    const report = buildRunReport([
      recordOfFailedPass(identity(1, "read"), refusedCredential(1, "11111111-1111-4111-8111-111111111111", "2026-12-05 02:47:17Z")),
      recordOfPass(identity(1, "update"), passResult({ workReason: "forced", msiWorkReason: "forced" })),
    ]);
    expect(report).toMatchObject({ verdict: "ok", causes: [], clusters: { [cluster(1)]: { outcome: "current" } } });
    expect(buildRunReport([]).verdict).toBe("noRecords");
  });

  it("records identities that failed beside the IDs kept as kept after a failure, and the other half as the pass wrote it", () => {
    const resourceId = "/subscriptions/1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/resourceGroups/rg-1/providers/Microsoft.ManagedIdentity/userAssignedIdentities/op";
    const failure = { resourceId, error: { code: "TooManyRequests", statusCode: 429, message: "throttled" } };
    const result = passResult({
      workReason: "recheckDue",
      msiWorkReason: "recheckDue",
      wrote: true,
      halvesWritten: { dataPlane: true, msi: true },
      failures: [failure],
      status: { identities: { [resourceId.toLowerCase()]: { resourceID: resourceId, clientId: "c", principalId: "p", retrievalError: "TooManyRequests" } } },
    });
    const error = Object.assign(new UserAssignedIdentityReadError({ documentId: "d", clusterName: cluster(1), failures: [failure], persisted: true }), {
      result,
    });
    expect(recordOfFailedPass(identity(1, "update"), error)).toMatchObject({ dataPlane: "keptAfterFailure", msi: "written" });
    expect(recordOfFailedPass(identity(1, "update"), new Error("boom"))).toMatchObject({ dataPlane: "failed", msi: "failed", message: "boom" });
  });

  it("records a failure of the data plane operators' credential against that half, and the MSI half as the pass wrote it", () => {
    const result = passResult({ workReason: "recheckDue", msiWorkReason: "recheckDue", wrote: true, halvesWritten: { dataPlane: false, msi: true } });
    const error = Object.assign(refusedCredential(1, "11111111-1111-4111-8111-111111111111", "2026-12-05 02:47:17Z"), { result });
    expect(recordOfFailedPass(identity(1, "update"), error)).toMatchObject({ dataPlane: "failed", msi: "written" });
    // Both halves' errors joined in one message: both failed, whatever the first one's class.
    const joined = Object.assign(refusedCredential(2, "22222222-2222-4222-8222-222222222222", "2026-12-05 02:47:18Z"), { result });
    joined.message += "\nand: the Managed Identities data plane refused";
    expect(recordOfFailedPass(identity(2, "update"), joined)).toMatchObject({ dataPlane: "failed", msi: "failed" });
  });
});
