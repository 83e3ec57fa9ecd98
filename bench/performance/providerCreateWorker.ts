/**
 * Scenario 1's provider, in a Node process of its own (forked with an IPC channel by
 * providerScenario.ts), as the provider host runs it: the real implementation
 * (createManagedIdentityStatusProvider, settings from the ARO_HCP_* environment) and the same SDK
 * clients, against the sandbox in the benchmark process. The sandbox's own CPU (TLS, routing, JSON
 * of every answer) then runs on another thread, as Azure's does, instead of on the event loop
 * whose time is measured.
 *
 * It answers one {@link WorkerRequest} at a time: `creates` times `check` + `create` per cluster;
 * `floors` times n GETs through the process-wide limiter and (when asked) upstream-style sequential
 * GETs, through the very clients the provider used. The benchmark process reads the sandbox's
 * counters between requests.
 */
import type { ClusterDeclaration } from "../../program/fleet";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../../resources/core/azureResourceId";
import { readSettings } from "../../resources/core/settings";
import { sharedAzureAdapters } from "../../resources/provider/azureAdapters";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";

/** Creates, one cluster after another; the first is timed apart (token, TLS handshakes, SDK loading). */
export interface CreatesRequest {
  readonly kind: "creates";
  /** Each cluster's inputs, as the program declares them. */
  readonly clusters: readonly ClusterDeclaration[];
}

/** The floors, through the very clients the provider used, for these identities. */
export interface FloorsRequest {
  readonly kind: "floors";
  readonly identityResourceIds: readonly string[];
  readonly repetitions: number;
  /** Also time the GETs one after another, as upstream does. */
  readonly sequential: boolean;
}

/** What the benchmark process asks. */
export type WorkerRequest = CreatesRequest | FloorsRequest | { readonly kind: "exit" };

/** The worker's answers. */
export type WorkerReply =
  | { readonly kind: "creates"; readonly coldCreateTimeInMs: number; readonly createTimes: readonly number[] }
  | { readonly kind: "floors"; readonly concurrentTimes: readonly number[]; readonly sequentialTimes: readonly number[] }
  | { readonly kind: "error"; readonly message: string };

const provider = createManagedIdentityStatusProvider();
const adapters = sharedAzureAdapters(readSettings(undefined, process.env));

async function createFor(cluster: ClusterDeclaration): Promise<number> {
  const checked = await provider.check!({} as never, { ...cluster, dataPlaneOperators: { ...cluster.dataPlaneOperators } });
  if ((checked.failures ?? []).length > 0) {
    throw new Error(`check failed: ${JSON.stringify(checked.failures)}`);
  }
  const started = performance.now();
  await provider.create(checked.inputs!);
  return performance.now() - started;
}

async function creates(request: CreatesRequest): Promise<WorkerReply> {
  const [first, ...rest] = request.clusters;
  if (first === undefined) {
    throw new Error("no clusters to create");
  }
  const coldCreateTimeInMs = await createFor(first);
  const createTimes: number[] = [];
  for (const cluster of rest) {
    createTimes.push(await createFor(cluster));
  }
  return { kind: "creates", coldCreateTimeInMs, createTimes };
}

async function floors(request: FloorsRequest): Promise<WorkerReply> {
  const identityIds = request.identityResourceIds.map((resourceId) => {
    const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
    if (!parsed.ok) throw new TypeError(parsed.reason);
    return parsed.resourceId;
  });
  const get = (resourceId: (typeof identityIds)[number]) =>
    adapters.userAssignedIdentityReader.getUserAssignedIdentity(resourceId, { abortSignal: AbortSignal.timeout(30_000) });
  const concurrentTimes: number[] = [];
  const sequentialTimes: number[] = [];
  for (let repetition = 0; repetition < request.repetitions; repetition += 1) {
    let started = performance.now();
    await Promise.all(identityIds.map((resourceId) => adapters.limiter.run(() => get(resourceId))));
    concurrentTimes.push(performance.now() - started);
    if (request.sequential) {
      started = performance.now();
      for (const resourceId of identityIds) {
        await get(resourceId);
      }
      sequentialTimes.push(performance.now() - started);
    }
  }
  return { kind: "floors", concurrentTimes, sequentialTimes };
}

process.on("message", (message: WorkerRequest) => {
  if (message.kind === "exit") {
    // The keep-alive sockets would keep the process alive.
    process.exit(0);
  }
  (message.kind === "creates" ? creates(message) : floors(message)).then(
    (reply) => process.send!(reply),
    (error: unknown) => process.send!({ kind: "error", message: error instanceof Error ? error.message : String(error) } satisfies WorkerReply),
  );
});
