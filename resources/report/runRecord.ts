/**
 * What one provider operation did to one cluster, per half, as the run report (runReport.ts) reads
 * it: each create, update, refresh (read), diff, preview of a cluster new to the stack and check
 * refused for the settings appends one JSON line to the file `ARO_HCP_RUN_RECORDS` names, if any.
 * The provider host is the one process that sees every operation, with its whole message.
 */
import { appendFileSync } from "node:fs";
import type { HalfOutcome, RunRecord } from "./runRecordFormat";
import { clusterNameOfId, runIdentityVariables, runRecordsVariable } from "./runRecordFormat";
import type { ParsedResourceId } from "../core/azureResourceId";
import type { Halves } from "../core/clusterMessage";
import { halvesOfFailure, messageOf } from "../core/clusterMessage";
import { locate } from "../core/documentLocation";
import { goToLower } from "../core/goStrings";
import type { DesiredIdentity } from "../core/statusHalf";
import { planHalves } from "../core/passDecision";
import { clusterDocumentDescription, readClusterDesiredSet, readServiceProviderCluster, serviceProviderClusterDescription } from "../sync/documents";
import type { SyncDependencies } from "../sync/syncDependencies";
import { msiOverwriteGuard } from "../sync/syncDependencies";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";
import { partialResultOf } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";
import { msiDriftPrefix } from "../sync/refreshManagedIdentityStatus";

type Identity = Pick<RunRecord, "cluster" | "clusterResourceId" | "operation" | "at">;

/** What names a record: the cluster as its resource is named (its ID as given when it does not parse), the operation, the time. */
export function recordHeader(operation: RunRecord["operation"], clusterResourceId: string, at: Date): Identity {
  return { cluster: clusterNameOfId(clusterResourceId), clusterResourceId, operation, at: at.toISOString() };
}

const noHalves: Halves = { dataPlane: false, msi: false };

function halfOfPass(asked: boolean, written: boolean | undefined, anyWritten: boolean, forced: boolean): HalfOutcome {
  // Without the per-half flag (a result of another shape), a write of the pass counts for each half it asked.
  if (!asked || !(written ?? anyWritten)) return "current";
  return forced ? "driftCorrected" : "written";
}

/** The record of a pass that succeeded. */
export function recordOfPass(identity: Identity, result: SyncResult, forced: Halves = noHalves): RunRecord {
  if (result.skippedReason !== undefined) return { ...identity, dataPlane: "skipped", msi: "skipped" };
  const halves = result.halvesWritten;
  return {
    ...identity,
    dataPlane: halfOfPass(result.workReason !== undefined, halves?.dataPlane, result.wrote, forced.dataPlane),
    msi: result.msiSkippedReason !== undefined ? "skipped" : halfOfPass(result.msiWorkReason !== undefined, halves?.msi, result.wrote, forced.msi),
  };
}

/**
 * The record of a pass that threw. A half the error is about failed, or kept its stored IDs when
 * the pass recorded the failed identities beside them; the other half's outcome is the pass's
 * result when it carries one, else it failed with the pass (nothing was written).
 */
export function recordOfFailedPass(identity: Identity, error: unknown, forced: Halves = noHalves): RunRecord {
  const about = halvesOfFailure(error);
  const partial = partialResultOf(error);
  const fromPartial = partial === undefined ? undefined : recordOfPass(identity, partial, forced);
  const failedHalf = partial !== undefined && keptIdsOfFailed(partial) ? "keptAfterFailure" : "failed";
  return {
    ...identity,
    dataPlane: about.dataPlane ? failedHalf : (fromPartial?.dataPlane ?? "failed"),
    msi: about.msi ? "failed" : (fromPartial?.msi ?? "failed"),
    message: messageOf(error),
  };
}

/** Whether an identity that failed in the pass still has stored IDs beside its error. */
function keptIdsOfFailed(result: SyncResult): boolean {
  return result.failures.some(({ resourceId }) => {
    const entry = result.status.identities?.[goToLower(resourceId)];
    return entry?.clientId !== undefined || entry?.principalId !== undefined;
  });
}

/** The record of a diff: what the update would do, current or a recheck that asks Azure (the update records what it does after it). */
export function diffRecord(identity: Identity, changes: boolean, duringRefresh = false): RunRecord {
  return { ...identity, dataPlane: changes ? "wouldAsk" : "current", msi: changes ? "wouldAsk" : "current", ...(duringRefresh ? { duringRefresh: true } : {}) };
}

/** The record of a diff that threw (a document read that gave no answer): both halves failed, as the engine updates nothing after it. */
export function failedDiffRecord(identity: Identity, error: unknown, duringRefresh = false): RunRecord {
  return { ...identity, dataPlane: "failed", msi: "failed", message: messageOf(error), ...(duringRefresh ? { duringRefresh: true } : {}) };
}

