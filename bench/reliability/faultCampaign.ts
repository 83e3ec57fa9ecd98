/**
 * The fault campaign: many reconcile passes of the real provider (real SDK clients over HTTPS)
 * against the sandbox, each with injected faults and random changes in ARM and Cosmos, every
 * pass checked against the invariants directly in Cosmos. Lanes (one cluster each) run side by
 * side so the SDKs' retry waits overlap; some passes are followed by a refresh with a fault of
 * its own. Then phases of their own: deletes (plain, after another writer, after a rename), host faults,
 * settings faults (a database or container that does not exist) and token faults (sequential).
 */
import { watchUnhandledRejections } from "./unhandledRejections";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import type { FaultRule } from "../../sandbox/faultInjector";
import { createSeededRandom } from "../../sandbox/faultInjector";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { DeleteFaultSpecification, FaultKindSpecification, HostFaultSpecification } from "./faultCatalogue";
import {
  completeStatusOf,
  deleteFaultKinds,
  hostFaultKinds,
  laneFaultKinds,
  ownedSubtreePointer,
  pickWeighted,
  settingsFaultKinds,
  tokenFaultKinds,
} from "./faultCatalogue";
import type { PassOutcome, StoredIdFates } from "./invariants";
import { checkDelete, checkPass, checkRefresh, checkRenameCreate, checkSettingsFault, countStoredIdFates, invariantCatalogue, invariantOf } from "./invariants";
import { nonDefinitiveAnswersOf } from "./nonDefinitiveAnswers";
import { classifyFailure, mutateBeforePass, reportedStatusOf, type LaneState } from "./passSteps";
import type { PlannedFault } from "./plannedFaults";
import { faultScopeFor, ownedSubtreeRaces, planFault, retireFault } from "./plannedFaults";
import type { ProviderOutputs } from "../../resources/provider/providerOutputs";
import type { ReliabilitySandbox, StatusProvider } from "./reliabilitySandbox";
import { foreignFields, inputsFor, makeRecheckDue, readServiceProviderCluster, seedLanes, subscriptionDocumentIdOf } from "./reliabilitySandbox";
import { sumOfCounts } from "../performance/statistics";

/** Size and shape of a campaign. */
export interface CampaignOptions {
  /** Passes with ARM and Cosmos faults, spread over the lanes. */
  readonly lanePasses: number;
  /** Passes with token-endpoint faults (sequential). */
  readonly tokenPasses: number;
  /** Passes with a host fault (hostFaultKinds, in turn), spread over the lanes; 0 when omitted. */
  readonly hostPasses?: number;
  /**
   * Deletes, spread over the lanes: each after a pass without faults, in turn plain and with each
   * of deleteFaultKinds, and with outputs of each of deleteOutputKinds; 0 when omitted.
   */
  readonly deletes?: number;
  /** Rounds of a settings fault (settingsFaultKinds, in turn): a refresh, an update and a delete each; 0 when omitted. */
  readonly settingsRounds?: number;
  /** Share of lane passes followed by a refresh (`read`) of the lane; 0 when omitted. */
  readonly refreshShare?: number;
  readonly lanes: number;
  readonly identitiesPerCluster: number;
  /** Share of passes (and of refreshes) that get at least one fault. */
  readonly faultProbability: number;
  readonly seed: number;
}

