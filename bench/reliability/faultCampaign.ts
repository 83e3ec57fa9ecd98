/**
 * The fault campaign: many reconcile passes of the real provider (real SDK clients over HTTPS)
 * against the sandbox, each with injected faults and random changes in ARM and Cosmos, every
 * pass checked against the invariants directly in Cosmos. Lanes (one cluster each) run side by
 * side so the SDKs' retry waits overlap; token faults run in a sequential phase.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import type { FaultRule } from "../../sandbox/faultInjector";
import { createSeededRandom } from "../../sandbox/faultInjector";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { FaultKindSpecification, HostFaultSpecification } from "./faultCatalogue";
import { hostFaultKinds, laneFaultKinds, pickWeighted, tokenFaultKinds } from "./faultCatalogue";
import type { PassOutcome } from "./invariants";
import { checkPass } from "./invariants";
import { classifyFailure, mutateBeforePass, reportedStatusOf, type LaneState } from "./passSteps";
import type { ReliabilitySandbox, StatusProvider } from "./reliabilitySandbox";
import { foreignFields, inputsFor, makeRecheckDue, readServiceProviderCluster, seedLanes } from "./reliabilitySandbox";

/** Size and shape of a campaign. */
export interface CampaignOptions {
  /** Passes with ARM and Cosmos faults, spread over the lanes. */
  readonly lanePasses: number;
  /** Passes with token-endpoint faults (sequential). */
  readonly tokenPasses: number;
  /** Passes with a host fault (hostFaultKinds, in turn), spread over the lanes; 0 when omitted. */
  readonly hostPasses?: number;
  readonly lanes: number;
  readonly identitiesPerCluster: number;
  /** Share of passes that get at least one fault. */
  readonly faultProbability: number;
  readonly seed: number;
}

/** What a campaign measured. */
export interface CampaignFigures {
  passes: number;
  outcomes: Record<PassOutcome, number>;
  /** Rules added per fault kind. */
  faultsPlanned: Record<string, number>;
  /** Times a rule actually fired per fault kind (the sandbox's own count; for a host fault, the passes it hit). */
  faultsInjected: Record<string, number>;
  /**
   * Passes ended by a global failure (AzureAccessError, nothing written), by the one fault kind of
   * the pass; a pass with two faults counts under `a+b`, one without any under `no fault`.
   */
  globalFailuresByFault: Record<string, number>;
  /** Pre-pass changes: identities rotated, deleted and recreated in ARM, foreign edits. */
  changes: Record<string, number>;
  violationCount: number;
  /** The first violations, for the report. */
  violations: string[];
  crashes: number;
  writesWithoutIfMatch: number;
  armRequests: number;
  cosmosDocumentWrites: number;
  durationInMs: number;
}

