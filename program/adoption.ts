/**
 * What a preview says of clusters new to the stack. The engine shows their resources as
 * "+ create" and does not call the provider's create in a preview; creating one adopts the
 * cluster, which for a status upstream already keeps current writes nothing. The note says so once
 * per preview, and how to see it per cluster (resources/report/runRecord.ts, recordAdoptionPreview).
 */
import { goToLower } from "../resources/core/goStrings";
import type { HeldCluster } from "./stackState";

/** The declared clusters the stack does not hold yet. */
export function clustersNewToStack(declared: readonly string[], held: readonly HeldCluster[]): string[] {
  const heldIds = new Set(held.flatMap((cluster) => (cluster.clusterResourceId === undefined ? [] : [goToLower(cluster.clusterResourceId)])));
  return declared.filter((id) => !heldIds.has(goToLower(id)));
}

/** The preview's note for `count` clusters new to the stack. */
export function adoptionNote(count: number): string {
  return (
    `${count} cluster${count === 1 ? " is" : "s are"} new to this stack: "+ create" adopts each, writing to Cosmos only a half whose status is ` +
    "missing or due for its recheck (nothing for a status upstream keeps current), never a document. Per cluster: set " +
    "ARO_HCP_RUN_RECORDS=<file>, then `node dist/cli/runReport.js <file>` (npm run pulumi does both)"
  );
}
