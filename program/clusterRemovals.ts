/**
 * What an update that declares clusters may delete. The engine deletes every cluster resource the
 * program no longer declares. A delete writes nothing to Cosmos (the status stays as last
 * written), but the stack stops keeping that cluster: its record leaves the state, and nothing of
 * the stack corrects its status any more. A `clustersFile` cut short (a copy interrupted, a
 * generator whose query failed half-way) would drop 1,999 of 2,000 clusters from drift correction
 * without a question. So an update that would delete more than a small
 * share of the clusters the stack holds is refused, before anything is declared, unless
 * `allowClusterRemovals` is true for that update. (An update that declares none is
 * program/emptyFleet.ts's, with `allowEmptyFleet`.)
 *
 * The share: more than {@link removalShare} of the clusters the stack holds, and more than
 * {@link removalFloor}. Clusters leave a fleet one by one as they are deleted (a scheduled run
 * sees a handful at a time, far under a tenth), while a truncated or half-generated list loses
 * much more; the floor lets a small stack lose a few clusters at once without the setting (a
 * stack of three may drop one), and its mistakes show in the few lines of the engine's plan.
 * The rule is fixed rather than a setting: a threshold raised once would stay raised for every
 * later update, which is what the per-update setting avoids.
 */
import * as pulumi from "@pulumi/pulumi";
import { goToLower } from "../resources/core/goStrings";
import type { HeldCluster } from "./stackState";
import { runningStackName, someNames } from "./stackState";

/** The program's setting (a key of the project namespace) that lets one update delete more than the share. */
export const allowClusterRemovalsKey = "allowClusterRemovals";

/** The share of the stack's clusters an update may delete without {@link allowClusterRemovalsKey}. */
export const removalShare = 0.1;

/** Deletions an update may make without {@link allowClusterRemovalsKey} whatever the share. */
export const removalFloor = 5;

/** How many of `held` clusters an update may delete without saying so. */
export function allowedRemovals(held: number): number {
  return Math.max(removalFloor, Math.floor(held * removalShare));
}

/** Options of {@link checkClusterRemovals}. */
export interface ClusterRemovalCheck {
  /** Where the list came from, as messages name it: `<project>:clusters` or `<project>:clustersFile (<file>)`. */
  readonly source: string;
  /** The cluster IDs this update declares. */
  readonly declared: readonly string[];
  /** The stack's cluster resources, from its last saved state (program/stackState.ts). */
  readonly held: readonly HeldCluster[];
  /** The names the declared clusters' resources have ({@link resourceNameFor} of program/declareFleet.ts). */
  readonly declaredNames: ReadonlySet<string>;
  readonly allowClusterRemovals: boolean;
}

/**
 * The stack's clusters an update declaring `declared` deletes: those whose recorded cluster ID is
 * not declared (compared as upstream compares IDs, Go-lowercased), or, for a resource whose
 * outputs record none, whose name no declared cluster has.
 */
export function clustersRemovedBy(check: Pick<ClusterRemovalCheck, "declared" | "held" | "declaredNames">): HeldCluster[] {
  const declared = new Set(check.declared.map(goToLower));
  return check.held.filter((cluster) =>
    cluster.clusterResourceId === undefined ? !check.declaredNames.has(cluster.name) : !declared.has(goToLower(cluster.clusterResourceId)),
  );
}

/**
 * Decides, before anything is declared, whether the update may delete what it would.
 * @throws Error naming the source, how many of how many clusters it would delete (a few by name), the share and `allowClusterRemovals`.
 */
export function checkClusterRemovals(check: ClusterRemovalCheck): void {
  const removed = clustersRemovedBy(check);
  const allowed = allowedRemovals(check.held.length);
  const names = someNames(removed.map((cluster) => cluster.name));
  if (removed.length === 0) return;
  if (removed.length <= allowed) {
    // What the engine's `delete[retain]` means, said once for the update (preview included).
    void pulumi.log.info(`${relinquished(removed.length)} (${names})`);
    return;
  }
  const setting = `${pulumi.getProject()}:${allowClusterRemovalsKey}`;
  if (check.allowClusterRemovals) {
    // Fire and forget, as every warning of the program: the engine shows it; nothing waits for it.
    void pulumi.log.warn(
      `${setting} is true: this update deletes ${removed.length} of the ${check.held.length} clusters the stack holds (${names}); ` +
        `${relinquished(removed.length)}; set it back to false, or remove it, once they are gone`,
    );
    return;
  }
  throw new Error(
    `${check.source} declares ${check.declared.length} cluster${check.declared.length === 1 ? "" : "s"}, but stack ${runningStackName()} holds ${check.held.length}: ` +
      `this update would delete ${removed.length} of them (${names}) from the stack, which then stops keeping their status, more than the ${allowed} ` +
      `an update may delete unless it says so (${Math.round(removalShare * 100)} % of the clusters the stack holds, or ${removalFloor}). ` +
      `Check ${check.source}: a list cut short or generated half-way looks like this. To delete them, set ${setting} to true for this update ` +
      `(\`pulumi config set ${setting} true\`, then \`pulumi config rm ${setting}\`). Nothing was changed`,
  );
}

/** What deleting `count` cluster resources does, as the program says it. */
export function relinquished(count: number): string {
  return (
    `${count} cluster${count === 1 ? " leaves" : "s leave"} the stack: ${count === 1 ? "its" : "their"} status stays in Cosmos DB as last written ` +
    "(a delete writes nothing), and this stack no longer keeps it"
  );
}
