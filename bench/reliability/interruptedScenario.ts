/**
 * The interrupted-run scenario: `pulumi up` made slow with ARM latency, killed with SIGKILL (CLI
 * and provider host) while lookups are in flight, first during the creates and then during
 * updates; then recovery with {@link recoverInterruptedStack} and an `up` that must converge.
 */
import type { FleetClusterDescription } from "../../sandbox/seed";
import { clusterDeclaration } from "../clusterDeclaration";
import { openEngineStack } from "./engineStack";
import type { EngineStack } from "./engineStack";
import { engineProcesses, pendingOperations, recoverInterruptedStack, stackLocks } from "./interruptedRun";
import { checkSettledDocument } from "./invariants";
import type { Document, ReliabilitySandbox } from "./reliabilitySandbox";
import { foreignFields, makeRecheckDue, readServiceProviderCluster, seedLanes } from "./reliabilitySandbox";

/** What one interruption left and how recovery went. */
export interface InterruptionFigures {
  readonly phase: "create" | "update";
  readonly killedCli: number;
  readonly killedProviderHosts: number;
  readonly lockFilesLeft: number;
  readonly pendingOperations: readonly string[];
  /** The error of an `up` attempted before recovery. */
  readonly blockedBy: string;
  readonly recoverySteps: readonly string[];
  readonly convergedResult: string;
  /** Changes reported by one more `up` after convergence (only `same` expected). */
  readonly followUpChanges: Record<string, number>;
  readonly pendingOperationWarningAfterRecovery: boolean;
  readonly violations: readonly string[];
}

async function sleep(durationInMs: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, durationInMs));
}

/** Starts `up`, kills the engine mid-flight, and returns what the killed run left behind. */
async function killMidUp(reliability: ReliabilitySandbox, engineStack: EngineStack): Promise<{ cli: number; hosts: number }> {
  const { sandbox } = reliability;
  // Requests of an earlier run may still be held by the sandbox (a delay fault outlives its client).
  while (sandbox.statistics.snapshot().arm.inFlight > 0) await sleep(50);
  sandbox.faults.setLatency({ arm: 4000 });
  const requestsBefore = sandbox.statistics.snapshot().arm.getRequests;
  const running = engineStack.stack.up({ color: "never", refresh: true }).then(
    () => new Error("the interrupted up completed"),
    (error: unknown) => error,
  );
  const deadline = Date.now() + 120_000;
  // Kill while the provider is looking identities up (each lookup takes 4 s), a moment after the
  // first lookup arrived, so the engine has had time to checkpoint the operation in progress.
  while (sandbox.statistics.snapshot().arm.getRequests === requestsBefore && Date.now() < deadline) await sleep(50);
  await sleep(1500);
  const { cli, providerHosts } = engineProcesses();
  for (const child of [...cli, ...providerHosts]) {
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  const outcome = await running;
  sandbox.faults.setLatency({ arm: 0 });
  if (outcome instanceof Error && outcome.message === "the interrupted up completed") {
    throw outcome;
  }
  // Let the killed provider host's in-flight ARM requests drain (they are answered into a closed socket).
  while (sandbox.statistics.snapshot().arm.inFlight > 0) await sleep(50);
  return { cli: cli.length, hosts: providerHosts.length };
}

function convergenceViolations(reliability: ReliabilitySandbox, clusters: readonly FleetClusterDescription[], seeded: ReadonlyMap<string, Document>): string[] {
  return clusters.flatMap((cluster) => {
    const after = readServiceProviderCluster(reliability.sandbox, cluster);
    const desired = new Map(Object.values(cluster.dataPlaneOperators).map((id) => [id.toLowerCase(), id]));
    const expectedForeign = seeded.get(cluster.serviceProviderClusterDocumentId);
    return checkSettledDocument(
      after,
      { outcome: "succeeded", expectedForeign, desired, documentId: cluster.serviceProviderClusterDocumentId },
      reliability.sandbox.identities,
      reliability.secrets(),
    ).map((violation) => `${cluster.clusterResourceId.split("/").pop() ?? ""}: ${violation}`);
  });
}

async function interruptAndRecover(
  reliability: ReliabilitySandbox,
  engineStack: EngineStack,
  phase: "create" | "update",
  clusters: readonly FleetClusterDescription[],
  seeded: ReadonlyMap<string, Document>,
): Promise<InterruptionFigures> {
  const killed = await killMidUp(reliability, engineStack);
  const lockFilesLeft = stackLocks(engineStack.stateDirectory).length;
  const pending = await pendingOperations(engineStack);
  const blockedBy = await engineStack.stack.up({ color: "never" }).then(
    () => "nothing: the next up ran",
    (error: unknown) => (String(error).match(/error: [^\n]*/)?.[0] ?? String(error).slice(0, 200)).trim(),
  );
  const recovery = await recoverInterruptedStack(engineStack);
  const converged = await engineStack.stack.up({ color: "never", refresh: true });
  const followUp = await engineStack.stack.up({ color: "never" });
  return {
    phase,
    killedCli: killed.cli,
    killedProviderHosts: killed.hosts,
    lockFilesLeft,
    pendingOperations: pending,
    blockedBy,
    recoverySteps: recovery.steps,
    convergedResult: `${converged.summary.result} ${JSON.stringify(converged.summary.resourceChanges)}`,
    followUpChanges: followUp.summary.resourceChanges ?? {},
    pendingOperationWarningAfterRecovery: /pending operations/.test(converged.stdout + followUp.stdout),
    violations: convergenceViolations(reliability, clusters, seeded),
  };
}

/** Runs both interruptions on a fresh stack of three clusters. */
export async function runInterruptedScenario(reliability: ReliabilitySandbox): Promise<InterruptionFigures[]> {
  const clusters = seedLanes(reliability.sandbox, "interrupted", 3, 2);
  const seeded = new Map<string, Document>();
  for (const cluster of clusters) {
    seeded.set(cluster.serviceProviderClusterDocumentId, foreignFields(readServiceProviderCluster(reliability.sandbox, cluster) ?? {}));
  }
  const engineStack = await openEngineStack(reliability, "interrupted", clusters.map(clusterDeclaration), { config: { lookupTimeoutSeconds: "30" } });
  const figures = [await interruptAndRecover(reliability, engineStack, "create", clusters, seeded)];
  for (const cluster of clusters) {
    reliability.sandbox.identities.rotate(Object.values(cluster.dataPlaneOperators)[0] ?? "");
    makeRecheckDue(reliability.sandbox, cluster);
  }
  figures.push(await interruptAndRecover(reliability, engineStack, "update", clusters, seeded));
  engineStack.remove();
  return figures;
}
