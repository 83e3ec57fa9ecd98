/**
 * The cluster-mode phase of the fault campaign: production's `clusterServiceManagedIdentity` mode
 * over a sandbox of its own in per-cluster mode, each cluster in its own tenant and subscription
 * and readable only by its own service managed identity (SMI), whose certificate credential the
 * Managed Identities data plane hands to the first-party application.
 *
 * Each run is one provider process (`pulumi up`): a provider with a credential cache of its own
 * reconciles every cluster side by side, each with its recheck made due after the world changed a
 * little. A run carries one of:
 *
 * - a cluster fault aimed at one cluster (clusterFaultKinds, in turn: its data plane answer, its SMI's
 *   token, its SMI's role assignments; or one of the process-mode lane faults, ARM or Cosmos, by
 *   weight), sometimes two;
 * - a run fault of the first-party credential (runFaultKinds, in turn), the run then split in two halves;
 * - nothing.
 *
 * Every pass is checked against the campaign's invariants (checkPass, with the cluster's own
 * credential scope). Then the isolation check: each other cluster's document is put back as it
 * was before the run and reconciled again, without any fault, by a provider of its own with the
 * same jitter; the document and the outputs of the faulted run must be exactly those of that
 * fault-free run (earliestRecheckTime within seconds, the two runs being seconds apart).
 */
import { watchUnhandledRejections } from "./unhandledRejections";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { projectDirectory } from "../../cli/engine";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import type { ProviderInputs } from "../../resources/provider/providerInputs";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { FaultRule } from "../../sandbox/faultInjector";
import { createSeededRandom } from "../../sandbox/faultInjector";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedTenantFleet } from "../../sandbox/seed";
import type { AppliedFault, ClusterFaultSpecification, FirstPartyCertificate, HalfExpectation, RunFaultSpecification } from "./clusterFaultCatalogue";
import { clusterFaultKinds, runFaultKinds } from "./clusterFaultCatalogue";
import type { FaultKindSpecification } from "./faultCatalogue";
import { laneFaultKinds, ownedSubtreePointer, pickWeighted } from "./faultCatalogue";
import type { PassOutcome } from "./invariants";
import { checkPass, firstDifference, invariantCatalogue, invariantOf } from "./invariants";
import { nonDefinitiveAnswersOf } from "./nonDefinitiveAnswers";
import type { LaneState } from "./passSteps";
import { classifyFailure, mutateBeforePass, reportedStatusOf } from "./passSteps";
import type { PlannedFault } from "./plannedFaults";
import { ownedSubtreeRaces, planFault, retireFault } from "./plannedFaults";
import type { Document, StatusProvider } from "./reliabilitySandbox";
import { foreignFields, inputsFor, makeRecheckDue, msiHalf, ownedStatus, readServiceProviderCluster, reliabilityConfig } from "./reliabilitySandbox";
import { sumOfCounts } from "../performance/statistics";

/** Size and shape of the phase. */
export interface ClusterModeOptions {
  /** Runs (provider processes), one after another. */
  readonly runs: number;
  /** Clusters of the fleet, each reconciled in every run. */
  readonly clusters: number;
  readonly identitiesPerCluster: number;
  /** Share of runs with a cluster fault; `runFaultShare` of them a run fault; the rest none. */
  readonly clusterFaultShare: number;
  readonly runFaultShare: number;
  /** Share of cluster faults that are the process-mode lane faults (ARM, Cosmos) rather than credential faults. */
  readonly laneFaultShare: number;
  /** Share of cluster-fault runs whose target gets a second fault. */
  readonly secondFaultShare?: number;
  /** Only these fault kinds, by name (all when omitted). */
  readonly only?: readonly string[];
  readonly seed: number;
}

/** What the phase measured. */
export interface ClusterModeFigures {
  runs: number;
  passes: number;
  /** Fault-free reruns of the other clusters, for the isolation check. */
  referencePasses: number;
  outcomes: Record<PassOutcome, number>;
  faultsPlanned: Record<string, number>;
  faultsInjected: Record<string, number>;
  /** Target passes with this fault alone (fired), and those that ended as the fault's expectation says. */
  singleFaultPasses: Record<string, number>;
  endedAsExpected: Record<string, number>;
  /** Run faults: runs, and passes by what their half must end as, with those that ended so. */
  runFaultPasses: Record<
    string,
    {
      runs: number;
      nothingWritten: number;
      nothingWrittenAsExpected: number;
      faultFree: number;
      faultFreeAsExpected: number;
      nextRun: number;
      nextRunAsExpected: number;
    }
  >;
  /** Other clusters compared with a fault-free run, and how many differed. */
  isolation: { compared: number; differed: number; comparedAfterCredentialFaults: number };
  changes: Record<string, number>;
  /** Counted by the sandbox over the phase. */
  dataPlaneRequests: number;
  dataPlaneResponsesByStatus: Record<string, number>;
  entraTokensIssued: number;
  entraErrorsByCode: Record<string, number>;
  armForbidden: number;
  violationCount: number;
  violationsByInvariant: number[];
  violations: string[];
  crashes: number;
  writesWithoutIfMatch: number;
  cosmosDocumentWrites: number;
  durationInMs: number;
}

