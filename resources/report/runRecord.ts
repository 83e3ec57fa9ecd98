/**
 * What one provider operation did to one cluster, per half, as the run report reads it
 * (report/runReport.ts). The provider host is the one process that sees every operation, a refresh's
 * included, with its whole message. Each create, update, refresh (read) and diff, each preview of a cluster
 * new to the stack and each check refused for the settings appends one record, a JSON line, to the
 * file `ARO_HCP_RUN_RECORDS` names; without the variable nothing is recorded. The decisions are pure; {@link appendRunRecord} is the only I/O.
 */
import { appendFileSync } from "node:fs";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";
import { partialResultOf } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";
import { msiDriftPrefix } from "../sync/refreshManagedIdentityStatus";
import { goToLower } from "../core/goStrings";
import { clusterResourceType, parseResourceIdOfType } from "../core/azureResourceId";
import { clusterNameOf } from "../core/clusterMessage";

/** The variable naming the records file of a run (one JSON line per cluster operation). */
export const runRecordsVariable = "ARO_HCP_RUN_RECORDS";

/**
 * What happened to one half of a cluster's status:
 * - `current`: nothing to change (Azure not asked as no recheck was due, or asked and the stored IDs stand);
 * - `written`: the half was written (an answer that changed it, or its recheck times);
 * - `driftCorrected`: written by an update that a refresh's drift in this half forced;
 * - `driftFound`: a refresh found it changed outside Pulumi (`pulumi up` restores it);
 * - `keptAfterFailure`: some identities could not be read; their stored IDs were kept beside the error;
 * - `failed`: the pass failed and wrote nothing of this half;
 * - `skipped`: not looked at (the cluster is being deleted, or has no identity URL yet);
 * - `wouldAsk`: a preview's verdict: a recheck is due (or asked for), or the status is missing, so
 *   the update or create asks Azure and writes what changed (a diff; for a cluster new to the
 *   stack, adoptionPreview.ts).
 */
export type HalfOutcome = "current" | "written" | "driftCorrected" | "driftFound" | "keptAfterFailure" | "failed" | "skipped" | "wouldAsk";

/** The outcomes that make a run red. */
export const failedOutcomes: readonly HalfOutcome[] = ["keptAfterFailure", "failed"];

/** One record: a cluster, the operation, each half's outcome and, on failure, the message. */
export interface RunRecord {
  /** The cluster as its resource is named in the stack (core/clusterMessage.ts clusterNameOf). */
  readonly cluster: string;
  readonly clusterResourceId: string;
  readonly operation: "check" | "create" | "update" | "read" | "diff" | "preview";
  readonly at: string;
  readonly dataPlane: HalfOutcome;
  readonly msi: HalfOutcome;
  /** The failure's message (its first line carries the cause), when the operation failed. */
  readonly message?: string;
}

type Identity = Pick<RunRecord, "cluster" | "clusterResourceId" | "operation" | "at">;

/** What names a record: the cluster as its resource is named (its ID as given when it does not parse), the operation, the time. */
export function recordHeader(operation: RunRecord["operation"], clusterResourceId: string, at: Date): Identity {
  const parsed = parseResourceIdOfType(clusterResourceId, clusterResourceType);
  return { cluster: parsed.ok ? clusterNameOf(parsed.resourceId) : clusterResourceId, clusterResourceId, operation, at: at.toISOString() };
}

/** Which halves an update was forced in by a refresh's drift. */
export interface ForcedHalves {
  readonly dataPlane: boolean;
  readonly msi: boolean;
}

function halfOfPass(asked: boolean, written: boolean | undefined, anyWritten: boolean, forced: boolean): HalfOutcome {
  if (!asked) return "current";
  // Without the per-half flag (a result of another shape), a write of the pass counts for each half it asked.
  if (!(written ?? anyWritten)) return "current";
  return forced ? "driftCorrected" : "written";
}

