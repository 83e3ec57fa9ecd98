/** What one pass decides once Azure has answered, and what it reports: pure functions (sync/syncManagedIdentityStatus.ts does the I/O). */
import type { ParsedResourceId } from "./azureResourceId";
import type { ClusterDesiredSet } from "./clusterDocument";
import type { Halves } from "./clusterMessage";
import { bothHalvesFailed, withMsiWritten } from "./clusterMessage";
import type { DocumentLocation } from "./documentLocation";
import type { IdentityLookupFailure } from "./errors";
import { UserAssignedIdentityReadError } from "./errors";
import { isFailedRetrievalError } from "./retrievalError";
import type { JsonObject } from "./json";
import type { MsiManagedIdentities, MsiOverwriteGuard, MsiPlan } from "./msiManagedIdentities";
import { msiHalf, msiPlanError, planMsiHalf, refusedOverwrites } from "./msiManagedIdentities";
import type { DataPlaneOperatorsManagedIdentities, StatusHalves } from "./serviceProviderClusterDocument";
import { dataPlaneHalf } from "./serviceProviderClusterDocument";
import type { CredentialScope, DecidedOutcome, IdsOnLookupFailure } from "./statusDecision";
import { decideStatus } from "./statusDecision";
import type { DesiredIdentity, HalfPlan, PlanReason } from "./statusHalf";

export interface SyncRequest {
  readonly cluster: ParsedResourceId;
  /** The desired set; `undefined` reads it from the cluster document, as upstream does. */
  readonly desired: readonly DesiredIdentity[] | undefined;
  /** Skip the data plane operators' (`force`) or the MSI half's (`forceMsi`) recheck gate: drift was detected in that half, or the state is unknown. */
  readonly force: boolean;
  readonly forceMsi?: boolean;
  /** The service managed identity and identity URL the inputs declare: they must agree with the cluster document's. */
  readonly serviceManagedIdentity?: string;
  readonly identityUrl?: string;
}

export interface SyncResult {
  readonly documentId: string;
  readonly partitionKey: string;
  readonly serviceProviderClusterResourceId: string;
  readonly desiredSource: "inputs" | "clusterDocument";
  readonly serviceManagedIdentity: string | undefined;
  /** The subtree as persisted after the pass. */
  readonly status: DataPlaneOperatorsManagedIdentities;
  readonly skippedReason: "clusterDeleting" | undefined;
  /** Why Azure was consulted; undefined when the gate skipped it. */
  readonly workReason: PlanReason | undefined;
  readonly wrote: boolean;
  readonly writeAttempts: number;
  readonly lookups: number;
  readonly failures: readonly IdentityLookupFailure[];
  /** `status.msiManagedIdentities` as persisted after the pass. */
  readonly msiStatus: MsiManagedIdentities;
  /** Why the MSI half was not looked at: its cluster has no identity URL yet (upstream skips it too). */
  readonly msiSkippedReason: "identityUrlNotSet" | undefined;
  /** Why the MSI half asked for an answer; undefined when its gate skipped it. */
  readonly msiWorkReason: PlanReason | undefined;
  /** Which halves the pass wrote (the run report's per-half outcome); absent when it wrote nothing. */
  readonly halvesWritten?: Halves;
}

/** Each half's plan against the stored ServiceProviderCluster document (its gate), and what each half holds; for a pass and a preview alike. */
export function planHalves(
  fromCluster: Exclude<ClusterDesiredSet, { kind: "deleting" }>,
  request: Pick<SyncRequest, "desired" | "force" | "forceMsi">,
  document: JsonObject,
  now: Date,
  guard: MsiOverwriteGuard | undefined,
) {
  const storedStatus = dataPlaneHalf.read(document);
  const storedMsi = msiHalf.read(document);
  const desired = request.desired ?? (fromCluster.kind === "desired" ? fromCluster.identities : []);
  return {
    storedStatus,
    storedMsi,
    dataPlane: dataPlaneHalf.plan(desired, storedStatus, now, request.force),
    msi: planMsiHalf(fromCluster, storedMsi, now, request.forceMsi === true, guard),
  };
}

/** The data plane operators' answer: one outcome per identity asked about, in order, and whose credential read them; or why the half writes nothing. */
export type DataPlaneAnswer = { readonly outcomes: readonly DecidedOutcome[]; readonly credentialScope: CredentialScope } | { readonly error: Error };