/** A per-cluster sandbox and the settings of production's credential mode against it. */
export interface ClusterModeSandbox {
  readonly sandbox: Sandbox;
  readonly config: Readonly<Record<string, string>>;
  secrets(): string[];
  stop(): Promise<void>;
}

/**
 * Starts a per-cluster sandbox. Nothing is exported to the process environment (the phase may
 * share the process with a process-mode sandbox): the Cosmos key goes in the provider settings.
 */
export async function startClusterModeSandbox(name: string): Promise<ClusterModeSandbox> {
  const sandbox = await startSandbox({
    perClusterCredentials: true,
    certificateDirectory: join(projectDirectory, ".sandbox", `reliability-cluster-${name}-${process.pid}`),
  });
  const { config } = settingsForRunningSandbox(sandbox);
  const privateKeyLines = async (): Promise<string[]> => {
    const bundle = await readFile(sandbox.credentialChain.firstPartyApplication.certificateBundlePath, "utf8").catch(() => "");
    const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----\s+([A-Za-z0-9+/=]{40,})/.exec(bundle);
    return key?.[1] === undefined ? [] : [key[1]];
  };
  const firstPartyKey = await privateKeyLines();
  return {
    sandbox,
    config: { ...config, ...reliabilityConfig, cosmosKey: sandbox.cosmosKey },
    secrets: () => [sandbox.cosmosKey, sandbox.identityHeader, sandbox.adminToken, ...firstPartyKey, ...sandbox.tokens.issuedTokens()],
    stop: () => sandbox.stop(),
  };
}

/** Text a message must never carry: a certificate or key (PEM, or base64 DER as it starts). */
const credentialMaterial = /BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)|MII[A-Za-z0-9+/]{40}/;

/** The jitter every provider of the phase uses, so a faulted run and its fault-free rerun decide alike. */
const fixedJitter = (): number => 0.5;

/** Recheck times more than this far apart are a difference (the two runs are seconds apart). */
const recheckToleranceInMs = 30_000;

/** How one pass ended. */
interface PassResult {
  readonly outcome: PassOutcome;
  readonly reported: string | undefined;
  readonly errorMessage: string | undefined;
  /** What the engine keeps in state afterwards. */
  readonly outputs: ProviderOutputs | undefined;
}

interface ClusterLane extends LaneState {
  readonly cluster: FleetClusterDescription;
}

