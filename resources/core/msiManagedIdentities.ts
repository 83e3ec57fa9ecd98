/**
 * The MSI half, `properties.status.msiManagedIdentities` (note `resourceId`, not `resourceID`), and its decisions, as
 * upstream's FetchMSIIdentitiesInfo makes them. An answer decides only when it names exactly the requested identities (by
 * lowercased `resource_id`); a null ID leaves the field out, and only both null (an identity that no longer exists) is accepted.
 */
import type { LiveClusterDesiredSet, MsiDesired } from "./clusterDocument";
import { msiDesiredSet } from "./clusterDocument";
import type { DocumentLocation } from "./documentLocation";
import type { StoredHalf } from "./goJson";
import { goToLower } from "./goStrings";
import { withoutNil } from "./json";
import { MsiIdentitiesError } from "./errors";
import type { DesiredIdentity, Half, HalfPlan } from "./statusHalf";
import { defineHalf, nextRecheckTime } from "./statusHalf";

/** One identity's entry (a control plane operator's, or the SMI's). Written by: FetchMSIIdentitiesInfo and this hook. */
export interface MsiIdentityEntry {
  readonly resourceId?: string;
  readonly clientId?: string;
  readonly principalId?: string;
}

/** `properties.status.msiManagedIdentities`. Written by: FetchMSIIdentitiesInfo and this hook. */
export interface MsiManagedIdentities {
  readonly earliestRecheckTime?: string;
  /** Keyed by the lowercased identity resource ID. */
  readonly controlPlaneOperatorsIdentities?: Readonly<Record<string, MsiIdentityEntry>>;
  readonly serviceManagedIdentity?: MsiIdentityEntry;
}

/** The MSI half: upstream's `MSIManagedIdentities` struct (core/statusHalf.ts). */
export const msiHalf: Half<MsiManagedIdentities, MsiDesired> = defineHalf(
  {
    name: "msiManagedIdentities",
    problemsNamed: { subtree: "msiManagedIdentities", fieldPrefix: "msiManagedIdentities." },
    fields: { earliestRecheckTime: "time", controlPlaneOperatorsIdentities: "map", serviceManagedIdentity: "entry" },
    entryFields: ["resourceId", "clientId", "principalId"],
  },
  (desired) => ({ controlPlaneOperatorsIdentities: desired.controlPlaneOperators, serviceManagedIdentity: desired.serviceManagedIdentity }),
);

/** The identities one request asks for, as upstream's: every control plane operator identity, then the SMI. */
export function msiRequestedIdentities(desired: MsiDesired): string[] {
  return [...desired.controlPlaneOperators.map((identity) => identity.resourceId), desired.serviceManagedIdentity.resourceId];
}

/** One answered identity: what the data plane (or a stand-in) said. */
export interface MsiAnswerEntry {
  readonly resourceId: string;
  readonly clientId: string | null;
  readonly objectId: string | null;
}

/** The subtree a complete answer leaves (see the module comment), or the problem that keeps it from deciding anything. */
export function decideMsiStatus(
  desired: MsiDesired,
  answer: readonly MsiAnswerEntry[],
  now: Date,
  random: () => number,
): { readonly ok: true; readonly status: MsiManagedIdentities } | { readonly ok: false; readonly problem: string } {
  const refused = (problem: string) => ({ ok: false as const, problem });
  const requested = msiRequestedIdentities(desired);
  const asked = new Set(requested.map((resourceId) => goToLower(resourceId)));
  const unknown = answer.find((entry) => !asked.has(goToLower(entry.resourceId)));
  if (unknown !== undefined) return refused(`the answer names ${unknown.resourceId}, which was not asked for`);
  const byKey = new Map(answer.map((entry) => [goToLower(entry.resourceId), entry]));
  const missing = requested.find((resourceId) => !byKey.has(goToLower(resourceId)));
  if (missing !== undefined) return refused(`the answer holds nothing for ${missing}`);
  if (answer.length !== requested.length) return refused(`the answer holds ${answer.length} identities where ${requested.length} were asked for`);
  const halfNull = answer.find((entry) => (entry.clientId === null) !== (entry.objectId === null));
  if (halfNull !== undefined) {
    const [nullField, otherField] = halfNull.clientId === null ? ["client_id", "object_id"] : ["object_id", "client_id"];
    return refused(
      `the answer's ${nullField} for ${halfNull.resourceId} is null but its ${otherField} is not (the data plane answers null for both of an identity that no longer exists)`,
    );
  }
  const entryOf = (identity: DesiredIdentity): MsiIdentityEntry => {
    const answered = byKey.get(identity.key) as MsiAnswerEntry;
    return { resourceId: identity.resourceId, ...withoutNil({ clientId: answered.clientId, principalId: answered.objectId }) };
  };
  const controlPlaneOperatorsIdentities = Object.fromEntries(desired.controlPlaneOperators.map((identity) => [identity.key, entryOf(identity)]));
  return {
    ok: true,
    status: {
      earliestRecheckTime: nextRecheckTime(now, random),
      ...(desired.controlPlaneOperators.length === 0 ? {} : { controlPlaneOperatorsIdentities }),
      serviceManagedIdentity: entryOf(desired.serviceManagedIdentity),
    },
  };
}

