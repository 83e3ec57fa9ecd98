/**
 * Declares one ServiceProviderClusterIdentityStatus per cluster and the stack outputs a user
 * reads at a glance: keyed by cluster name, the ARM ID inside.
 */
import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import { ServiceProviderClusterIdentityStatus } from "../resources";
import { engineOutput, programValue } from "../resources/serviceProviderClusterIdentityStatus";
import type { ConvertedOutput } from "../resources/serviceProviderClusterIdentityStatus";
import type { HalfName, PassFailure } from "../resources";
import type { ClusterDeclaration } from "./fleet";
import type { HeldCluster } from "./stackState";
import { joinOutputs } from "./outputJoin";
import { goToLower } from "../resources/core/goStrings";
import { statusCounts } from "../resources/core/outputsStatus";

/**
 * One half of a cluster's status in the `clusters` output. `state` is `failed` when the last pass
 * failed this half (the IDs it kept stay counted) or an identity's last lookup failed, `skipped`
 * when the half was not looked at, else `ok`.
 */
export interface HalfSummary {
  readonly state: "ok" | "failed" | "skipped";
  readonly identities: number;
  /** When the next update asks Azure about this half even without a change. */
  readonly nextRecheck: string | null;
}

/** Per cluster, under its name: the ARM ID, each half and, when the last pass failed, its cause. */
export interface ClusterSummary {
  readonly id: string;
  readonly dataPlaneOperators: HalfSummary & { readonly resolved: number; readonly notFound: number; readonly failed: number };
  readonly msiIdentities: HalfSummary;
  /** The cause of the last create or update's failure, when it failed (the run report has the whole message). */
  readonly failure?: string;
  /** Why the cluster was skipped (it is being deleted), when it was. */
  readonly skipped?: string;
  /** What the last refresh found changed outside Pulumi, when it found anything. */
  readonly drift?: readonly string[];
}

type ResourceOutputs = Pick<ServiceProviderClusterIdentityStatus, "status" | "msiStatus" | "skippedReason" | "msiSkippedReason" | "drift" | "failure">;

/** A cluster's summary from its resource's outputs. Pure. */
export function clusterSummary(
  id: string,
  outputs: { [Key in keyof ResourceOutputs]: ResourceOutputs[Key] extends pulumi.Output<infer Value> ? Value : never },
): ClusterSummary {
  const { status, msiStatus, skippedReason, msiSkippedReason, drift, failure } = outputs;
  const counts = statusCounts(status);
  const state = (half: HalfName, skipped: boolean, failedLookups: number): HalfSummary["state"] =>
    failure?.halves.includes(half) === true || failedLookups > 0 ? "failed" : skipped ? "skipped" : "ok";
  const skipped = skippedReason !== null && skippedReason !== undefined;
  return {
    id,
    dataPlaneOperators: {
      state: state("dataPlaneOperators", skipped, counts.failedCount),
      identities: counts.identityCount,
      resolved: counts.resolvedCount,
      notFound: counts.notFoundCount,
      failed: counts.failedCount,
      nextRecheck: status.earliestRecheckTime ?? null,
    },
    msiIdentities: {
      state: state("msiIdentities", skipped || (msiSkippedReason !== null && msiSkippedReason !== undefined), 0),
      identities: msiStatus.identityCount,
      nextRecheck: msiStatus.earliestRecheckTime ?? null,
    },
    ...(failure === null || failure === undefined ? {} : { failure: failure.cause }),
    ...(skipped ? { skipped: skippedReason } : {}),
    ...(drift === undefined || drift === null || drift.length === 0 ? {} : { drift }),
  };
}

/**
 * One line per cause of the clusters whose last create or update failed, naming their resources as the
 * engine heads their errors (the first `listed`). The cause itself is not repeated: each cluster's own
 * error, under its resource, states it whole, and a line points at the first cluster's. Pure.
 */
export function failureLines(summary: Readonly<Record<string, ClusterSummary>>, listed = 10): string[] {
  const byCause = new Map<string, string[]>();
  for (const cluster of Object.values(summary)) {
    if (cluster.failure !== undefined) byCause.set(cluster.failure, [...(byCause.get(cluster.failure) ?? []), resourceNameFor(cluster.id)]);
  }
  return [...byCause.values()]
    .sort((left, right) => right.length - left.length)
    .map((names) => {
      const more = names.length > listed ? ` and ${names.length - listed} more` : "";
      const head =
        names.length === 1
          ? "1 cluster failed, its cause stated in its error"
          : `${names.length} clusters failed with one cause, stated in the error of ${names[0]}`;
      return `${head}: ${names.slice(0, listed).join(", ")}${more}`;
    });
}