/** Runs the phase on a running per-cluster sandbox. */
export async function runClusterModeCampaign(target: ClusterModeSandbox, options: ClusterModeOptions): Promise<ClusterModeFigures> {
  const { sandbox } = target;
  const started = Date.now();
  const figures: ClusterModeFigures = {
    runs: 0,
    passes: 0,
    referencePasses: 0,
    outcomes: { succeeded: 0, lookupFailed: 0, writeFailed: 0, globalFailure: 0, clusterFailure: 0, msiFailed: 0, crashed: 0 },
    faultsPlanned: {},
    faultsInjected: {},
    singleFaultPasses: {},
    endedAsExpected: {},
    runFaultPasses: {},
    isolation: { compared: 0, differed: 0, comparedAfterCredentialFaults: 0 },
    changes: {},
    dataPlaneRequests: 0,
    dataPlaneResponsesByStatus: {},
    entraTokensIssued: 0,
    entraErrorsByCode: {},
    armForbidden: 0,
    violationCount: 0,
    violationsByInvariant: invariantCatalogue.map(() => 0),
    violations: [],
    crashes: 0,
    writesWithoutIfMatch: 0,
    cosmosDocumentWrites: 0,
    durationInMs: 0,
  };
  const { unexpected, stop: stopWatching } = watchUnhandledRejections();
  const statisticsBefore = sandbox.statistics.snapshot();
  const random = createSeededRandom(options.seed);
  const limits = { maxWriteAttempts: Number(target.config.maxWriteAttempts), lookupTimeoutInMs: Number(target.config.lookupTimeoutSeconds) * 1000 };
  const only = options.only === undefined ? undefined : new Set(options.only);
  const allowed = <T extends { readonly name: string }>(kinds: readonly T[]): T[] => kinds.filter((kind) => only === undefined || only.has(kind.name));
  const credentialKinds = allowed(clusterFaultKinds);
  const laneKinds = allowed(laneFaultKinds);
  const runKinds = allowed(runFaultKinds);
  const lanes: ClusterLane[] = seedTenantFleet(sandbox, { clusters: options.clusters, identitiesPerCluster: options.identitiesPerCluster }).map(
    (cluster, index) => ({ index, cluster, outputs: undefined, deletedIdentities: [] }),
  );
  // The serial number of the first-party certificate in use: a rotation tells it (the first one was issued at start).
  const firstParty: FirstPartyCertificate = {
    serialNumber: (await sandbox.credentials.rotateFilePrincipal("firstPartyApplication")).serialNumber,
  };
  const isolationIndex = invariantCatalogue.findIndex((invariant) => invariant.key === "clusterIsolation");
  const tally = (counts: Record<string, number>, name: string, amount = 1): void => {
    counts[name] = (counts[name] ?? 0) + amount;
  };
  const record = (where: string, violations: readonly string[]): void => {
    figures.violationCount += violations.length;
    for (const violation of violations) {
      const index = /^cluster isolation|fault-free run/.test(violation) ? isolationIndex : invariantOf(violation);
      figures.violationsByInvariant[index] += 1;
    }
    for (const violation of violations.slice(0, 3)) if (figures.violations.length < 25) figures.violations.push(`${where}: ${violation}`);
  };
  const nameOf = (lane: ClusterLane): string => lane.cluster.clusterResourceId.split("/").pop() ?? "";

  /** A provider as one `pulumi up` process has it: a credential cache of its own (a settings set of its own). */
  const freshProvider = (): StatusProvider => {
    const settings: Record<string, string> = { ...target.config, managedIdentityClientId: randomUUID() };
    return createManagedIdentityStatusProvider({ config: { get: (key) => settings[key] }, random: fixedJitter });
  };

  const execute = async (provider: StatusProvider, lane: ClusterLane, inputs: ProviderInputs, outputs: ProviderOutputs | undefined): Promise<PassResult> => {
    try {
      const result =
        outputs === undefined
          ? (await provider.create(inputs)).outs
          : (await provider.update!(lane.cluster.serviceProviderClusterDocumentId, outputs, inputs)).outs;
      return { outcome: "succeeded", reported: result?.status, errorMessage: undefined, outputs: result };
    } catch (error) {
      const failure = classifyFailure(error);
      return { outcome: failure.outcome, reported: reportedStatusOf(error), errorMessage: failure.message, outputs: failure.properties ?? outputs };
    }
  };

  /** Checks one pass with the campaign's invariants, in the cluster's own credential scope. */
  const judge = (
    lane: ClusterLane,
    result: PassResult,
    expectedForeign: Document | undefined,
    races: ReturnType<typeof ownedSubtreeRaces>,
    deletedDuringPass: boolean,
    firedRules: readonly FaultRule[] = [],
  ): string[] => {
    const desired = new Map(Object.values(lane.cluster.dataPlaneOperators).map((id) => [id.toLowerCase(), id]));
    const violations = checkPass(
      {
        outcome: result.outcome,
        before: races.before,
        after: readServiceProviderCluster(sandbox, lane.cluster),
        expectedForeign,
        desired,
        reportedStatus: result.reported,
        deletedDuringPass,
        errorMessage: result.errorMessage,
        documentId: lane.cluster.serviceProviderClusterDocumentId,
        otherWriterEntries: races.entries,
        otherWriterRecordedStatus: races.wholeSubtree,
        credentialScope: "cluster",
        nonDefinitiveAnswers: nonDefinitiveAnswersOf(firedRules, desired, (id) => sandbox.identities.get(id) !== undefined),
        clusterResourceId: lane.cluster.clusterResourceId,
      },
      sandbox.identities,
      target.secrets(),
    );
    if (result.errorMessage !== undefined && credentialMaterial.test(result.errorMessage)) {
      violations.push("the error message carries certificate or key material");
    }
    return violations;
  };

  /**
   * The isolation check: puts the cluster's document back as it was before the run, reconciles it
   * again without any fault, and compares. Leaves the rerun's document and outputs in place (the
   * same as the faulted run's when nothing differs).
   */
  const compareWithFaultFreeRun = async (
    reference: StatusProvider,
    lane: ClusterLane,
    inputs: ProviderInputs,
    outputsBefore: ProviderOutputs | undefined,
    before: Document,
    faulted: PassResult,
    because: string,
  ): Promise<string[]> => {
    const faultedDocument = readServiceProviderCluster(sandbox, lane.cluster);
    sandbox.documents.put(structuredClone(before));
    const rerun = await execute(reference, lane, inputs, outputsBefore);
    figures.referencePasses += 1;
    const rerunDocument = readServiceProviderCluster(sandbox, lane.cluster);
    lane.outputs = rerun.outputs;
    const differences: string[] = [];
    if (faulted.outcome !== rerun.outcome) {
      differences.push(`ended '${faulted.outcome}', a fault-free run '${rerun.outcome}' (${faulted.errorMessage ?? rerun.errorMessage ?? ""})`);
    }
    const documentDifference = comparableDifference(comparableDocument(faultedDocument), comparableDocument(rerunDocument));
    if (documentDifference !== undefined) differences.push(`its document differs: ${documentDifference}`);
    const outputsDifference = comparableDifference(comparableOutputs(faulted.outputs), comparableOutputs(rerun.outputs));
    if (outputsDifference !== undefined) differences.push(`the state returned for it differs: ${outputsDifference}`);
    return differences.map(
      (difference) => `cluster isolation: ${nameOf(lane)} ${because}: ${difference.length > 600 ? `${difference.slice(0, 600)}…` : difference}`,
    );
  };

  let credentialFaultTurn = 0;
  let runFaultTurn = 0;
  const runOne = async (runNumber: number): Promise<void> => {
    const provider = freshProvider();
    const passNumber = (lane: ClusterLane): number => runNumber * 1000 + lane.index;
    for (const lane of lanes) {
      mutateBeforePass(sandbox, lane, random, passNumber(lane), figures.changes);
      makeRecheckDue(sandbox, lane.cluster);
    }
    const befores = new Map(lanes.map((lane) => [lane, readServiceProviderCluster(sandbox, lane.cluster)]));
    const outputsBefore = new Map(lanes.map((lane) => [lane, lane.outputs]));
    const inputs = new Map(lanes.map((lane) => [lane, inputsFor(lane.cluster, random() < 0.3)]));
    const draw = random();
    const clusterFaultRun = draw < options.clusterFaultShare && credentialKinds.length + laneKinds.length > 0;
    const runFaultRun = !clusterFaultRun && draw < options.clusterFaultShare + options.runFaultShare && runKinds.length > 0;
    figures.runs += 1;

    if (runFaultRun) {
      // In turn, so that each kind runs as often as the others.
      await runWithRunFault(runNumber, provider, runKinds[runFaultTurn++ % runKinds.length], befores, outputsBefore, inputs);
      return;
    }

    // A cluster fault (or two) aimed at one cluster; none in a run without faults.
    const targetLane = lanes[Math.floor(random() * lanes.length)] ?? lanes[0];
    const identities = Object.values(targetLane.cluster.dataPlaneOperators);
    const pickIdentity = (): string => identities[Math.floor(random() * identities.length)] ?? identities[0] ?? "";
    const credentialFaults: Array<{ kind: ClusterFaultSpecification; applied: AppliedFault }> = [];
    const laneFaults: PlannedFault[] = [];
    if (clusterFaultRun) {
      const count = random() < (options.secondFaultShare ?? 0) ? 2 : 1;
      for (let index = 0; index < count; index += 1) {
        if (laneKinds.length > 0 && (credentialKinds.length === 0 || random() < options.laneFaultShare)) {
          const kind: FaultKindSpecification = pickWeighted(laneKinds, random);
          laneFaults.push(planFault(sandbox, kind, targetLane.cluster, pickIdentity(), passNumber(targetLane), limits));
          tally(figures.faultsPlanned, kind.name);
        } else {
          // In turn, so that each kind is aimed at a cluster as often as the others.
          const kind = credentialKinds[credentialFaultTurn++ % credentialKinds.length];
          credentialFaults.push({
            kind,
            applied: kind.apply({ sandbox, cluster: targetLane.cluster, identityId: pickIdentity(), lookupTimeoutInMs: limits.lookupTimeoutInMs }),
          });
          tally(figures.faultsPlanned, kind.name);
        }
      }
    }
    const results = new Map<ClusterLane, PassResult>();
    await Promise.all(
      lanes.map(async (lane) => {
        results.set(lane, await execute(provider, lane, inputs.get(lane)!, outputsBefore.get(lane)));
      }),
    );
    const firedRules: FaultRule[] = [];
    let deletedDuringPass = false;
    const expectedForeign = (() => {
      const before = befores.get(targetLane);
      return before === undefined ? undefined : foreignFields(before);
    })();
    for (const fault of laneFaults) {
      tally(figures.faultsInjected, fault.kind.name, fault.rule.triggered);
      firedRules.push(fault.rule, ...(fault.alongside === undefined ? [] : [fault.alongside]));
      if (fault.rule.kind === "deleteBeforeWrite" && fault.rule.triggered > 0) deletedDuringPass = true;
      const edit = fault.rule.foreignEdit;
      if (
        fault.rule.kind === "race" &&
        fault.rule.triggered > 0 &&
        edit !== undefined &&
        !edit.path.startsWith(ownedSubtreePointer) &&
        expectedForeign !== undefined
      ) {
        const properties = expectedForeign.properties as Record<string, Record<string, unknown>>;
        properties.reliabilityRaces = { ...properties.reliabilityRaces, [`pass-${passNumber(targetLane)}`]: edit.value };
      }
      retireFault(fault);
    }
    for (const { kind, applied } of credentialFaults) {
      tally(figures.faultsInjected, kind.name, applied.fired());
      applied.retire();
    }

    // Every pass against the campaign's invariants.
    for (const lane of lanes) {
      const result = results.get(lane)!;
      figures.passes += 1;
      figures.outcomes[result.outcome] += 1;
      if (result.outcome === "crashed") figures.crashes += 1;
      const before = befores.get(lane);
      const isTarget = lane === targetLane && (laneFaults.length > 0 || credentialFaults.length > 0);
      const races = isTarget ? ownedSubtreeRaces(before, firedRules) : ownedSubtreeRaces(before, []);
      const violations = judge(
        lane,
        result,
        isTarget ? expectedForeign : before === undefined ? undefined : foreignFields(before),
        races,
        isTarget && deletedDuringPass,
        isTarget ? [...firedRules, ...credentialFaults.flatMap(({ applied }) => applied.rules?.() ?? [])] : [],
      );
      if (isTarget) {
        violations.push(...targetExpectations(lane, result, laneFaults, credentialFaults, before));
      }
      lane.outputs = result.outputs;
      const faults = isTarget ? [...laneFaults.map(({ kind }) => kind.name), ...credentialFaults.map(({ kind }) => kind.name)].join("+") : "no fault";
      record(`cluster-mode run ${runNumber}, ${nameOf(lane)} (${faults})`, violations);
    }
    if (deletedDuringPass) {
      const before = befores.get(targetLane);
      if (before !== undefined) sandbox.documents.put(structuredClone(before));
      targetLane.outputs = undefined;
    }

    // Isolation: every other cluster against a fault-free run of its own.
    if (laneFaults.length + credentialFaults.length > 0) {
      const reference = freshProvider();
      const faultNames = [...laneFaults.map(({ kind }) => kind.name), ...credentialFaults.map(({ kind }) => kind.name)].join("+");
      const comparisons = lanes
        .filter((lane) => lane !== targetLane)
        .map(async (lane) => {
          const before = befores.get(lane);
          if (before === undefined) return;
          const violations = await compareWithFaultFreeRun(
            reference,
            lane,
            inputs.get(lane)!,
            outputsBefore.get(lane),
            before,
            results.get(lane)!,
            `after ${faultNames} aimed at ${nameOf(targetLane)}`,
          );
          figures.isolation.compared += 1;
          if (credentialFaults.length > 0) figures.isolation.comparedAfterCredentialFaults += 1;
          if (violations.length > 0) figures.isolation.differed += 1;
          record(`cluster-mode run ${runNumber}, isolation of ${nameOf(lane)}`, violations);
        });
      // A fault retried away: the target itself ends as a fault-free run.
      const [only] = credentialFaults;
      if (laneFaults.length === 0 && credentialFaults.length === 1 && only?.kind.expected === "recovers" && only.applied.fired() > 0) {
        const before = befores.get(targetLane);
        if (before !== undefined) {
          const violations = await compareWithFaultFreeRun(
            reference,
            targetLane,
            inputs.get(targetLane)!,
            outputsBefore.get(targetLane),
            before,
            results.get(targetLane)!,
            `after ${only.kind.name}, retried away`,
          );
          if (violations.length === 0) tally(figures.endedAsExpected, only.kind.name);
          record(`cluster-mode run ${runNumber}, ${nameOf(targetLane)} (${only.kind.name})`, violations);
        }
      }
      await Promise.all(comparisons);
    }
  };

  /** What the target's pass must end as, when its fault was alone and fired. */
  const targetExpectations = (
    lane: ClusterLane,
    result: PassResult,
    laneFaults: readonly PlannedFault[],
    credentialFaults: ReadonlyArray<{ kind: ClusterFaultSpecification; applied: AppliedFault }>,
    before: Document | undefined,
  ): string[] => {
    const violations: string[] = [];
    const [laneFault] = laneFaults;
    const [credentialFault] = credentialFaults;
    if (laneFaults.length === 1 && credentialFaults.length === 0 && laneFault !== undefined && laneFault.rule.triggered > 0) {
      tally(figures.singleFaultPasses, laneFault.kind.name);
      if (laneFault.kind.global === true) {
        if (result.outcome === "globalFailure") tally(figures.endedAsExpected, laneFault.kind.name);
        else
          violations.push(
            `${laneFault.kind.name} ended the pass as ${result.outcome}, not as a global failure (AzureAccessError): ${result.errorMessage ?? "no error"}`,
          );
      }
      return violations;
    }
    if (credentialFaults.length !== 1 || laneFaults.length > 0 || credentialFault === undefined || credentialFault.applied.fired() === 0) return violations;
    const { kind } = credentialFault;
    tally(figures.singleFaultPasses, kind.name);
    const nothingWritten = result.outcome === "clusterFailure" || result.outcome === "globalFailure";
    let asExpected = true;
    if (kind.expected === "clusterFailure" && result.outcome !== "clusterFailure") {
      asExpected = false;
      violations.push(
        `${kind.name} ended the pass as ${result.outcome}, not as a cluster failure (ClusterCredentialError) before any write (not about one identity): ${result.errorMessage ?? "no error"}`,
      );
    }
    if (kind.expected === "nothingWritten") {
      if (!nothingWritten) {
        asExpected = false;
        violations.push(
          `${kind.name} ended the pass as ${result.outcome}, not as a failure before any write (not about one identity): ${result.errorMessage ?? "no error"}`,
        );
      } else if (!(result.errorMessage ?? "").toLowerCase().includes((lane.cluster.serviceManagedIdentity ?? "").toLowerCase())) {
        asExpected = false;
        violations.push(`${kind.name}: the failure does not name the SMI ${lane.cluster.serviceManagedIdentity}: ${result.errorMessage ?? ""}`);
      }
    }
    if (kind.expected === "definitive403") {
      const entries = (ownedStatus(readServiceProviderCluster(sandbox, lane.cluster))?.identities ?? {}) as Record<string, Record<string, unknown>>;
      const refused = Object.entries(entries).filter(([, entry]) => typeof entry.retrievalError === "string" && entry.retrievalError.includes("(HTTP 403)"));
      // Every role assignment removed: each distinct identity is refused; else the one.
      const expectedRefused = credentialFault.applied.fired();
      if (result.outcome !== "lookupFailed" || refused.length < expectedRefused) {
        asExpected = false;
        violations.push(
          `${kind.name}: the 403 to the cluster's own SMI was not recorded as a definitive answer (403) on ${expectedRefused} entr${expectedRefused === 1 ? "y" : "ies"} (outcome ${result.outcome}, ${refused.length} recorded): ${result.errorMessage ?? ""}`,
        );
      }
      for (const [key, entry] of refused) {
        if (entry.clientId !== undefined || entry.principalId !== undefined) {
          asExpected = false;
          violations.push(`${key}: kept clientId/principalId beside a 403 to the cluster's own SMI, a definitive answer (403 clears them)`);
        }
      }
    }
    if (kind.expected === "msiKept") {
      // The fault made the half's recheck time due; everything else of it must be as it was.
      const identitiesOf = (half: Document | undefined): unknown => (half === undefined ? undefined : { ...half, earliestRecheckTime: undefined });
      const after = msiHalf(readServiceProviderCluster(sandbox, lane.cluster));
      if (result.outcome !== "msiFailed" || !isDeepStrictEqual(identitiesOf(after), identitiesOf(msiHalf(before)))) {
        asExpected = false;
        violations.push(
          `${kind.name}: the MSI half's failed request did not end as MsiIdentitiesError with that half as it was (outcome ${result.outcome}): ${result.errorMessage ?? ""}`,
        );
      }
    }
    if (kind.expected !== "recovers" && asExpected) tally(figures.endedAsExpected, kind.name);
    return violations;
  };

  /** A run with a fault of the first-party credential: two halves of the fleet, the fault's change between them. */
  const runWithRunFault = async (
    runNumber: number,
    provider: StatusProvider,
    kind: RunFaultSpecification,
    befores: ReadonlyMap<ClusterLane, Document | undefined>,
    outputsBefore: ReadonlyMap<ClusterLane, ProviderOutputs | undefined>,
    inputs: ReadonlyMap<ClusterLane, ProviderInputs>,
  ): Promise<void> => {
    tally(figures.faultsPlanned, kind.name);
    const handle = await kind.setUp(sandbox, firstParty);
    const half = Math.ceil(lanes.length / 2);
    const halves: Array<{ lanes: ClusterLane[]; expected: HalfExpectation }> = [
      { lanes: lanes.slice(0, half), expected: handle.firstHalf },
      { lanes: lanes.slice(half), expected: handle.secondHalf },
    ];
    const results = new Map<ClusterLane, PassResult>();
    try {
      for (const [index, part] of halves.entries()) {
        if (index === 1) await handle.midRun();
        await Promise.all(
          part.lanes.map(async (lane) => {
            results.set(lane, await execute(provider, lane, inputs.get(lane)!, outputsBefore.get(lane)));
          }),
        );
      }
    } finally {
      tally(figures.faultsInjected, kind.name, handle.fired());
      await handle.tearDown();
    }
    const passes = (figures.runFaultPasses[kind.name] ??= {
      runs: 0,
      nothingWritten: 0,
      nothingWrittenAsExpected: 0,
      faultFree: 0,
      faultFreeAsExpected: 0,
      nextRun: 0,
      nextRunAsExpected: 0,
    });
    passes.runs += 1;
    const reference = freshProvider();
    for (const part of halves) {
      for (const lane of part.lanes) {
        const result = results.get(lane)!;
        const before = befores.get(lane);
        figures.passes += 1;
        figures.outcomes[result.outcome] += 1;
        if (result.outcome === "crashed") figures.crashes += 1;
        const violations = judge(lane, result, before === undefined ? undefined : foreignFields(before), ownedSubtreeRaces(before, []), false);
        passes[part.expected] += 1;
        if (part.expected === "nothingWritten") {
          if (result.outcome !== "globalFailure") {
            violations.push(
              `${kind.name} ended the pass as ${result.outcome}, not as a global failure (AzureAccessError): ${result.errorMessage ?? "no error"}`,
            );
          } else if (!/first-party|firstParty/.test(result.errorMessage ?? "")) {
            violations.push(`${kind.name}: the global failure does not name the first-party application or its setting: ${result.errorMessage ?? ""}`);
          }
          lane.outputs = result.outputs;
        } else if (before !== undefined) {
          violations.push(
            ...(await compareWithFaultFreeRun(reference, lane, inputs.get(lane)!, outputsBefore.get(lane), before, result, `in a run with ${kind.name}`)),
          );
        }
        if (violations.length === 0) passes[part.expected === "nothingWritten" ? "nothingWrittenAsExpected" : "faultFreeAsExpected"] += 1;
        record(`cluster-mode run ${runNumber}, ${nameOf(lane)} (${kind.name})`, violations);
      }
    }
    if (handle.nextRun !== "faultFree") return;
    // The next run (a new process, as the next `pulumi up`), with the fault gone: the second half's
    // clusters, which wrote nothing, end as a fault-free run.
    const next = freshProvider();
    const second = halves[1]?.lanes ?? [];
    const nextResults = new Map<ClusterLane, PassResult>();
    await Promise.all(
      second.map(async (lane) => {
        nextResults.set(lane, await execute(next, lane, inputs.get(lane)!, lane.outputs));
      }),
    );
    for (const lane of second) {
      const result = nextResults.get(lane)!;
      const before = befores.get(lane);
      figures.passes += 1;
      figures.outcomes[result.outcome] += 1;
      if (result.outcome === "crashed") figures.crashes += 1;
      passes.nextRun += 1;
      const violations = judge(lane, result, before === undefined ? undefined : foreignFields(before), ownedSubtreeRaces(before, []), false);
      if (before !== undefined) {
        violations.push(
          ...(await compareWithFaultFreeRun(reference, lane, inputs.get(lane)!, lane.outputs, before, result, `in the run after one with ${kind.name}`)),
        );
      }
      if (violations.length === 0) passes.nextRunAsExpected += 1;
      record(`cluster-mode run ${runNumber} (the next), ${nameOf(lane)} (${kind.name})`, violations);
    }
  };

  try {
    for (let run = 1; run <= options.runs; run += 1) {
      await runOne(run);
    }
  } finally {
    stopWatching();
  }
  const statistics = sandbox.statistics.snapshot();
  figures.writesWithoutIfMatch = statistics.cosmos.writesWithoutIfMatch.length - statisticsBefore.cosmos.writesWithoutIfMatch.length;
  figures.cosmosDocumentWrites = sumOfCounts(statistics.cosmos.documentWritesByMethod) - sumOfCounts(statisticsBefore.cosmos.documentWritesByMethod);
  figures.dataPlaneRequests = statistics.dataPlane.requests - statisticsBefore.dataPlane.requests;
  figures.dataPlaneResponsesByStatus = difference(statistics.dataPlane.responsesByStatus, statisticsBefore.dataPlane.responsesByStatus);
  figures.entraTokensIssued = statistics.entra.tokensIssued - statisticsBefore.entra.tokensIssued;
  figures.entraErrorsByCode = difference(statistics.entra.errorsByCode, statisticsBefore.entra.errorsByCode);
  figures.armForbidden = (statistics.arm.responsesByStatus["403"] ?? 0) - (statisticsBefore.arm.responsesByStatus["403"] ?? 0);
  if (figures.writesWithoutIfMatch > 0) record("cluster mode", [`${figures.writesWithoutIfMatch} Cosmos writes without If-Match`]);
  figures.crashes += unexpected.length;
  record("cluster mode", unexpected);
  figures.durationInMs = Date.now() - started;
  return figures;
}

