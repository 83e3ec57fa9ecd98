/**
 * Day 2 in the sandbox: documents as upstream's controllers leave them, and a clock that moves.
 *
 * `--seed upstream` seeds the demo fleet, then writes each cluster's status as upstream's two
 * SyncOnce controllers would after their last pass (/work/shared/docs/upstream-behaviour.md):
 * `dataPlaneOperatorsManagedIdentities` with one entry per operator identity (lowercased key,
 * `resourceID`, the IDs ARM holds, or upstream's raw 404 text for one ARM does not have) and
 * `msiManagedIdentities` with the IDs the data plane answers; each half's `earliestRecheckTime`
 * 12 to 18 hours ahead, whole seconds. Adopting that fleet writes nothing and asks Azure nothing.
 *
 * The hook reads the time of its own host, which the sandbox cannot move. What time does to the
 * fleet is the recheck times coming due, so {@link advanceFleetClock} moves every stored recheck
 * time back by the same amount: for the hook, that much time has passed (`POST /clock/advance`).
 */
import type { CosmosDocumentStore } from "./cosmosDocumentStore";
import type { IdentityStore } from "./identityStore";
import type { FleetClusterDescription } from "./seed";
import { goLowerCase } from "./goLowerCase";

/** Upstream's time format: RFC 3339 in whole seconds, UTC. */
function rfc3339Seconds(milliseconds: number): string {
  return new Date(Math.floor(milliseconds / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** 12 hours plus up to half of that again, as upstream's jitter. */
function recheckTime(now: Date, random: () => number): string {
  return rfc3339Seconds(now.getTime() + (12 + random() * 6) * 3_600_000);
}

/** Upstream's `resourceID` of an entry: the ID parsed again from the lowercased key (canonical segment names restored). */
function resourceIdFromKey(key: string): string {
  return key.replace("/resourcegroups/", "/resourceGroups/");
}

/**
 * Writes each cluster's status as upstream's controllers leave it (see the module comment).
 * Through the store directly: not counted, no faults.
 */
export function seedUpstreamStatus(
  target: { readonly identities: IdentityStore; readonly documents: CosmosDocumentStore },
  fleet: readonly FleetClusterDescription[],
  now: Date = new Date(),
  random: () => number = Math.random,
): void {
  for (const cluster of fleet) {
    const identities: Record<string, Record<string, string>> = {};
    for (const id of Object.values(cluster.dataPlaneOperators)) {
      const key = goLowerCase(id);
      const identity = target.identities.get(id);
      identities[key] =
        identity === undefined
          ? { resourceID: resourceIdFromKey(key), retrievalError: "RESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound\n" }
          : { resourceID: resourceIdFromKey(key), clientId: identity.clientId, principalId: identity.principalId };
    }
    const info = (id: string): Record<string, string> => {
      const identity = target.identities.get(id);
      return { resourceId: id, clientId: identity?.clientId ?? "", principalId: identity?.principalId ?? "" };
    };
    const status = "/properties/status";
    target.documents.patch(cluster.partitionKey, cluster.serviceProviderClusterDocumentId, `${status}/dataPlaneOperatorsManagedIdentities`, {
      identities,
      earliestRecheckTime: recheckTime(now, random),
    });
    target.documents.patch(cluster.partitionKey, cluster.serviceProviderClusterDocumentId, `${status}/msiManagedIdentities`, {
      earliestRecheckTime: recheckTime(now, random),
      controlPlaneOperatorsIdentities: Object.fromEntries(Object.values(cluster.controlPlaneOperators ?? {}).map((id) => [goLowerCase(id), info(id)])),
      serviceManagedIdentity: info(cluster.serviceManagedIdentity),
    });
  }
}

/** The paths of the recheck times a ServiceProviderCluster document holds, one per half. */
const recheckTimePaths = [
  ["properties", "status", "dataPlaneOperatorsManagedIdentities", "earliestRecheckTime"],
  ["properties", "status", "msiManagedIdentities", "earliestRecheckTime"],
] as const;

/**
 * Moves the fleet's time forward by `milliseconds`: every stored recheck time of every
 * ServiceProviderCluster document moves back by that much (see the module comment).
 * @returns How many recheck times moved.
 */
export function advanceFleetClock(documents: CosmosDocumentStore, milliseconds: number): number {
  if (!Number.isFinite(milliseconds) || milliseconds <= 0) throw new RangeError(`the clock moves forward only: got ${milliseconds} ms`);
  let moved = 0;
  for (const stored of documents.list()) {
    const document = stored as Record<string, unknown>;
    if (typeof document.resourceType !== "string" || !/\/serviceproviderclusters$/i.test(document.resourceType)) continue;
    for (const path of recheckTimePaths) {
      let value: unknown = document;
      for (const segment of path) value = (value as Record<string, unknown> | undefined)?.[segment];
      const time = typeof value === "string" ? Date.parse(value) : Number.NaN;
      if (Number.isNaN(time)) continue;
      documents.patch(String(document.partitionKey), String(document.id), `/${path.join("/")}`, rfc3339Seconds(time - milliseconds));
      moved += 1;
    }
  }
  return moved;
}