/** What a campaign measured. */
export interface CampaignFigures {
  passes: number;
  outcomes: Record<PassOutcome, number>;
  /** Rules added per fault kind. */
  faultsPlanned: Record<string, number>;
  /** Times a rule actually fired per fault kind (the sandbox's own count; for a host fault, the passes it hit; for a settings fault, the operations run). */
  faultsInjected: Record<string, number>;
  /**
   * Passes ended by a global failure (AzureAccessError, nothing written), by the one fault kind of
   * the pass; a pass with two faults counts under `a+b`, one without any under `no fault`.
   */
  globalFailuresByFault: Record<string, number>;
  /** Passes whose only fault was that kind and whose rule fired, by kind (host faults: every pass of theirs). */
  singleFaultPasses: Record<string, number>;
  /** Pre-pass changes: identities rotated, deleted and recreated in ARM, foreign edits. */
  changes: Record<string, number>;
  /** How stored IDs fared in the passes that looked every identity up and wrote. */
  storedIds: StoredIdFates;
  /** Refreshes after lane passes: kept the resource, dropped it (its document was gone), or failed. */
  refreshes: { kept: number; dropped: number; failed: number };
  /**
   * Deletes, by their circumstances: `plain` (`clusterGone` of them after the cluster's documents
   * were deleted), `withOtherWriter` after another writer recorded a fresh status, `renamed` after
   * a resource of the same cluster was created (its create over the current status wrote nothing:
   * `renameCreatesWroteNothing`); `byOutputs` by the outputs the delete was handed
   * (deleteOutputKinds); `wroteNothing` those that succeeded with the document exactly as it was.
   */
  deletes: {
    plain: number;
    clusterGone: number;
    withOtherWriter: number;
    renamed: number;
    renameCreatesWroteNothing: number;
    byOutputs: Record<string, number>;
    wroteNothing: number;
  };
  /**
   * Operations run with a wrong setting: refreshes and updates, and how many of them failed naming
   * it; deletes, and how many of them succeeded writing nothing.
   */
  settingsOperations: { run: number; failedNamingSetting: number; deletes: number; deletesWroteNothing: number };
  violationCount: number;
  /** Violations by the invariant they break (indexes of invariantCatalogue). */
  violationsByInvariant: number[];
  /** The first violations, for the report. */
  violations: string[];
  crashes: number;
  writesWithoutIfMatch: number;
  armRequests: number;
  cosmosDocumentWrites: number;
  durationInMs: number;
}

/** How one pass is run. */
interface PassPlan {
  readonly kinds: readonly FaultKindSpecification[];
  readonly provider?: StatusProvider;
  readonly hostFault?: HostFaultSpecification;
  /** The number of faults; drawn with faultProbability when omitted. */
  readonly faults?: number;
}