/** The record of a cluster refused before any request (settings wrong for the whole fleet): both halves failed. */
export function refusedRecord(identity: Identity, message: string): RunRecord {
  return { ...identity, dataPlane: "failed", msi: "failed", message };
}

/** The record of a refresh (read) that succeeded: drift found per half, else current. */
export function recordOfRefresh(identity: Identity, result: Pick<RefreshResult, "drift" | "presence">): RunRecord {
  if (result.presence === "deleted") return { ...identity, dataPlane: "skipped", msi: "skipped" };
  const msiDrift = result.drift.some((line) => line.startsWith(msiDriftPrefix));
  const dataPlaneDrift = result.drift.some((line) => !line.startsWith(msiDriftPrefix));
  return { ...identity, dataPlane: dataPlaneDrift ? "driftFound" : "current", msi: msiDrift ? "driftFound" : "current" };
}

/** Whether this run is recorded (`ARO_HCP_RUN_RECORDS` names a file). */
export function runRecorded(environment: NodeJS.ProcessEnv = process.env): boolean {
  return (environment[runRecordsVariable] ?? "").length > 0;
}

/** The run, plan and shard of this process's records, from the variables that are set (non-empty). */
export function runIdentityOf(environment: NodeJS.ProcessEnv = process.env): Pick<RunRecord, "runId" | "shardPlanId" | "shardIndex"> {
  return Object.fromEntries(
    Object.entries(runIdentityVariables).flatMap(([field, variable]) => {
      const value = environment[variable] ?? "";
      return value.length > 0 ? [[field, value]] : [];
    }),
  );
}

const warned = new Set<string>();

/**
 * Appends a record to the run's records file, when `ARO_HCP_RUN_RECORDS` names one, with the run,
 * plan and shard the environment names ({@link runIdentityOf}): one synchronous append of one line
 * (lines of concurrent operations do not interleave); a file that cannot be written is reported once
 * on stderr and never fails the operation.
 */
export function appendRunRecord(record: RunRecord, environment: NodeJS.ProcessEnv = process.env): void {
  const file = environment[runRecordsVariable];
  if (file === undefined || file.length === 0) return;
  try {
    appendFileSync(file, `${JSON.stringify({ ...record, ...runIdentityOf(environment) })}\n`, { encoding: "utf8", mode: 0o600 });
  } catch (error) {
    if (warned.has(file)) return;
    warned.add(file);
    const reason = messageOf(error);
    console.error(`${runRecordsVariable} names ${file}, which cannot be written (${reason}): the run report will miss this run's records`);
  }
}

/**
 * What creating a cluster's resource would change, for a preview's record (the engine does not call
 * a dynamic provider's create in a preview): the create's gates over one read of each document, no
 * Azure request, nothing written.
 */
async function adoptionPreview(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  desired: readonly DesiredIdentity[] | undefined,
  force: boolean,
): Promise<Pick<RunRecord, "dataPlane" | "msi" | "message">> {
  const location = locate(cluster);
  const [fromCluster, serviceProviderCluster] = await Promise.all([
    readClusterDesiredSet(dependencies, location),
    readServiceProviderCluster(dependencies, location),
  ]);
  if (fromCluster === undefined || serviceProviderCluster === undefined) {
    const missing = fromCluster === undefined ? clusterDocumentDescription(location) : serviceProviderClusterDescription(location);
    return { dataPlane: "wouldAsk", msi: "wouldAsk", message: `${missing} is not there yet: the create waits for it (documentWaitSeconds)` };
  }
  if (fromCluster.kind === "deleting") return { dataPlane: "skipped", msi: "skipped" };
  if (fromCluster.kind === "unreadable")
    return { dataPlane: "failed", msi: "failed", message: `the cluster document cannot be read: ${fromCluster.problems.join("; ")}` };
  const { dataPlane, msi } = planHalves(
    fromCluster,
    { desired, force, forceMsi: force },
    serviceProviderCluster.document,
    dependencies.now(),
    msiOverwriteGuard(dependencies),
  );
  return {
    dataPlane: dataPlane.kind === "work" ? "wouldAsk" : "current",
    msi: msi.kind === "work" ? "wouldAsk" : msi.kind === "skipped" ? "skipped" : msi.kind === "current" ? "current" : "failed",
  };
}

/** Appends the preview's record of a cluster new to the stack; a failure to tell is recorded as its own, never thrown. */
export async function recordAdoptionPreview(
  dependencies: () => SyncDependencies,
  header: Identity,
  cluster: ParsedResourceId,
  desired: readonly DesiredIdentity[] | undefined,
  force: boolean,
): Promise<void> {
  try {
    appendRunRecord({ ...header, ...(await adoptionPreview(dependencies(), cluster, desired, force)) });
  } catch (error) {
    appendRunRecord(recordOfFailedPass(header, error));
  }
}