/**
 * A document as the comparison sees it: without Cosmos system fields and the hook's etag
 * bookkeeping, recheck time rounded away.
 */
function comparableDocument(document: Document | undefined): Document | undefined {
  if (document === undefined) return undefined;
  const copy = foreignFields(document);
  const status = ownedStatus(document);
  const msi = msiHalf(document);
  return {
    foreign: copy,
    owned: status === undefined ? undefined : withoutRecheckTime(structuredClone(status)),
    msi: msi === undefined ? undefined : withoutRecheckTime(structuredClone(msi)),
  };
}

/** Outputs as the comparison sees them: the status parsed, its recheck time put aside. */
function comparableOutputs(outputs: ProviderOutputs | undefined): unknown {
  if (outputs === undefined) return undefined;
  const copy = structuredClone(outputs) as unknown as Record<string, unknown>;
  for (const field of ["status", "msiStatus"]) {
    const text = copy[field];
    if (typeof text !== "string") continue;
    try {
      copy[field] = withoutRecheckTime(JSON.parse(text) as Document);
    } catch {
      // Compared as text.
    }
  }
  return copy;
}

/** Replaces every earliestRecheckTime by a marker holding the time, compared apart within the tolerance. */
function withoutRecheckTime(value: Document): Document {
  for (const [key, inner] of Object.entries(value)) {
    if (key === "earliestRecheckTime" && typeof inner === "string") value[key] = { recheckTime: inner };
    else if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) withoutRecheckTime(inner as Document);
  }
  return value;
}