/** Runs a campaign on a running reliability sandbox. */
export async function runFaultCampaign(reliability: ReliabilitySandbox, options: CampaignOptions): Promise<CampaignFigures> {
  const { sandbox } = reliability;
  const started = Date.now();
  const figures: CampaignFigures = {
    passes: 0,
    outcomes: { succeeded: 0, lookupFailed: 0, writeFailed: 0, globalFailure: 0, clusterFailure: 0, msiFailed: 0, crashed: 0 },
    faultsPlanned: {},
    faultsInjected: {},
    globalFailuresByFault: {},
    singleFaultPasses: {},
    changes: {},
    storedIds: { confirmed: 0, replacedByRead: 0, clearedByNotFound: 0, keptBesideError: 0 },
    refreshes: { kept: 0, dropped: 0, failed: 0 },
    deletes: { plain: 0, clusterGone: 0, withOtherWriter: 0, renamed: 0, renameCreatesWroteNothing: 0, byOutputs: {}, wroteNothing: 0 },
    settingsOperations: { run: 0, failedNamingSetting: 0, deletes: 0, deletesWroteNothing: 0 },
    violationCount: 0,
    violationsByInvariant: invariantCatalogue.map(() => 0),
    violations: [],
    crashes: 0,
    writesWithoutIfMatch: 0,
    armRequests: 0,
    cosmosDocumentWrites: 0,
    durationInMs: 0,
  };
  const { unexpected, stop: stopWatching } = watchUnhandledRejections();
  const statisticsBefore = sandbox.statistics.snapshot();
  const limits = { maxWriteAttempts: Number(reliability.config.maxWriteAttempts), lookupTimeoutInMs: Number(reliability.config.lookupTimeoutSeconds) * 1000 };
  const provider = reliability.provider();
  const random = createSeededRandom(options.seed);
  const lanes: LaneState[] = seedLanes(sandbox, "campaign", options.lanes, options.identitiesPerCluster).map((cluster, index) => ({
    index,
    cluster,
    outputs: undefined,
    deletedIdentities: [],
  }));
  const tally = (counts: Record<string, number>, name: string, amount = 1): void => {
    counts[name] = (counts[name] ?? 0) + amount;
  };
  const record = (where: string, violations: readonly string[]): void => {
    figures.violationCount += violations.length;
    for (const violation of violations) figures.violationsByInvariant[invariantOf(violation)] += 1;
    for (const violation of violations.slice(0, 3)) if (figures.violations.length < 25) figures.violations.push(`${where}: ${violation}`);
  };
  const plan = (lane: LaneState, kinds: readonly FaultKindSpecification[], number: number): PlannedFault => {
    const planned = planFault(sandbox, pickWeighted(kinds, random), lane.cluster, pickIdentity(lane.cluster, random), number, limits);
    tally(figures.faultsPlanned, planned.kind.name);
    return planned;
  };
  const writesTo = (cluster: FleetClusterDescription): number =>
    sandbox.statistics.snapshot().cosmos.documentWritesByDocument[cluster.serviceProviderClusterDocumentId] ?? 0;
  const writesToCluster = (cluster: FleetClusterDescription): number => {
    const byDocument = sandbox.statistics.snapshot().cosmos.documentWritesByDocument;
    return (byDocument[cluster.serviceProviderClusterDocumentId] ?? 0) + (byDocument[cluster.clusterDocumentId] ?? 0);
  };

  let passNumber = 0;
  const runPass = async (lane: LaneState, passPlan: PassPlan): Promise<void> => {
    const { kinds, provider: passProvider = provider, hostFault } = passPlan;
    passNumber += 1;
    const number = passNumber;
    const fromClusterDocument = random() < 0.2;
    mutateBeforePass(sandbox, lane, random, number, figures.changes);
    makeRecheckDue(sandbox, lane.cluster);
    const before = readServiceProviderCluster(sandbox, lane.cluster);
    const expectedForeign = before === undefined ? undefined : foreignFields(before);
    const faultCount = passPlan.faults ?? (hostFault !== undefined ? 0 : random() < options.faultProbability ? (random() < 0.2 ? 2 : 1) : 0);
    if (hostFault !== undefined) {
      tally(figures.faultsPlanned, hostFault.name);
      tally(figures.faultsInjected, hostFault.name);
    }
    const planned: PlannedFault[] = [];
    for (let index = 0; index < faultCount; index += 1) planned.push(plan(lane, kinds, number));

    const inputs = inputsFor(lane.cluster, fromClusterDocument);
    let outcome: PassOutcome = "succeeded";
    let reported: string | undefined;
    let errorMessage: string | undefined;
    try {
      const outputs =
        lane.outputs === undefined
          ? (await passProvider.create(inputs)).outs
          : (await passProvider.update!(lane.cluster.serviceProviderClusterDocumentId, lane.outputs, inputs)).outs;
      reported = outputs?.status;
      lane.outputs = outputs;
    } catch (error) {
      const failure = classifyFailure(error);
      outcome = failure.outcome;
      errorMessage = failure.message;
      reported = reportedStatusOf(error);
      if (failure.properties !== undefined) {
        lane.outputs = failure.properties;
      }
    }

    let deletedDuringPass = false;
    const firedRules: FaultRule[] = [];
    for (const fault of planned) {
      const { kind, rule } = fault;
      tally(figures.faultsInjected, kind.name, rule.triggered);
      firedRules.push(rule, ...(fault.alongside === undefined ? [] : [fault.alongside]));
      if (rule.kind === "deleteBeforeWrite" && rule.triggered > 0) deletedDuringPass = true;
      const edit = rule.foreignEdit;
      if (rule.kind === "race" && rule.triggered > 0 && edit !== undefined && !edit.path.startsWith(ownedSubtreePointer) && expectedForeign !== undefined) {
        const properties = expectedForeign.properties as Record<string, Record<string, unknown>>;
        properties.reliabilityRaces = { ...properties.reliabilityRaces, [`pass-${number}`]: edit.value };
      }
      retireFault(fault);
    }
    // Another writer's edits inside the owned subtree between our read and our write: the pass is
    // judged against the document its last decision saw.
    const races = ownedSubtreeRaces(before, firedRules);
    const after = readServiceProviderCluster(sandbox, lane.cluster);
    const desired = new Map(Object.values(lane.cluster.dataPlaneOperators).map((id) => [id.toLowerCase(), id]));
    const violations = checkPass(
      {
        outcome,
        before: races.before,
        after,
        expectedForeign,
        desired,
        reportedStatus: reported,
        deletedDuringPass,
        errorMessage,
        documentId: lane.cluster.serviceProviderClusterDocumentId,
        otherWriterEntries: races.entries,
        otherWriterRecordedStatus: races.wholeSubtree,
        credentialScope: "process",
        nonDefinitiveAnswers: nonDefinitiveAnswersOf(firedRules, desired, (id) => sandbox.identities.get(id) !== undefined),
      },
      sandbox.identities,
      reliability.secrets(),
    );
    const [onlyFault] = planned;
    if (planned.length === 1 && onlyFault !== undefined && onlyFault.rule.triggered > 0) tally(figures.singleFaultPasses, onlyFault.kind.name);
    if (hostFault !== undefined) tally(figures.singleFaultPasses, hostFault.name);
    if (planned.length === 1 && onlyFault?.kind.global === true && onlyFault.rule.triggered > 0 && outcome !== "globalFailure") {
      // A failure not about one identity (a credential, ARM 401, every lookup failing alike) must end the pass before any write.
      violations.push(`${onlyFault.kind.name} ended the pass as ${outcome}, not as a global failure (AzureAccessError): ${errorMessage ?? "no error"}`);
    }
    if (hostFault !== undefined && outcome !== "globalFailure") {
      // A host that cannot be reached says nothing about any identity: the pass must end before any write.
      violations.push(`${hostFault.name} ended the pass as ${outcome}, not as a global failure (AzureAccessError): ${errorMessage ?? "no error"}`);
    }
    if ((outcome === "succeeded" || outcome === "lookupFailed") && !races.wholeSubtree && !deletedDuringPass) {
      countStoredIdFates(figures.storedIds, races.before, after, new Set(races.entries.keys()));
    }
    figures.passes += 1;
    figures.outcomes[outcome] += 1;
    const faults = hostFault?.name ?? (planned.map(({ kind }) => kind.name).join("+") || "no fault");
    if (outcome === "globalFailure") tally(figures.globalFailuresByFault, faults);
    if (outcome === "crashed") figures.crashes += 1;
    record(`pass ${number} (${faults})`, violations);
    // Lane passes only: the phases of their own keep their faults to themselves.
    if (options.refreshShare !== undefined && kinds === laneFaultKinds && passPlan.faults === undefined && random() < options.refreshShare) {
      await refreshLane(lane, number);
    }
    if (deletedDuringPass && before !== undefined) {
      // The resource provider recreates the document; the hook must then write it from scratch.
      sandbox.documents.put(structuredClone(before));
      lane.outputs = undefined;
    }
  };

  /**
   * A refresh of the lane (`read`, what `pulumi refresh` and `up --refresh` call), after the world
   * changed a little (a recheck made due, so the refresh asks ARM; an identity recreated in ARM),
   * with a fault of its own. The engine keeps what it returns, as state does.
   */
  let refreshTurns = 0;
  const refreshLane = async (lane: LaneState, number: number): Promise<void> => {
    const outputs = lane.outputs;
    if (outputs === undefined) return;
    if (random() < 0.5) makeRecheckDue(sandbox, lane.cluster);
    if (random() < 0.3 && sandbox.identities.rotate(pickIdentity(lane.cluster, random)) !== undefined)
      tally(figures.changes, "identity rotated in ARM before a refresh");
    const planned = random() < options.faultProbability ? [plan(lane, laneFaultKinds, number)] : [];
    // One refresh in ten meets a cluster that is gone (both its documents deleted, its subscription's
    // kept), and one in ten only its ServiceProviderCluster document gone: the refresh drops the first,
    // keeps the second. In turn, not drawn, so that a short campaign meets both.
    const turn = refreshTurns++ % 10;
    const removed =
      turn === 4
        ? [lane.cluster.serviceProviderClusterDocumentId, lane.cluster.clusterDocumentId]
        : turn === 9
          ? [lane.cluster.serviceProviderClusterDocumentId]
          : [];
    const saved = removed.map((id) => sandbox.documents.read(lane.cluster.partitionKey, id)).filter((document) => document !== undefined);
    for (const id of removed) sandbox.documents.delete(lane.cluster.partitionKey, id);
    if (removed.length > 0)
      tally(figures.changes, removed.length === 2 ? "cluster documents deleted before a refresh" : "ServiceProviderCluster document deleted before a refresh");
    const before = readServiceProviderCluster(sandbox, lane.cluster);
    const clusterDocumentPresent = sandbox.documents.read(lane.cluster.partitionKey, lane.cluster.clusterDocumentId) !== undefined;
    const subscriptionDocumentPresent = sandbox.documents.read(lane.cluster.partitionKey, subscriptionDocumentIdOf(lane.cluster)) !== undefined;
    const writesBefore = writesTo(lane.cluster);
    let returned: { id: string; status: unknown } | undefined;
    let failure: { outcome: PassOutcome; message: string } | undefined;
    let props: typeof outputs | undefined;
    try {
      const result = await provider.read!(lane.cluster.serviceProviderClusterDocumentId, outputs);
      returned = { id: result.id ?? "", status: result.props?.status };
      props = result.props;
    } catch (error) {
      failure = classifyFailure(error);
    }
    const after = readServiceProviderCluster(sandbox, lane.cluster);
    // The resource provider recreates what was removed; the lane's next pass then writes it again.
    if (saved.length > 0) sandbox.documents.putMany(saved);
    for (const fault of planned) {
      tally(figures.faultsInjected, fault.kind.name, fault.rule.triggered);
      retireFault(fault);
    }
    const violations = checkRefresh(
      {
        before,
        after,
        writes: writesTo(lane.cluster) - writesBefore,
        returned,
        failure,
        documentId: lane.cluster.serviceProviderClusterDocumentId,
        clusterDocumentPresent,
        subscriptionDocumentPresent,
        returnedDrift: props?.drift,
      },
      reliability.secrets(),
    );
    if (failure !== undefined) {
      figures.refreshes.failed += 1;
    } else if (returned?.id === "") {
      figures.refreshes.dropped += 1;
      lane.outputs = undefined;
    } else {
      figures.refreshes.kept += 1;
      lane.outputs = props;
    }
    record(`refresh after pass ${number} (${planned.map(({ kind }) => kind.name).join("+") || "no fault"})`, violations);
  };

  /**
   * A pass without faults records the status, then the resource is deleted (`pulumi destroy`, the
   * cluster leaving the stack, or a resource whose options set retainOnDelete to false), handed
   * outputs of the kind `outputsKind` names. Plain, the cluster's documents are sometimes gone
   * first (`clusterGone`, put back after); with a delete fault, another writer records a fresh
   * status first, or a resource of the same cluster is created first (a rename). The delete must
   * write nothing in every case.
   */
  const deleteLane = async (
    lane: LaneState,
    deleteFault: DeleteFaultSpecification | undefined,
    outputsKind: DeleteOutputKind,
    clusterGone: boolean,
  ): Promise<void> => {
    await runPass(lane, { kinds: laneFaultKinds, faults: 0 });
    const outputs = lane.outputs;
    if (outputs === undefined || readServiceProviderCluster(sandbox, lane.cluster) === undefined) return;
    const number = passNumber;
    const documentId = lane.cluster.serviceProviderClusterDocumentId;
    let renamedOutputs: typeof lane.outputs;
    if (deleteFault?.when === "rename") {
      // The engine's rename without an alias: the new resource is created first, the old one deleted after.
      tally(figures.faultsPlanned, deleteFault.name);
      tally(figures.faultsInjected, deleteFault.name);
      const before = readServiceProviderCluster(sandbox, lane.cluster);
      const writesBefore = writesToCluster(lane.cluster);
      let errorMessage: string | undefined;
      try {
        renamedOutputs = (await provider.create(inputsFor(lane.cluster))).outs;
      } catch (error) {
        errorMessage = classifyFailure(error).message;
      }
      const violations = checkRenameCreate(
        {
          before,
          after: readServiceProviderCluster(sandbox, lane.cluster),
          writes: writesToCluster(lane.cluster) - writesBefore,
          errorMessage,
          documentId,
          reportedStatus: renamedOutputs?.status,
        },
        reliability.secrets(),
      );
      if (violations.length === 0) figures.deletes.renameCreatesWroteNothing += 1;
      record(`rename's create after pass ${number}`, violations);
    } else if (deleteFault !== undefined) {
      const identityId = pickIdentity(lane.cluster, random);
      sandbox.identities.rotate(identityId);
      tally(figures.faultsPlanned, deleteFault.name);
      sandbox.documents.patch(
        lane.cluster.partitionKey,
        documentId,
        ownedSubtreePointer,
        completeStatusOf(faultScopeFor(sandbox, lane.cluster, identityId, number)),
      );
      tally(figures.faultsInjected, deleteFault.name);
    }
    const removed = clusterGone && deleteFault === undefined ? [documentId, lane.cluster.clusterDocumentId] : [];
    const saved = removed.map((id) => sandbox.documents.read(lane.cluster.partitionKey, id)).filter((document) => document !== undefined);
    for (const id of removed) sandbox.documents.delete(lane.cluster.partitionKey, id);
    const before = readServiceProviderCluster(sandbox, lane.cluster);
    const writesBefore = writesToCluster(lane.cluster);
    let errorMessage: string | undefined;
    try {
      await provider.delete!(documentId, deleteOutputs(outputs, outputsKind));
    } catch (error) {
      errorMessage = classifyFailure(error).message;
    }
    const violations = checkDelete(
      { before, after: readServiceProviderCluster(sandbox, lane.cluster), writes: writesToCluster(lane.cluster) - writesBefore, errorMessage, documentId },
      reliability.secrets(),
    );
    // The campaign's cluster lives on: its documents come back, and the lane's next pass writes from them.
    if (saved.length > 0) sandbox.documents.putMany(saved);
    if (deleteFault === undefined) figures.deletes.plain += 1;
    else if (deleteFault.when === "rename") figures.deletes.renamed += 1;
    else figures.deletes.withOtherWriter += 1;
    if (removed.length > 0) figures.deletes.clusterGone += 1;
    tally(figures.deletes.byOutputs, outputsKind);
    if (violations.length === 0) figures.deletes.wroteNothing += 1;
    // The engine forgets a deleted resource; the lane's next pass creates it again, unless it was renamed: the new one goes on.
    lane.outputs = renamedOutputs;
    record(`delete after pass ${number} (${deleteFault?.name ?? (removed.length > 0 ? "cluster gone" : "plain")}, ${outputsKind} outputs)`, violations);
  };

  const lanePassesPerLane = Math.ceil(options.lanePasses / options.lanes);
  let lanePassesLeft = options.lanePasses;
  await Promise.all(
    lanes.map(async (lane) => {
      for (let index = 0; index < lanePassesPerLane && lanePassesLeft > 0; index += 1) {
        lanePassesLeft -= 1;
        await runPass(lane, { kinds: laneFaultKinds });
      }
    }),
  );
  // Deletes: in turn plain and with each delete fault, each circumstance with each kind of outputs
  // in turn; every other round's plain delete finds its cluster's documents gone. Each writes nothing.
  let deletesLeft = options.deletes ?? 0;
  let deleteNumber = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      while (deletesLeft > 0) {
        deletesLeft -= 1;
        const variant = deleteNumber % (deleteFaultKinds.length + 1);
        const round = Math.floor(deleteNumber / (deleteFaultKinds.length + 1));
        deleteNumber += 1;
        await deleteLane(lane, variant === 0 ? undefined : deleteFaultKinds[variant - 1], deleteOutputKinds[round % deleteOutputKinds.length], round % 2 === 1);
      }
    }),
  );
  // Host faults: each hits every lane alike, so its passes get a provider of their own (the other
  // lanes' providers never see it); spread over the lanes, side by side.
  const hostPasses = options.hostPasses ?? 0;
  if (hostPasses > 0) {
    const closedEndpoint = `https://127.0.0.1:${await closedLoopbackPort()}`;
    const hostProviders = hostFaultKinds.map((kind) => ({ kind, provider: reliability.provider(kind.settings(closedEndpoint)) }));
    let hostPassesLeft = hostPasses;
    await Promise.all(
      lanes.map(async (lane) => {
        while (hostPassesLeft > 0) {
          const { kind, provider: hostProvider } = hostProviders[hostPassesLeft % hostProviders.length];
          hostPassesLeft -= 1;
          await runPass(lane, { kinds: [], provider: hostProvider, hostFault: kind });
        }
      }),
    );
  }
  // Settings faults: a provider whose settings name a database or container that does not exist
  // refreshes, updates and deletes resources recorded with the right settings.
  const settingsProviders = settingsFaultKinds.map((kind) => ({ kind, provider: reliability.provider(kind.settings(reliability.config)) }));
  if ((options.settingsRounds ?? 0) > 0) for (const kind of settingsFaultKinds) await kind.prepare?.(sandbox);
  for (let round = 0; round < (options.settingsRounds ?? 0); round += 1) {
    const lane = lanes[round % lanes.length];
    const { kind, provider: wrongProvider } = settingsProviders[round % settingsProviders.length];
    // Records the status with the right settings, as the last `pulumi up` did.
    await runPass(lane, { kinds: laneFaultKinds, faults: 0 });
    const outputs = lane.outputs;
    if (outputs === undefined) continue;
    tally(figures.faultsPlanned, kind.name);
    const documentId = lane.cluster.serviceProviderClusterDocumentId;
    const value = kind.settings(reliability.config)[kind.setting] ?? "";
    for (const operation of ["refresh", "update", "delete"] as const) {
      const before = readServiceProviderCluster(sandbox, lane.cluster);
      let returnedId: string | undefined;
      let failure: { outcome: PassOutcome; message: string } | undefined;
      try {
        if (operation === "refresh") returnedId = (await wrongProvider.read!(documentId, outputs)).id ?? "";
        else if (operation === "update") await wrongProvider.update!(documentId, outputs, inputsFor(lane.cluster));
        else await wrongProvider.delete!(documentId, outputs);
      } catch (error) {
        failure = classifyFailure(error);
      }
      const violations = checkSettingsFault(
        { operation, setting: kind.setting, value, before, after: readServiceProviderCluster(sandbox, lane.cluster), returnedId, failure },
        reliability.secrets(),
      );
      tally(figures.faultsInjected, kind.name);
      if (operation === "delete") {
        figures.settingsOperations.deletes += 1;
        if (failure === undefined && violations.length === 0) figures.settingsOperations.deletesWroteNothing += 1;
        // A delete relinquishes whatever the settings: the engine forgets the resource, and the lane's next pass creates it.
        if (failure === undefined) lane.outputs = undefined;
      } else {
        figures.settingsOperations.run += 1;
        if (failure !== undefined && violations.length === 0) figures.settingsOperations.failedNamingSetting += 1;
      }
      record(`${operation} of ${lane.cluster.clusterResourceId.split("/").pop() ?? ""} (${kind.name})`, violations);
    }
  }
  // Token faults: every request needs a fresh token (1 s lifetime), so every pass meets the endpoint.
  // A credential for another client ID has an empty MSAL cache, so its first token has the short lifetime.
  const lifetime = sandbox.tokens.tokenLifetimeInMs;
  sandbox.tokens.setTokenLifetime(1000);
  const tokenPhaseProvider = reliability.provider({ managedIdentityClientId: randomUUID() });
  try {
    for (let index = 0; index < options.tokenPasses; index += 1) {
      await runPass(lanes[index % lanes.length], { kinds: tokenFaultKinds, provider: tokenPhaseProvider });
    }
  } finally {
    sandbox.tokens.setTokenLifetime(lifetime);
  }

  stopWatching();
  const statistics = sandbox.statistics.snapshot();
  figures.writesWithoutIfMatch = statistics.cosmos.writesWithoutIfMatch.length - statisticsBefore.cosmos.writesWithoutIfMatch.length;
  figures.armRequests = statistics.arm.getRequests - statisticsBefore.arm.getRequests;
  figures.cosmosDocumentWrites = sumOfCounts(statistics.cosmos.documentWritesByMethod) - sumOfCounts(statisticsBefore.cosmos.documentWritesByMethod);
  if (figures.writesWithoutIfMatch > 0) {
    record("campaign", [`${figures.writesWithoutIfMatch} Cosmos writes without If-Match`]);
  }
  figures.crashes += unexpected.length;
  record("campaign", unexpected);
  figures.durationInMs = Date.now() - started;
  return figures;
}