/** The MSI half's answer: the half a complete answer leaves, or why the half writes nothing. */
export type MsiAnswer = { readonly answered: MsiManagedIdentities } | { readonly error: Error };

/** Each half's plan and, for a half with work, Azure's answer. */
export interface PassDecisions {
  readonly dataPlane: HalfPlan<readonly DesiredIdentity[]>;
  readonly dataPlaneAnswer: DataPlaneAnswer | undefined;
  /** The data plane operators' half as read before the lookups: what "changed since our read" is measured against. */
  readonly basis: DataPlaneOperatorsManagedIdentities;
  readonly msi: MsiPlan;
  readonly msiAnswer: MsiAnswer | undefined;
}

/** The halves to write into `document` (the one read, or a re-read after a conflict): each half with an answer decided on its own. */
export function decideHalves(
  pass: PassDecisions,
  document: JsonObject,
  reread: boolean,
  context: {
    readonly now: Date;
    readonly random: () => number;
    readonly idsOnLookupFailure: IdsOnLookupFailure;
    readonly guard: MsiOverwriteGuard | undefined;
  },
): StatusHalves {
  const { dataPlane, dataPlaneAnswer, msi, msiAnswer } = pass;
  const { now, guard } = context;
  return {
    dataPlane:
      dataPlane.kind === "work" && dataPlaneAnswer !== undefined && "outcomes" in dataPlaneAnswer
        ? dataPlaneHalf.decideWrite({ desired: dataPlane.desired, current: dataPlaneHalf.read(document), reread, now }, (stored) =>
            decideStatus(stored, { ...context, ...dataPlaneAnswer, desired: dataPlane.desired, basis: pass.basis, reread }),
          )
        : undefined,
    // After a conflict, a guarded mode refuses again what it would write over IDs it may not replace.
    msi:
      msi.kind === "work" && msiAnswer !== undefined && "answered" in msiAnswer
        ? msiHalf.decideWrite({ desired: msi.desired, current: msiHalf.read(document), reread, now }, (stored) =>
            reread && refusedOverwrites(stored, guard).length > 0 ? undefined : msiAnswer.answered,
          )
        : undefined,
  };
}

/** The result of a pass that reached its write, or the error it throws (the data plane half's first, each saying what the other half wrote). */
export function reportPass(location: DocumentLocation, written: Omit<SyncResult, "failures">, halves: PassDecisions, wroteHalves: StatusHalves): SyncResult {
  const { dataPlane, dataPlaneAnswer, msi } = halves;
  // An identity's failure is reported only while it is still recorded.
  const failures: IdentityLookupFailure[] =
    dataPlane.kind === "work" && dataPlaneAnswer !== undefined && "outcomes" in dataPlaneAnswer
      ? dataPlane.desired.flatMap((identity, index) => {
          const outcome = dataPlaneAnswer.outcomes[index];
          const recorded = isFailedRetrievalError(written.status.identities?.[identity.key]?.retrievalError);
          return outcome.kind === "failed" && recorded ? [{ resourceId: identity.resourceId, error: outcome.error }] : [];
        })
      : [];
  const result: SyncResult = { ...written, failures };
  const { documentId, clusterName } = location;
  const dataPlaneError =
    errorOf(dataPlaneAnswer) ??
    (failures.length > 0
      ? new UserAssignedIdentityReadError({ documentId, clusterName, failures, persisted: true, total: result.lookups, status: result.status })
      : undefined);
  const msiError = msi.kind === "unreadable" || msi.kind === "refused" ? msiPlanError(location, msi) : errorOf(halves.msiAnswer);
  const error = dataPlaneError ?? msiError;
  if (error === undefined) return result;
  if (dataPlaneError !== undefined && msiError !== undefined) error.message += `${bothHalvesFailed}${msiError.message}`;
  else if (dataPlaneError !== undefined && wroteHalves.msi !== undefined) error.message = withMsiWritten(error.message);
  else if (msiError !== undefined && wroteHalves.dataPlane !== undefined) error.message += " (status.dataPlaneOperatorsManagedIdentities was written)";
  // The provider records the result in state when anything was written, or when identities failed.
  throw result.wrote || failures.length > 0 ? Object.assign(error, { result }) : error;
}

function errorOf(answer: DataPlaneAnswer | MsiAnswer | undefined): Error | undefined {
  return answer !== undefined && "error" in answer ? answer.error : undefined;
}