/** Runs a campaign on a running reliability sandbox. */
export async function runFaultCampaign(reliability: ReliabilitySandbox, options: CampaignOptions): Promise<CampaignFigures> {
  const { sandbox } = reliability;
  const started = Date.now();
  const figures: CampaignFigures = {
    passes: 0,
    outcomes: { succeeded: 0, lookupFailed: 0, writeFailed: 0, globalFailure: 0, crashed: 0 },
    faultsPlanned: {},
    faultsInjected: {},
    globalFailuresByFault: {},
    changes: {},
    violationCount: 0,
    violations: [],
    crashes: 0,
    writesWithoutIfMatch: 0,
    armRequests: 0,
    cosmosDocumentWrites: 0,
    durationInMs: 0,
  };
  const unexpected: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    unexpected.push(`unhandled rejection: ${reason instanceof Error ? reason.message : String(reason)}`);
  };
  process.on("unhandledRejection", onUnhandled);
  const statisticsBefore = sandbox.statistics.snapshot();
  const maxWriteAttempts = Number(reliability.config.maxWriteAttempts);
  const lookupTimeoutInMs = Number(reliability.config.lookupTimeoutSeconds) * 1000;
  const provider = reliability.provider();
  const random = createSeededRandom(options.seed);
  const lanes: LaneState[] = seedLanes(sandbox, "campaign", options.lanes, options.identitiesPerCluster).map((cluster, index) => ({
    index,
    cluster,
    outputs: undefined,
    deletedIdentities: [],
  }));

  let passNumber = 0;
  const runPass = async (
    lane: LaneState,
    kinds: readonly FaultKindSpecification[],
    passProvider: StatusProvider = provider,
    hostFault?: HostFaultSpecification,
  ): Promise<void> => {
    passNumber += 1;
    const number = passNumber;
    const fromClusterDocument = random() < 0.2;
    mutateBeforePass(sandbox, lane, random, number, figures.changes);
    makeRecheckDue(sandbox, lane.cluster);
    const before = readServiceProviderCluster(sandbox, lane.cluster);
    const expectedForeign = before === undefined ? undefined : foreignFields(before);
    const planned: Array<{ kind: FaultKindSpecification; rule: FaultRule }> = [];
    const faultCount = hostFault !== undefined ? 0 : random() < options.faultProbability ? (random() < 0.2 ? 2 : 1) : 0;
    if (hostFault !== undefined) {
      figures.faultsPlanned[hostFault.name] = (figures.faultsPlanned[hostFault.name] ?? 0) + 1;
      figures.faultsInjected[hostFault.name] = (figures.faultsInjected[hostFault.name] ?? 0) + 1;
    }
    for (let index = 0; index < faultCount; index += 1) {
      const kind = pickWeighted(kinds, random);
      const scope = {
        resourceGroupPath: `/resourcegroups/${lane.cluster.clusterResourceId.split("/")[4]?.toLowerCase()}/`,
        documentId: lane.cluster.serviceProviderClusterDocumentId,
        identityId: pickIdentity(lane.cluster, random),
        passNumber: number,
      };
      planned.push({ kind, rule: sandbox.faults.add(kind.rule(scope, maxWriteAttempts, lookupTimeoutInMs)) });
      figures.faultsPlanned[kind.name] = (figures.faultsPlanned[kind.name] ?? 0) + 1;
    }

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
    for (const { kind, rule } of planned) {
      figures.faultsInjected[kind.name] = (figures.faultsInjected[kind.name] ?? 0) + rule.triggered;
      if (rule.kind === "deleteBeforeWrite" && rule.triggered > 0) deletedDuringPass = true;
      if (rule.kind === "race" && rule.triggered > 0 && rule.foreignEdit !== undefined && expectedForeign !== undefined) {
        const properties = expectedForeign.properties as Record<string, Record<string, unknown>>;
        properties.reliabilityRaces = { ...properties.reliabilityRaces, [`pass-${number}`]: rule.foreignEdit.value };
      }
      // Rules are scoped to this lane; one that did not use up its firings must not leak into the next pass.
      rule.remaining = 0;
    }
    const after = readServiceProviderCluster(sandbox, lane.cluster);
    const desired = new Map(Object.values(lane.cluster.dataPlaneOperators).map((id) => [id.toLowerCase(), id]));
    const violations = checkPass(
      {
        outcome,
        before,
        after,
        expectedForeign,
        desired,
        reportedStatus: reported,
        deletedDuringPass,
        errorMessage,
        documentId: lane.cluster.serviceProviderClusterDocumentId,
      },
      sandbox.identities,
      reliability.secrets(),
    );
    const [onlyFault] = planned;
    if (planned.length === 1 && onlyFault?.kind.global === true && onlyFault.rule.triggered > 0 && outcome !== "globalFailure") {
      // A credential or authentication fault says nothing about any identity: the pass must end before any write.
      violations.push(`${onlyFault.kind.name} ended the pass as ${outcome}, not as a global failure (AzureAccessError): ${errorMessage ?? "no error"}`);
    }
    if (hostFault !== undefined && outcome !== "globalFailure") {
      // A host that cannot be reached says nothing about any identity: the pass must end before any write.
      violations.push(`${hostFault.name} ended the pass as ${outcome}, not as a global failure (AzureAccessError): ${errorMessage ?? "no error"}`);
    }
    figures.passes += 1;
    figures.outcomes[outcome] += 1;
    if (outcome === "globalFailure") {
      const name = hostFault?.name ?? (planned.map(({ kind }) => kind.name).join("+") || "no fault");
      figures.globalFailuresByFault[name] = (figures.globalFailuresByFault[name] ?? 0) + 1;
    }
    if (outcome === "crashed") figures.crashes += 1;
    if (violations.length > 0) {
      figures.violationCount += violations.length;
      const faults = hostFault?.name ?? (planned.map(({ kind }) => kind.name).join("+") || "no fault");
      for (const violation of violations.slice(0, 3)) if (figures.violations.length < 25) figures.violations.push(`pass ${number} (${faults}): ${violation}`);
    }
    if (deletedDuringPass && before !== undefined) {
      // The resource provider recreates the document; the hook must then write it from scratch.
      sandbox.documents.put(structuredClone(before));
      lane.outputs = undefined;
    }
  };

  const lanePassesPerLane = Math.ceil(options.lanePasses / options.lanes);
  let lanePassesLeft = options.lanePasses;
  await Promise.all(
    lanes.map(async (lane) => {
      for (let index = 0; index < lanePassesPerLane && lanePassesLeft > 0; index += 1) {
        lanePassesLeft -= 1;
        await runPass(lane, laneFaultKinds);
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
          await runPass(lane, [], hostProvider, kind);
        }
      }),
    );
  }
  // Token faults: every request needs a fresh token (1 s lifetime), so every pass meets the endpoint.
  // A credential for another client ID has an empty MSAL cache, so its first token has the short lifetime.
  const lifetime = sandbox.tokens.tokenLifetimeInMs;
  sandbox.tokens.setTokenLifetime(1000);
  const tokenPhaseProvider = reliability.provider({ managedIdentityClientId: randomUUID() });
  try {
    for (let index = 0; index < options.tokenPasses; index += 1) {
      await runPass(lanes[index % lanes.length], tokenFaultKinds, tokenPhaseProvider);
    }
  } finally {
    sandbox.tokens.setTokenLifetime(lifetime);
  }

  process.off("unhandledRejection", onUnhandled);
  const statistics = sandbox.statistics.snapshot();
  figures.writesWithoutIfMatch = statistics.cosmos.writesWithoutIfMatch.length - statisticsBefore.cosmos.writesWithoutIfMatch.length;
  figures.armRequests = statistics.arm.getRequests - statisticsBefore.arm.getRequests;
  figures.cosmosDocumentWrites = sumValues(statistics.cosmos.documentWritesByMethod) - sumValues(statisticsBefore.cosmos.documentWritesByMethod);
  if (figures.writesWithoutIfMatch > 0) {
    figures.violationCount += figures.writesWithoutIfMatch;
    figures.violations.push(`${figures.writesWithoutIfMatch} Cosmos writes without If-Match`);
  }
  figures.crashes += unexpected.length;
  figures.violationCount += unexpected.length;
  figures.violations.push(...unexpected.slice(0, 5));
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

function pickIdentity(cluster: FleetClusterDescription, random: () => number): string {
  const identities = Object.values(cluster.dataPlaneOperators);
  return identities[Math.floor(random() * identities.length)] ?? identities[0] ?? "";
}

function sumValues(record: Record<string, number>): number {
  return Object.values(record).reduce((sum, value) => sum + value, 0);
}

/** The provider type, re-exported for callers that build their own. */
export type { StatusProvider };
