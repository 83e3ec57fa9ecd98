/**
 * Reliability through the real engine: reconcile passes of `pulumi up --refresh` with faults,
 * checked in Cosmos; a `pulumi refresh --run-program` with a cosmosContainer that does not exist,
 * which must fail naming it and keep every resource in state; a scan of everything the engine
 * printed and stored for secrets; and `up` killed with SIGKILL (CLI and provider host) mid-run,
 * recovered as docs/reliability.md ("Recovering an interrupted run") documents, converging with
 * nothing lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReliabilitySandbox } from "../../bench/reliability/reliabilitySandbox";
import type { EngineSampleModule, InterruptedScenarioModule, ReliabilitySandboxModule } from "./reliabilityHelpers";
import { reliabilityModule } from "./reliabilityHelpers";

let reliability: ReliabilitySandbox;

beforeAll(async () => {
  reliability = await reliabilityModule<ReliabilitySandboxModule>("reliabilitySandbox").startReliabilitySandbox("test-engine");
});

afterAll(async () => {
  await reliability?.stop();
});

describe("the hook under the real engine with injected faults", () => {
  it("keeps every invariant in Cosmos, keeps state whole through a refresh with a wrong container, and leaks no secret into engine output, logs, state or history", async () => {
    const { runEngineSample } = reliabilityModule<EngineSampleModule>("engineSample");
    const figures = await runEngineSample(reliability, 5, 7);
    expect(figures.violations).toEqual([]);
    expect(figures.passes).toBe(5);
    expect(Object.values(figures.faultsInjected).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    // The scan saw real material: verbose engine logs with SDK request logging, and the checkpoint history.
    expect(figures.scannedCharacters["engine output and logs (stdout, stderr, verbose engine logs)"]).toBeGreaterThan(100_000);
    expect(figures.scannedCharacters["state, checkpoint history and backups"]).toBeGreaterThan(10_000);
    expect(figures.secretLeaks).toEqual([]);
    // Issue 28 item 2: the refresh failed naming the setting; state kept both resources, and an up with the right container converged.
    expect(figures.wrongContainerRefresh).toMatchObject({
      refreshFailed: true,
      resourcesBefore: 2,
      resourcesAfter: 2,
      resourcesAfterUp: 2,
      documentsUnchanged: true,
    });
    expect(figures.wrongContainerRefresh.message).toMatch(/^failed to read .*:cosmosContainer'/);
    expect(figures.wrongContainerRefresh.message).toContain(figures.wrongContainerRefresh.container);
    expect(figures.wrongContainerRefresh.upAfterwards).toMatch(/^succeeded /);
  });
});

describe("an interrupted pulumi up", () => {
  it("leaves a lock (and possibly pending creates) that blocks the next up; after recovery up converges and nothing is lost", async () => {
    const { runInterruptedScenario } = reliabilityModule<InterruptedScenarioModule>("interruptedScenario");
    const [create, update] = await runInterruptedScenario(reliability);
    for (const run of [create, update]) {
      expect(run?.killedCli).toBe(1);
      expect(run?.killedProviderHosts).toBe(1);
      expect(run?.lockFilesLeft).toBe(1);
      expect(run?.blockedBy).toMatch(/the stack is currently locked by 1 lock\(s\)/);
      expect(run?.recoverySteps[0]).toMatch(/removed 1 stale lock\(s\) with 'pulumi cancel'/);
      expect(run?.convergedResult).toMatch(/^succeeded /);
      expect(run?.followUpChanges).toEqual({ same: 4 });
      expect(run?.pendingOperationWarningAfterRecovery).toBe(false);
      expect(run?.violations).toEqual([]);
    }
    // Whether the killed run left pending creates depends on whether the engine had flushed its
    // checkpoint yet (it writes the file in batches); when it had, they are creates and recovery clears them.
    expect(
      create?.pendingOperations.every((operation) => operation.startsWith("creating ")),
      JSON.stringify(create),
    ).toBe(true);
    if ((create?.pendingOperations.length ?? 0) > 0) {
      expect(create?.recoverySteps[1]).toMatch(/cleared \d pending operation\(s\) with 'pulumi refresh --clear-pending-creates'/);
    }
  });
});