/**
 * A stable unique name: the cluster name plus a hash of its ARM ID, for resources declared per
 * cluster whose names must not collide across resource groups and subscriptions
 * (examples/azure-native names each cluster's identities with it).
 */
export function hashedResourceNameFor(clusterResourceId: string): string {
  const name = clusterResourceId.split("/").pop() ?? "cluster";
  const hash = createHash("sha256").update(clusterResourceId.toLowerCase()).digest("hex").slice(0, 8);
  return `${name.toLowerCase()}-${hash}`;
}

function idParts(clusterResourceId: string): { subscription: string; resourceGroup: string; name: string } {
  const match = /^\/subscriptions\/([^/]+)\/resourceGroups\/([^/]+)\/.*\/([^/]+)$/i.exec(clusterResourceId);
  return match === null
    ? { subscription: "", resourceGroup: "", name: clusterResourceId }
    : { subscription: match[1], resourceGroup: match[2], name: match[3] };
}

/**
 * The resource name of a cluster's status: `<subscription>/<resourceGroup>/<name>` of its ID,
 * lowercased as upstream lowercases IDs (Go's rules). A function of the cluster ID alone, so that
 * adding or removing other clusters never renames a cluster's resource: a renamed resource is a
 * new one for the engine, created beside the old, and the old one's delete would touch the subtree
 * the new one stands on. The engine's progress lines name the cluster, its group and subscription.
 */
export function resourceNameFor(clusterResourceId: string): string {
  const { subscription, resourceGroup, name } = idParts(clusterResourceId);
  return goToLower(subscription === "" ? clusterResourceId : `${subscription}/${resourceGroup}/${name}`);
}

/**
 * The engine's aliases for each declared cluster whose resource the stack's last saved state holds
 * under another name (written by a version that named resources otherwise, or by a program of the
 * user's that names them its own way): the old name becomes a rename the engine knows, so nothing
 * is created or deleted. Matched by the cluster ID each old resource's outputs record, never by
 * name alone: two declared clusters never alias one old resource, and a removed cluster's old
 * resource is never taken for a new cluster's. One old resource per cluster (the first by name)
 * when the state somehow holds two.
 */
export function aliasesFor(clusterResourceIds: readonly string[], held: readonly HeldCluster[]): Map<string, string> {
  const heldByCluster = new Map<string, string>();
  for (const cluster of held) {
    const key = cluster.clusterResourceId === undefined ? undefined : goToLower(cluster.clusterResourceId);
    if (key !== undefined && !heldByCluster.has(key)) heldByCluster.set(key, cluster.name);
  }
  const aliases = new Map<string, string>();
  for (const id of clusterResourceIds) {
    const oldName = heldByCluster.get(goToLower(id));
    if (oldName !== undefined && oldName !== resourceNameFor(id)) aliases.set(id, oldName);
  }
  return aliases;
}

/**
 * A readable, unique key per cluster for the `clusters` stack output (and the program's drift
 * warnings): the cluster name; `<resourceGroup>/<name>` when two clusters share a name;
 * `<subscription>/<resourceGroup>/<name>` when that still collides. Unlike the resource name it
 * depends on the other clusters listed: it is a label, not an identity.
 * @throws Error when a cluster is listed twice.
 */
export function clusterKeys(clusterResourceIds: readonly string[]): Map<string, string> {
  const seen = new Set<string>();
  for (const id of clusterResourceIds) {
    if (seen.has(id.toLowerCase())) {
      throw new Error(`cluster ${id} is listed twice in the clusters config: remove one entry; nothing was declared or written`);
    }
    seen.add(id.toLowerCase());
  }
  const candidates: Array<(id: string) => string> = [
    (id) => idParts(id).name,
    (id) => `${idParts(id).resourceGroup}/${idParts(id).name}`,
    (id) => `${idParts(id).subscription}/${idParts(id).resourceGroup}/${idParts(id).name}`,
    (id) => id,
  ];
  const keys = new Map<string, string>();
  const counts = candidates.map((candidate) => {
    const count = new Map<string, number>();
    for (const id of clusterResourceIds) count.set(candidate(id).toLowerCase(), (count.get(candidate(id).toLowerCase()) ?? 0) + 1);
    return count;
  });
  for (const id of clusterResourceIds) {
    const level = candidates.findIndex((candidate, index) => counts[index].get(candidate(id).toLowerCase()) === 1);
    keys.set(id, candidates[level === -1 ? candidates.length - 1 : level](id));
  }
  return keys;
}

/**
 * Clusters declared between two returns to the event loop (see {@link declareInBatches}): the
 * engine starts its first steps while the rest of a large fleet is still being declared, not after
 * the whole declaration (docs/performance.md).
 */
