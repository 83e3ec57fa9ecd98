/**
 * Reliability of the provider itself (real implementation, real SDK clients over HTTPS, an
 * in-process sandbox): a 150-pass fault campaign checked against the invariants in Cosmos after
 * every pass (with refreshes, deletes that must write nothing, and settings that name a container
 * or database that does not exist), two concurrent writers plus a foreign writer, and the
 * bad-input catalogue. The full campaign (1000+ passes) is `npm run reliability`, which writes
 * docs/reliability.md.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReliabilitySandbox } from "../../bench/reliability/reliabilitySandbox";
import type { BadInputCatalogueModule, ConcurrentWritersModule, FaultCampaignModule, ReliabilitySandboxModule } from "./reliabilityHelpers";
import { reliabilityModule } from "./reliabilityHelpers";

let reliability: ReliabilitySandbox;

beforeAll(async () => {
  reliability = await reliabilityModule<ReliabilitySandboxModule>("reliabilitySandbox").startReliabilitySandbox("test-in-process");
});

afterAll(async () => {
  await reliability?.stop();
});

describe("the provider under injected faults", () => {
  it("keeps every invariant over 150 passes with ARM, Cosmos and token faults (and 6 with the ARM host down), refreshes, deletes and wrong settings, and never crashes", async () => {
    const { runFaultCampaign } = reliabilityModule<FaultCampaignModule>("faultCampaign");
    const figures = await runFaultCampaign(reliability, {
      lanePasses: 150,
      tokenPasses: 15,
      hostPasses: 6,
      deletes: 16,
      settingsRounds: 4,
      refreshShare: 0.25,
      lanes: 6,
      identitiesPerCluster: 3,
      faultProbability: 0.9,
      seed: 42,
    });
    expect(figures.violations).toEqual([]);
    expect(figures.violationCount).toBe(0);
    expect(figures.crashes).toBe(0);
    expect(figures.writesWithoutIfMatch).toBe(0);
    // 150 lane passes, a pass without faults before each of the 16 deletes and each of the 4
    // settings rounds, 6 host-fault and 15 token-fault passes.
    expect(figures.passes).toBe(191);
    // The campaign really met faults of every target and every outcome, so the checks had work.
    const fired = (prefix: string): number =>
      Object.entries(figures.faultsInjected)
        .filter(([name]) => name.startsWith(prefix))
        .reduce((sum, [, count]) => sum + count, 0);
    expect(fired("arm-")).toBeGreaterThan(50);
    expect(fired("cosmos-")).toBeGreaterThan(30);
    expect(fired("token-")).toBeGreaterThan(5);
    expect(figures.outcomes).toMatchObject({ succeeded: expect.any(Number) as unknown, crashed: 0 });
    expect(Math.min(figures.outcomes.succeeded, figures.outcomes.lookupFailed, figures.outcomes.writeFailed)).toBeGreaterThan(0);
    // Credential faults (token endpoint 500/401/400 on every request, ARM 401) ended passes before
    // any write, and the invariant "a global failure never changes the owned subtree" held for them.
    expect(figures.outcomes.globalFailure).toBeGreaterThan(0);
    // ARM host down (connection refused for all of ARM): every such pass ended as a global failure
    // (the campaign counts any other ending as a violation) with the owned subtree unchanged.
    expect(figures.globalFailuresByFault["arm-host-down"]).toBe(6);
    expect(figures.changes["identity rotated in ARM"]).toBeGreaterThan(20);
    // Issue 28: failed lookups that said nothing about the identity kept its stored IDs (the
    // invariants check that nothing else cleared any); a 404 still cleared them.
    expect(figures.storedIds.keptBesideError).toBeGreaterThan(0);
    expect(figures.violationsByInvariant.reduce((sum, count) => sum + count, 0)).toBe(0);
    // Every lookup of a pass timing out, or answering 503, ended passes as global failures, nothing written.
    expect((figures.globalFailuresByFault["arm-timeout-every-lookup"] ?? 0) + (figures.globalFailuresByFault["arm-503-every-lookup"] ?? 0)).toBeGreaterThan(0);
    // Another writer between our read and our write: the pass decided again on the re-read.
    expect((figures.faultsInjected["cosmos-412-foreign-complete-status"] ?? 0) + (figures.faultsInjected["cosmos-412-foreign-entry"] ?? 0)).toBeGreaterThan(0);
    // Deletes relinquish: each of the 16 succeeded and left the ServiceProviderCluster document exactly
    // as it was (etag included), plain (half of them with the cluster's documents gone), after another
    // writer's fresh status, or after a rename whose create, over the current status, wrote nothing;
    // handed outputs of every kind (as returned, with drift, with an old claim, unreadable, empty).
    expect(figures.deletes).toMatchObject({ plain: 6, clusterGone: 3, withOtherWriter: 5, renamed: 5, renameCreatesWroteNothing: 5, wroteNothing: 16 });
    expect(Object.keys(figures.deletes.byOutputs)).toHaveLength(5);
    // Refreshes kept every resource whose cluster documents exist (its ServiceProviderCluster
    // document alone deleted, too) and dropped those whose cluster was deleted; a wrong container,
    // database, or another container that exists failed every refresh and update, naming it, and
    // every delete with them succeeded writing nothing.
    expect(figures.refreshes.kept).toBeGreaterThan(10);
    expect(figures.refreshes.dropped).toBeGreaterThan(0);
    expect(figures.changes["ServiceProviderCluster document deleted before a refresh"]).toBeGreaterThan(0);
    expect(figures.settingsOperations).toEqual({ run: 8, failedNamingSetting: 8, deletes: 4, deletesWroteNothing: 4 });
  });
});

describe("cluster mode (clusterServiceManagedIdentity over a per-cluster sandbox)", () => {
  it("a failure aimed at one cluster (its data plane answer, its SMI's token or role) changes nothing of another cluster, and a first-party refusal writes nothing anywhere", async () => {
    type ClusterModeModule = typeof import("../../bench/reliability/clusterModeCampaign");
    const { startClusterModeSandbox, runClusterModeCampaign } = reliabilityModule<ClusterModeModule>("clusterModeCampaign");
    const target = await startClusterModeSandbox("test-in-process");
    try {
      const figures = await runClusterModeCampaign(target, {
        runs: 8,
        clusters: 3,
        identitiesPerCluster: 2,
        clusterFaultShare: 0.8,
        runFaultShare: 0.2,
        laneFaultShare: 0,
        only: [
          "dataplane-404",
          "dataplane-no-explicit-identities",
          "dataplane-unusable-certificate",
          "smi-token-refused",
          "smi-role-removed-one-identity",
          "dataplane-msi-request-503-persistent",
          "first-party-refused",
        ],
        seed: 26,
      });
      expect(figures.violations).toEqual([]);
      expect(figures.violationCount).toBe(0);
      expect(figures.crashes).toBe(0);
      // Every other cluster of a run with a cluster fault was compared with a fault-free rerun of it, and none differed.
      expect(figures.isolation.compared).toBeGreaterThan(5);
      expect(figures.isolation.differed).toBe(0);
      // Each fault fired, aimed at one cluster, and its target ended as the fault says: a data plane failure as a
      // ClusterCredentialError, the SMI refused before any write, a 403 to the cluster's own SMI clearing IDs, the MSI
      // half's failed request keeping that half as it was.
      expect(figures.outcomes.clusterFailure).toBeGreaterThan(0);
      for (const kind of [
        "dataplane-404",
        "dataplane-no-explicit-identities",
        "dataplane-unusable-certificate",
        "smi-token-refused",
        "smi-role-removed-one-identity",
        "dataplane-msi-request-503-persistent",
      ]) {
        expect(figures.endedAsExpected[kind], kind).toBeGreaterThan(0);
      }
      // A refused first-party credential: every pass of the run a global failure, nothing written anywhere.
      const refused = figures.runFaultPasses["first-party-refused"];
      expect(refused?.nothingWritten).toBeGreaterThan(0);
      expect(refused?.nothingWrittenAsExpected).toBe(refused?.nothingWritten);
    } finally {
      await target.stop();
    }
  });
});

describe("concurrent writers on one document", () => {
  it("lose no update, stay within maxWriteAttempts, and fail clearly when retries run out", async () => {
    const { runConcurrentWriters } = reliabilityModule<ConcurrentWritersModule>("concurrentWriters");
    const figures = await runConcurrentWriters(reliability, 12);
    expect(figures.violations).toEqual([]);
    expect(figures.lostForeignEdits).toBe(0);
    expect(figures.thirdWriterEdits).toBe(36);
    expect(figures.preconditionFailures).toBeGreaterThan(0);
    expect(figures.maxProviderPatchesPerRound).toBeLessThanOrEqual(figures.patchBoundPerRound);
    expect(figures.exhaustedMessage).toMatch(
      /^PreconditionFailed \(HTTP 412\): .* after 4 attempts \(the document kept changing between read and write\), writing the ServiceProviderCluster document\. Cluster \S+: nothing was written\. \[ServiceProviderCluster document [0-9a-f-]{36}\]$/,
    );
    expect(figures.exhaustedLeftSubtreeUnchanged).toBe(true);
  });
});

describe("bad input", () => {
  it("gets a message naming the field for each of 30+ malformed inputs, settings and documents, and writes nothing", async () => {
    const { runBadInputCatalogue } = reliabilityModule<BadInputCatalogueModule>("badInputCatalogue");
    const rows = await runBadInputCatalogue(reliability);
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(rows.filter((row) => row.problems.length > 0).map((row) => `${row.name}: ${row.problems.join("; ")} — ${row.message}`)).toEqual([]);
    const refused = rows.filter((row) => !row.written.startsWith("accepted"));
    expect(refused.length).toBeGreaterThanOrEqual(25);
    for (const row of refused) expect(row.written, row.name).toBe("none");
    expect(rows.find((row) => row.name.includes("different casing"))?.message).toBe("accepted: 1 entry for 2 operators");
  });
});
