/**
 * The run records' format (runRecord.ts writes them, runReport.ts and regionReport.ts read them): the
 * variables that name a run's file and say which run, plan and shard it is of, each half's outcomes,
 * and one record's fields. Apart from the writer, so that the program and the report commands read
 * it without loading the provider's modules.
 */
import { clusterResourceType, parseResourceIdOfType } from "../core/azureResourceId";
import { clusterNameOf } from "../core/clusterMessage";

/** The variable naming the records file of a run (one JSON line per cluster operation). */
export const runRecordsVariable = "ARO_HCP_RUN_RECORDS";

/**
 * The variables a shard's run sets so that its records say which run, plan and shard they are of
 * (report/regionReport.ts judges a region's run by them): the run's ID, the same for every shard of
 * one run of the region and for the refresh and update of one shard; the plan ID of
 * `shard-plan.json`; the shard's index in that plan. Each record carries those that are set, as given.
 */
export const runIdentityVariables = { runId: "ARO_HCP_RUN_ID", shardPlanId: "ARO_HCP_SHARD_PLAN", shardIndex: "ARO_HCP_SHARD_INDEX" } as const;

/**
 * What can happen to one half of a cluster's status (docs/operations.md, "Reading a run"), worst
 * first: a cluster's outcome is its worse half's. The values are the report's words for them.
 */
export const outcomeWords = {
  failed: "failed", // nothing of the half was written
  keptAfterFailure: "kept after a failure", // identities that could not be read keep their stored IDs beside the error
  driftFound: "drift found", // a refresh found the half changed outside Pulumi
  wouldAsk: "would ask Azure", // a preview's verdict (a diff, or a cluster new to the stack): a recheck is due or asked for, or the status is missing
  driftCorrected: "drift corrected", // written by an update that a refresh's drift in this half forced
  written: "written", // an answer that changed it, or its recheck times
  current: "current", // Azure not asked as no recheck was due, or asked and the stored IDs stand
  skipped: "skipped", // not looked at: the cluster is being deleted, or has no identity URL yet
} as const;

export type HalfOutcome = keyof typeof outcomeWords;

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
  /**
   * On a diff the engine made within a refresh (a refresh diffs each cluster it read, to show what an
   * update would change), not the update's: it says nothing of whether the update reached the cluster.
   */
  readonly duringRefresh?: true;
  /** `ARO_HCP_RUN_ID`, when set. */
  readonly runId?: string;
  /** `ARO_HCP_SHARD_PLAN`, when set. */
  readonly shardPlanId?: string;
  /** `ARO_HCP_SHARD_INDEX` as given, when set. */
  readonly shardIndex?: string;
}

/** The cluster as its resource is named in the stack, or its ID as given when it does not parse: what a record's `cluster` holds. */
export function clusterNameOfId(clusterResourceId: string): string {
  const parsed = parseResourceIdOfType(clusterResourceId, clusterResourceType);
  return parsed.ok ? clusterNameOf(parsed.resourceId) : clusterResourceId;
}