/** Where two comparable values differ beyond the recheck tolerance, or undefined. */
function comparableDifference(left: unknown, right: unknown): string | undefined {
  if (isDeepStrictEqual(left, right)) return undefined;
  const leftTimes: string[] = [];
  const rightTimes: string[] = [];
  const strip = (value: unknown, times: string[]): unknown => {
    if (Array.isArray(value)) return value.map((item) => strip(item, times));
    if (typeof value !== "object" || value === null) return value;
    const object = value as Record<string, unknown>;
    if (Object.keys(object).length === 1 && typeof object.recheckTime === "string") {
      times.push(object.recheckTime);
      return "<recheck time>";
    }
    return Object.fromEntries(Object.entries(object).map(([key, inner]) => [key, strip(inner, times)]));
  };
  const leftStripped = strip(left, leftTimes);
  const rightStripped = strip(right, rightTimes);
  if (!isDeepStrictEqual(leftStripped, rightStripped)) return firstDifference(rightStripped, leftStripped);
  for (const [index, time] of leftTimes.entries()) {
    const other = rightTimes[index];
    if (other === undefined || Math.abs(Date.parse(time) - Date.parse(other)) > recheckToleranceInMs) {
      return `earliest recheck ${time}, a fault-free run ${other ?? "none"}`;
    }
  }
  return undefined;
}

function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) result[key] = delta;
  }
  return result;
}