/** The record of a pass that succeeded. */
export function recordOfPass(identity: Identity, result: SyncResult, forced: ForcedHalves = { dataPlane: false, msi: false }): RunRecord {
  if (result.skippedReason !== undefined) return { ...identity, dataPlane: "skipped", msi: "skipped" };
  const halves = result.halvesWritten;
  return {
    ...identity,
    dataPlane: halfOfPass(result.workReason !== undefined, halves?.dataPlane, result.wrote, forced.dataPlane),
    msi: result.msiSkippedReason !== undefined ? "skipped" : halfOfPass(result.msiWorkReason !== undefined, halves?.msi, result.wrote, forced.msi),
  };
}

/** Which half an error is about, by its class: the other half's outcome is unknown unless the pass's result says. */
function halvesOfError(error: unknown): { dataPlane: boolean; msi: boolean } {
  const name = error instanceof Error ? error.name : "";
  const message = error instanceof Error ? error.message : String(error);
  if (message.includes("\nand: ")) return { dataPlane: true, msi: true };
  if (name === "UserAssignedIdentityReadError") return { dataPlane: true, msi: false };
  if (name === "MsiIdentitiesError" || name === "DataPlaneError") return { dataPlane: false, msi: true };
  // Credentials, settings, documents: the pass as a whole.
  return { dataPlane: true, msi: true };
}

/**
 * The record of a pass that threw. A half the error is about failed, or kept its stored IDs when
 * the pass recorded the failed identities beside them; the other half's outcome is the pass's
 * result when it carries one, else it failed with the pass (nothing was written).
 */
export function recordOfFailedPass(identity: Identity, error: unknown, forced: ForcedHalves = { dataPlane: false, msi: false }): RunRecord {
  const message = error instanceof Error ? error.message : String(error);
  const about = halvesOfError(error);
  const partial = partialResultOf(error);
  const fromPartial = partial === undefined ? undefined : recordOfPass(identity, partial, forced);
  const dataPlane: HalfOutcome =
    about.dataPlane && partial !== undefined && keptIdsOfFailed(partial)
      ? "keptAfterFailure"
      : about.dataPlane
        ? "failed"
        : (fromPartial?.dataPlane ?? "failed");
  const msi: HalfOutcome = about.msi ? "failed" : (fromPartial?.msi ?? "failed");
  return { ...identity, dataPlane, msi, message };
}

/** Whether an identity that failed in the pass still has stored IDs beside its error. */
function keptIdsOfFailed(result: SyncResult): boolean {
  return result.failures.some(({ resourceId }) => {
    const entry = result.status.identities?.[goToLower(resourceId)];
    return entry?.clientId !== undefined || entry?.principalId !== undefined;
  });
}

/** The record of a diff: what the update would do, current or a recheck that asks Azure (the update records what it does after it). */
export function diffRecord(identity: Identity, changes: boolean): RunRecord {
  return { ...identity, dataPlane: changes ? "wouldAsk" : "current", msi: changes ? "wouldAsk" : "current" };
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

/**
 * Appends a record to the run's records file, when `ARO_HCP_RUN_RECORDS` names one. One
 * synchronous append of one line per operation (the file is opened for appending, so lines of
 * concurrent operations do not interleave); a file that cannot be written is reported once on
 * stderr and never fails the operation.
 */
export function appendRunRecord(record: RunRecord, environment: NodeJS.ProcessEnv = process.env): void {
  const file = environment[runRecordsVariable];
  if (file === undefined || file.length === 0) return;
  try {
    appendFileSync(file, `${JSON.stringify(record)}\n`, { encoding: "utf8", mode: 0o600 });
  } catch (error) {
    if (!warned.has(file)) {
      warned.add(file);
      console.error(
        `${runRecordsVariable} names ${file}, which cannot be written (${error instanceof Error ? error.message : String(error)}): the run report will miss this run's records`,
      );
    }
  }
}
const warned = new Set<string>();
