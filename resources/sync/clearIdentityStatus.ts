/**
 * What `pulumi destroy` (and a cluster leaving the stack's list) does to the status: each half is
 * reset to `{}` only while it is exactly what this resource last recorded and no other resource of
 * the same cluster claimed it since (core/statusClaim.ts).
 */
import type { ParsedResourceId } from "../core/azureResourceId";
import { locate } from "../core/documentLocation";
import { statusEquals } from "../core/identityStatus";
import type { JsonObject } from "../core/json";
import { readStoredStatus } from "../core/serviceProviderClusterDocument";
import { storedClaimOf } from "../core/statusClaim";
import type { StatusHalves } from "../core/statusPatch";
import { log } from "../logging/logger";
import { explainMissingServiceProviderCluster } from "./documentAbsence";
import { readLive, serviceProviderClusterDescription } from "./documentReads";
import type { KnownMsiStatus } from "./msiRefresh";
import { clearedMsiHalf } from "./msiRefresh";
import type { KnownStatus } from "./refreshManagedIdentityStatus";
import { writeStatus } from "./statusWrite";
import type { SyncDependencies } from "./syncDependencies";

/** What a delete did to the owned subtree. */
export interface ClearResult {
  /** `cleared`: reset to `{}`; `kept`: left as it is, written or changed by someone else since this resource's last write; `absent`: nothing to clear. */
  readonly outcome: "cleared" | "kept" | "absent";
  readonly wrote: boolean;
}

/**
 * What `pulumi destroy` (and a cluster leaving the stack's list) does to the owned subtree:
 * resets it to `{}` — what the upstream backend writes for an empty status — only while it is
 * exactly what this resource last recorded (`lastRecorded`, from its outputs; `undefined` when
 * they cannot say, which keeps the subtree), so nobody else has
 * written it since: IDs nobody maintains any more must not go stale in place. A subtree another
 * writer (upstream's controller, another stack or shard, a person) wrote after that is theirs,
 * and is kept whole; so is one another resource of the same cluster claimed since (`claim` is this
 * resource's, from its outputs: core/statusClaim.ts). The comparison is made under the etag: should
 * the document change between the read and the write (HTTP 412), it is read and compared again. A
 * document proved missing (sync/documentAbsence.ts), or an empty subtree, writes nothing.
 */
export async function clearManagedIdentityStatus(
  dependencies: SyncDependencies,
  cluster: ParsedResourceId,
  lastRecorded: KnownStatus | undefined,
  claim?: string,
  lastRecordedMsi?: KnownMsiStatus,
): Promise<ClearResult> {
  const location = locate(cluster);
  const stored = await readLive(dependencies, location.partitionKey, location.documentId, serviceProviderClusterDescription(location));
  if (stored === undefined) {
    // Nothing to clear, once the absence is proved (it throws when nothing of the fleet is there).
    await explainMissingServiceProviderCluster(dependencies, location, "delete");
    return { outcome: "absent", wrote: false };
  }
  // Set by the decision, which runs again on every re-read.
  const decided: { outcome: ClearResult["outcome"]; claimedBy?: string } = { outcome: "absent" };
  const clear = (document: JsonObject): StatusHalves | undefined => {
    // Another resource of the same cluster (a new name, another stack or shard) took it over since: it is theirs.
    const claimedBy = storedClaimOf(document);
    if (claimedBy !== undefined && claimedBy !== claim) {
      Object.assign(decided, { outcome: "kept", claimedBy });
      return undefined;
    }
    // The MSI half on the same rule, decided on its own.
    const msi = clearedMsiHalf(document, lastRecordedMsi);
    const current = readStoredStatus(document);
    const empty =
      current.problems.length === 0 && Object.keys(current.status.identities ?? {}).length === 0 && current.status.earliestRecheckTime === undefined;
    if (!current.present || empty) {
      decided.outcome = "absent";
      return { msi };
    }
    const recorded = typeof lastRecorded === "function" ? lastRecorded(Object.keys(current.status.identities ?? {})) : lastRecorded;
    if (recorded === undefined || current.problems.length > 0 || !statusEquals(current.status, recorded)) {
      decided.outcome = "kept";
      return { msi };
    }
    decided.outcome = "cleared";
    return { dataPlane: {}, msi };
  };
  const { wrote } = await writeStatus(dependencies, location, stored, clear, "drop");
  if (decided.outcome === "kept") {
    const by =
      decided.claimedBy === undefined
        ? "written by someone else after this resource's last write"
        : `taken over by another resource (claim ${decided.claimedBy})`;
    log("warning", "delete", location.documentId, `the status subtree was ${by}; it is kept as it is (nothing was cleared)`);
  }
  return { outcome: decided.outcome, wrote };
}
