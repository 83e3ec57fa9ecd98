/**
 * Steps of one campaign pass that are not about faults: the changes made in ARM and Cosmos before
 * the pass (as the world changes between reconciles), and how a provider failure is classified.
 */
import { partialResultOf } from "../../resources/sync/syncManagedIdentityStatus";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { escapePointerToken, ownedSubtreePointer } from "./faultCatalogue";
import type { PassOutcome } from "./invariants";
import { ownedStatus, readServiceProviderCluster } from "./reliabilitySandbox";

/** One lane: a cluster reconciled pass after pass, with the outputs the engine would hold. */
export interface LaneState {
  readonly index: number;
  readonly cluster: FleetClusterDescription;
  /** The last outputs (state); undefined before the first successful create. */
  outputs: ProviderOutputs | undefined;
  /** Identities this lane deleted from ARM, to recreate later. */
  deletedIdentities: string[];
}

function count(changes: Record<string, number>, name: string): void {
  changes[name] = (changes[name] ?? 0) + 1;
}

/**
 * Changes the world before a pass: rotates an identity (new clientId/principalId, so a stale value
 * would show), deletes one from ARM or recreates one deleted earlier, edits a foreign field of the
 * document as another writer would, or adds a field this hook does not know inside the owned
 * subtree (beside `identities`, or in an entry, as upstream may add a `tenantId`), which every
 * later write must keep.
 */
export function mutateBeforePass(sandbox: Sandbox, lane: LaneState, random: () => number, passNumber: number, changes: Record<string, number>): void {
  const identities = Object.values(lane.cluster.dataPlaneOperators);
  const pick = (): string => identities[Math.floor(random() * identities.length)] ?? identities[0] ?? "";
  if (random() < 0.35) {
    const identity = pick();
    if (sandbox.identities.rotate(identity) !== undefined) count(changes, "identity rotated in ARM");
  }
  if (lane.deletedIdentities.length > 0 && random() < 0.5) {
    for (const identity of lane.deletedIdentities.splice(0)) sandbox.identities.create(identity);
    count(changes, "deleted identity recreated in ARM");
  } else if (random() < 0.06) {
    const identity = pick();
    if (sandbox.identities.delete(identity)) {
      lane.deletedIdentities.push(identity);
      count(changes, "identity deleted from ARM");
    }
  }
  if (random() < 0.15) {
    sandbox.documents.patch(lane.cluster.partitionKey, lane.cluster.serviceProviderClusterDocumentId, `/properties/reliabilityThirdWriter/pass-${passNumber}`, {
      editedAt: passNumber,
    });
    count(changes, "foreign field edited in Cosmos");
  }
  const entryKeys = Object.keys(ownedStatus(readServiceProviderCluster(sandbox, lane.cluster))?.identities ?? {});
  if (entryKeys.length > 0 && random() < 0.08) {
    const key = entryKeys[Math.floor(random() * entryKeys.length)] ?? entryKeys[0];
    const path = random() < 0.5 ? `${ownedSubtreePointer}/identities/${escapePointerToken(key)}/tenantId` : `${ownedSubtreePointer}/reliabilityFutureField`;
    sandbox.documents.patch(lane.cluster.partitionKey, lane.cluster.serviceProviderClusterDocumentId, path, `added before pass ${passNumber}`);
    count(changes, "field unknown to the hook added inside the owned subtree");
  }
}

/** How the engine would see a provider failure. */
export function classifyFailure(error: unknown): { outcome: PassOutcome; message: string; properties: ProviderOutputs | undefined } {
  const message = error instanceof Error ? error.message : String(error);
  const properties = (error as { properties?: unknown } | undefined)?.properties;
  const carried = typeof properties === "object" && properties !== null ? (properties as ProviderOutputs) : undefined;
  // The MSI half failed alone (the data plane operators' half was decided as usual): checked by the MSI invariant.
  if (error instanceof Error && error.name === "MsiIdentitiesError") {
    return { outcome: "msiFailed", message, properties: carried };
  }
  if (error instanceof Error && error.name === "AzureAccessError") {
    return { outcome: "globalFailure", message, properties: carried };
  }
  // The cluster's credential failed: nothing of the data plane operators' half was read, though the
  // MSI half, answered to the first party, may have been written beside it (carried in its result).
  if (error instanceof Error && error.name === "ClusterCredentialError") {
    return { outcome: "clusterFailure", message, properties: carried };
  }
  // A pass that wrote, then failed on some identities, carries its result (sync/syncManagedIdentityStatus.ts partialResultOf).
  if (error instanceof Error && partialResultOf(error) !== undefined) {
    return { outcome: "lookupFailed", message, properties: carried };
  }
  // Any other failure carries the outputs as they were with the failure beside them: the engine stores those.
  if (error instanceof Error && error.name === "CosmosDocumentError") {
    return { outcome: "writeFailed", message, properties: carried };
  }
  return { outcome: "crashed", message: `${error instanceof Error ? error.name : typeof error}: ${message}`, properties: undefined };
}

/** The status a pass that wrote reports with its failure (the engine records it in state): its JSON text. A failure that wrote nothing reports the state as it was. */
export function reportedStatusOf(error: unknown): string | undefined {
  if (partialResultOf(error) === undefined) return undefined;
  const status = (error as { properties?: { status?: unknown } } | undefined)?.properties?.status;
  return typeof status === "string" ? status : undefined;
}
