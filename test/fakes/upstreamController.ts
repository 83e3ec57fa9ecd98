/**
 * A second writer that follows upstream's FetchDataPlaneOperatorsManagedIdentitiesInfo as
 * /work/shared/docs/upstream-behaviour.md §2 describes it (written from that description, not from
 * the hook's code, which it never imports): the desired set comes from the cluster document alone,
 * keys only are compared in the gate, the subtree is replaced whole, and a 412 drops the result.
 * It writes through the same DocumentStore seam (a patch of the subtree and upstream's
 * instanceVersion bump under If-Match stands in for its Replace), so a test can run it in turn with
 * the hook's pass on one document.
 */
import type { DocumentStore } from "../../resources/cosmos/documentStore";
import type { JsonObject, JsonValue } from "../../resources/core/json";
import { goLowerCase } from "../../sandbox/goLowerCase";

/** What ARM answers upstream for an identity: its IDs, or not found. */
export type UpstreamIdentityAnswer = { readonly clientId: string; readonly principalId: string } | "notFound";

/** What one upstream pass did. */
export type UpstreamPassOutcome = "noCluster" | "deleting" | "noServiceProviderCluster" | "nilIdentity" | "upToDate" | "wrote" | "unchanged" | "conflict";

function objectAt(value: JsonValue | undefined, path: readonly string[]): JsonObject | undefined {
  let current: JsonValue | undefined = value;
  for (const segment of path) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
    current = current[segment];
  }
  return typeof current === "object" && current !== null && !Array.isArray(current) ? current : undefined;
}

/** Upstream's resourceID: the ID re-parsed from the lowercased key, canonical segment names restored. */
function resourceIdFromKey(key: string): string {
  return key.replace("/resourcegroups/", "/resourceGroups/");
}

/**
 * Runs one SyncOnce for the cluster whose documents sit at `partitionKey` under the given ids.
 * @param identities - ARM's answer per identity key (lowercased ID); a key missing here is not found.
 */
export async function upstreamSyncOnce(options: {
  readonly store: DocumentStore;
  readonly partitionKey: string;
  readonly clusterDocumentId: string;
  readonly serviceProviderClusterDocumentId: string;
  readonly identities: Readonly<Record<string, UpstreamIdentityAnswer>>;
  readonly now: Date;
  readonly random: () => number;
}): Promise<UpstreamPassOutcome> {
  const { store, partitionKey } = options;
  // Step 1: the cluster, as the lister sees it (a soft-deleted document is not found).
  const cluster = await store.readDocument(partitionKey, options.clusterDocumentId);
  if (cluster === undefined || typeof cluster.document.deletionTimestamp === "string") return "noCluster";
  // Step 2: a deleting cluster is left alone.
  if (typeof objectAt(cluster.document, ["properties", "serviceProviderProperties"])?.deletionTimestamp === "string") return "deleting";
  // Step 3: the ServiceProviderCluster, never created here.
  const spc = await store.readDocument(partitionKey, options.serviceProviderClusterDocumentId);
  if (spc === undefined || typeof spc.document.deletionTimestamp === "string") return "noServiceProviderCluster";
  // Step 4: the desired set, keys only; an absent map is the empty set, a nil value an error.
  const operators =
    objectAt(cluster.document, ["properties", "customerProperties", "platform", "operatorsAuthentication", "userAssignedIdentities", "dataPlaneOperators"]) ??
    {};
  const desired = new Set<string>();
  for (const value of Object.values(operators)) {
    if (typeof value !== "string") return "nilIdentity";
    desired.add(goLowerCase(value));
  }
  // Step 5: the gate.
  const stored = objectAt(spc.document, ["properties", "status", "dataPlaneOperatorsManagedIdentities"]) ?? {};
  const storedKeys = Object.keys(objectAt(stored, ["identities"]) ?? {});
  const recheck = typeof stored.earliestRecheckTime === "string" ? Date.parse(stored.earliestRecheckTime) : undefined;
  const keysMatch = storedKeys.length === desired.size && storedKeys.every((key) => desired.has(key));
  if (keysMatch && recheck !== undefined && options.now.getTime() < recheck) return "upToDate";
  // Steps 6 to 11: a fresh subtree, one entry per desired key, the recheck time when nothing failed.
  const entries: Record<string, JsonObject> = {};
  for (const key of [...desired].sort()) {
    const answer = options.identities[key] ?? "notFound";
    entries[key] =
      answer === "notFound"
        ? { resourceID: resourceIdFromKey(key), retrievalError: `RESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound\n` }
        : { resourceID: resourceIdFromKey(key), clientId: answer.clientId, principalId: answer.principalId };
  }
  const hours = 12 + options.random() * 0.5 * 12;
  const earliestRecheckTime = new Date(Math.floor((options.now.getTime() + hours * 3_600_000) / 1000) * 1000).toISOString().replace(".000Z", "Z");
  const replacement: JsonObject = { ...(Object.keys(entries).length === 0 ? {} : { identities: entries }), earliestRecheckTime };
  // Step 12: the write gate, on the subtree alone (the keys and IDs here; times differ on every success).
  if (JSON.stringify(replacement) === JSON.stringify(stored)) return "unchanged";
  // Step 13: Replace with the cached etag; a 412 drops the result.
  const metadata = objectAt(spc.document, ["properties", "cosmosMetadata"]);
  const instanceVersion = typeof metadata?.instanceVersion === "number" ? metadata.instanceVersion : 1;
  try {
    await store.patchDocument(
      partitionKey,
      options.serviceProviderClusterDocumentId,
      [
        { op: "set", path: "/properties/status/dataPlaneOperatorsManagedIdentities", value: replacement },
        { op: "set", path: "/properties/cosmosMetadata/instanceVersion", value: instanceVersion + 1 },
      ],
      spc.etag,
    );
  } catch (error) {
    if ((error as { code?: unknown }).code === 412) return "conflict";
    throw error;
  }
  return "wrote";
}