/** The IDs upstream's fixed-identity stand-in answers for every identity, and whether it may write them over real ones. */
export interface StandIn {
  readonly clientId: string;
  readonly principalId: string;
  readonly overwriteAllowed: boolean;
}

/** The stand-in's answer (upstream's fixed identity where no data plane exists): its IDs for every identity asked for. */
export function standInAnswer(requested: readonly string[], fixed: Pick<StandIn, "clientId" | "principalId">): MsiAnswerEntry[] {
  return requested.map((resourceId) => ({ resourceId, clientId: fixed.clientId, objectId: fixed.principalId }));
}

/**
 * What a mode's answers may not replace, beside upstream's controllers: `fixedIdentity` (upstream's stand-in) may not write its IDs
 * over real ones, and `processCredential` (ARM read with the hook's own credential) may not write real IDs over the stand-in's. Either
 * would take turns with upstream's controllers at every recheck. `clusterServiceManagedIdentity` answers as upstream's data plane
 * does: no guard.
 */
export type MsiOverwriteGuard = StandIn | { readonly processCredential: true; readonly overwriteAllowed: boolean };

/** The stand-in's mark on a stored half: two entries or more, every one holding the same client and principal ID (real identities never share them). */
function standInMark(stored: MsiManagedIdentities): boolean {
  const entries = msiHalf.entries(stored).map(({ entry }) => entry);
  const [first] = entries;
  return (
    entries.length >= 2 &&
    first.clientId !== undefined &&
    first.principalId !== undefined &&
    entries.every((entry) => entry.clientId === first.clientId && entry.principalId === first.principalId)
  );
}

/** The stored entries, named by resource ID, whose IDs `guard`'s answers may not replace. */
export function refusedOverwrites(stored: MsiManagedIdentities, guard: MsiOverwriteGuard | undefined): string[] {
  if (guard === undefined || guard.overwriteAllowed) return [];
  const foreign = (entry: MsiIdentityEntry): boolean =>
    "processCredential" in guard
      ? standInMark(stored)
      : (entry.clientId !== undefined && entry.clientId !== guard.clientId) || (entry.principalId !== undefined && entry.principalId !== guard.principalId);
  return msiHalf
    .entries(stored)
    .filter(({ entry }) => foreign(entry))
    .map(({ entry }) => entry.resourceId ?? "(an entry without resourceId)");
}

/** What the MSI half has to do in a pass: its gate's plan, or why it does nothing or cannot be decided. */
export type MsiPlan =
  | HalfPlan<MsiDesired>
  | { readonly kind: "skipped"; readonly reason: "identityUrlNotSet" }
  | { readonly kind: "unreadable"; readonly problems: readonly string[] }
  | { readonly kind: "refused"; readonly reason: string; readonly details: readonly string[] };

/** Nothing for a cluster without an identity URL (as upstream); a guarded mode refuses to overwrite IDs it may not replace unless allowed. */
export function planMsiHalf(
  cluster: LiveClusterDesiredSet,
  stored: StoredHalf<MsiManagedIdentities>,
  now: Date,
  force: boolean,
  guard?: MsiOverwriteGuard,
): MsiPlan {
  if (cluster.identityUrl === undefined) return { kind: "skipped", reason: "identityUrlNotSet" };
  const desired = msiDesiredSet(cluster.controlPlaneOperators, cluster.serviceManagedIdentity);
  if (!desired.ok) return { kind: "unreadable", problems: desired.problems };
  const plan = msiHalf.plan(desired.desired, stored, now, force);
  const overwritten = plan.kind === "work" && guard !== undefined ? refusedOverwrites(stored.status, guard) : [];
  if (overwritten.length === 0 || guard === undefined) return plan;
  const identities = `${overwritten.length} stored identit${overwritten.length === 1 ? "y" : "ies"}`;
  const allow =
    "set 'aro-hcp-identity-status:allowFixedIdentityOverwrite' (or ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE) to true for the one update that means it";
  const reason =
    "processCredential" in guard
      ? `credentialMode processCredential would write the IDs ARM gives its own credential over ${identities} that hold one fixed identity's IDs ` +
        "(upstream's non-production stand-in recorded them, and its controllers would write them back at their next recheck): beside upstream's " +
        `stand-in run credentialMode fixedIdentity with its identity, or ${allow}`
      : `credentialMode fixedIdentity would write the fixed identity's IDs over ${identities} whose IDs are not its own (a real data plane recorded them); ${allow}`;
  return { kind: "refused", reason, details: overwritten };
}

/** Why the half cannot be decided at all: the cluster document cannot name its identities, or the stand-in refuses. */
export function msiPlanError(
  location: Pick<DocumentLocation, "documentId" | "clusterName" | "clusterDocumentId">,
  plan: Extract<MsiPlan, { kind: "unreadable" | "refused" }>,
): MsiIdentitiesError {
  const { documentId, clusterName, clusterDocumentId } = location;
  if (plan.kind === "refused") return new MsiIdentitiesError({ documentId, clusterName, reason: plan.reason, details: plan.details });
  const reason = `the cluster's HCPOpenShiftCluster document ${clusterDocumentId} does not name its control plane operator identities in a form upstream writes`;
  return new MsiIdentitiesError({ documentId, clusterName, reason, details: plan.problems });
}