export const declarationBatchSize = 50;

/** Resolves after the event loop has run once: timers, I/O and the gRPC writes queued so far. */
function nextTurnOfEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Calls `declare` for every item in order, returning to the event loop after every `batchSize`
 * items. Declaring a resource only queues its registration: the SDK prepares it in promise
 * callbacks and sends it to the engine when the event loop next does I/O. A loop that declares
 * thousands of resources at once keeps the engine waiting for all of them before its first step
 * (docs/performance.md, "The program"); in batches, the engine and the provider work
 * while the program goes on declaring. The order of declarations does not change.
 */
export async function declareInBatches<Item, Declared>(
  items: readonly Item[],
  declare: (item: Item, index: number) => Declared,
  batchSize: number = declarationBatchSize,
): Promise<Declared[]> {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`batchSize must be a whole number of at least 1, got ${batchSize}`);
  }
  const declared: Declared[] = [];
  for (let index = 0; index < items.length; index += 1) {
    if (index > 0 && index % batchSize === 0) {
      await nextTurnOfEventLoop();
    }
    declared.push(declare(items[index], index));
  }
  return declared;
}

/** The converted outputs a cluster's summary reads, in the order of the join; then `failure`. */
const converted: readonly ConvertedOutput[] = ["status", "msiStatus", "skippedReason", "msiSkippedReason", "drift"];
const fieldCount = converted.length + 1;

/**
 * Declares the fleet in batches ({@link declareInBatches}), each cluster's resource named
 * {@link resourceNameFor} and aliased to the name the stack holds it under when that differs
 * ({@link aliasesFor}, from `held`); resolves to the resources and the stack outputs once all are
 * declared. A duplicate cluster is refused before anything is declared. An empty fleet declares
 * nothing; whether it may is the caller's decision (program/emptyFleet.ts, program/clusterRemovals.ts).
 */
export async function declareFleet(
  clusters: readonly ClusterDeclaration[],
  batchSize: number = declarationBatchSize,
  held: readonly HeldCluster[] = [],
): Promise<{
  resources: ServiceProviderClusterIdentityStatus[];
  outputs: pulumi.Output<Record<string, ClusterSummary>>;
}> {
  const keys = clusterKeys(clusters.map((cluster) => cluster.clusterResourceId));
  const aliases = aliasesFor(
    clusters.map((cluster) => cluster.clusterResourceId),
    held,
  );
  const resources = await declareInBatches(
    clusters,
    (cluster) => {
      const oldName = aliases.get(cluster.clusterResourceId);
      return new ServiceProviderClusterIdentityStatus(
        resourceNameFor(cluster.clusterResourceId),
        cluster,
        oldName === undefined ? undefined : { aliases: [{ name: oldName }] },
      );
    },
    batchSize,
  );
  // A failed pass's outputs reach the program too (a partial failure, with --continue-on-error), so a
  // failed cluster says failed here. One join over the fleet's outputs as the engine gave them
  // (program/outputJoin.ts, not pulumi.all's two Outputs per element), converted inside it: no Output
  // per cluster beyond the SDK's own (docs/performance.md, "The program").
  const outputs = joinOutputs(
    resources.flatMap((resource) => [...converted.map((name) => engineOutput(resource, name)), resource.failure as pulumi.Output<unknown>]),
  ).apply((values) =>
    Object.fromEntries(
      resources.map((resource, index): [string, ClusterSummary] => {
        const [status, msiStatus, skippedReason, msiSkippedReason, drift, failure] = values.slice(index * fieldCount, (index + 1) * fieldCount);
        const id = clusters[index].clusterResourceId;
        const key = keys.get(id) ?? id;
        const summary = clusterSummary(id, {
          status: programValue("status", status),
          msiStatus: programValue("msiStatus", msiStatus),
          skippedReason: programValue("skippedReason", skippedReason),
          msiSkippedReason: programValue("msiSkippedReason", msiSkippedReason),
          drift: programValue("drift", drift),
          failure: failure as PassFailure | undefined,
        });
        // A refresh run with the program (`refresh --run-program`, the wrapper's default) says in its
        // normal output which cluster and identity drifted, without --diff.
        if (summary.drift !== undefined) {
          void pulumi.log.warn(`${key}: changed outside Pulumi, \`pulumi up\` restores it: ${summary.drift.join("; ")}`, resource);
        }
        return [key, summary];
      }),
    ),
  );
  // One line per cause under the stack, whichever CLI runs the update, pointing at the clusters' own errors.
  outputs.apply((summary) => failureLines(summary).forEach((line) => void pulumi.log.warn(line)));
  return { resources, outputs };
}