/** A loopback port nothing listens on (bound, then closed): connecting to it is refused. */
async function closedLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no loopback port");
  return address.port;
}

/**
 * The outputs a delete is handed: as the last pass returned them, with drift lines a refresh left,
 * with the `claim` field outputs of an older version recorded, unreadable (another schema version,
 * a status that is no JSON), or empty (no cluster ID). None of them changes what a delete does:
 * nothing.
 */
export const deleteOutputKinds = ["as returned", "with drift", "with an old claim", "unreadable", "empty"] as const;
export type DeleteOutputKind = (typeof deleteOutputKinds)[number];

function deleteOutputs(outputs: ProviderOutputs, kind: DeleteOutputKind): ProviderOutputs {
  const changed: Record<string, unknown> =
    kind === "with drift"
      ? { ...outputs, drift: ["dataPlaneOperatorsManagedIdentities: the status in Cosmos differs from the one recorded"] }
      : kind === "with an old claim"
        ? { ...outputs, claim: "0123456789abcdef" }
        : kind === "unreadable"
          ? { ...outputs, schemaVersion: -1, status: "{" }
          : kind === "empty"
            ? {}
            : { ...outputs };
  return changed as unknown as ProviderOutputs;
}

function pickIdentity(cluster: FleetClusterDescription, random: () => number): string {
  const identities = Object.values(cluster.dataPlaneOperators);
  return identities[Math.floor(random() * identities.length)] ?? identities[0] ?? "";
}

/** The provider type, re-exported for callers that build their own. */
export type { StatusProvider };
