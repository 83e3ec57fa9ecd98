/**
 * Concurrent writers: two provider instances, each with its own Cosmos and ARM clients, reconcile
 * the same cluster document at the same time while a third writer (the real Cosmos SDK, with
 * If-Match and its own retries) edits foreign fields. After every round the document must hold
 * every foreign edit and the current ARM values; retries must stay within maxWriteAttempts, and
 * running out of attempts must fail with a message that says so.
 */
import { isDeepStrictEqual } from "node:util";
import type { PatchOperation } from "@azure/cosmos";
import { isJsonObject } from "../../resources/core/json";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { checkSettledDocument } from "./invariants";
import { classifyFailure } from "./passSteps";
import type { Document, ReliabilitySandbox, StatusProvider } from "./reliabilitySandbox";
import { foreignFields, inputsFor, makeRecheckDue, readServiceProviderCluster, seedLanes } from "./reliabilitySandbox";

/** What the scenario measured. */
export interface ConcurrentWriterFigures {
  rounds: number;
  providerPasses: number;
  providerFailures: number;
  thirdWriterEdits: number;
  thirdWriterRetries: number;
  preconditionFailures: number;
  /** The most PATCH requests one round's two provider passes made. */
  maxProviderPatchesPerRound: number;
  /** The bound: two writers times maxWriteAttempts. */
  patchBoundPerRound: number;
  lostForeignEdits: number;
  violations: string[];
  /** The error of a writer that kept losing the race, for the report. */
  exhaustedMessage: string;
  exhaustedLeftSubtreeUnchanged: boolean;
}

async function thirdWriterEdit(reliability: ReliabilitySandbox, cluster: FleetClusterDescription, editNumber: number): Promise<number> {
  const item = reliability.sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
  for (let attempt = 0; ; attempt += 1) {
    const { resource, etag } = await item.read<Document>();
    if (resource === undefined) throw new Error("the document disappeared");
    const operations: PatchOperation[] = [{ op: "set", path: `/properties/thirdWriterEdits/edit-${editNumber}`, value: { editNumber } }];
    if (!isJsonObject((resource.properties as Document).thirdWriterEdits)) {
      operations[0] = { op: "set", path: "/properties/thirdWriterEdits", value: { ...{}, [`edit-${editNumber}`]: { editNumber } } };
    }
    try {
      await item.patch({ operations }, { accessCondition: { type: "IfMatch", condition: etag } });
      return attempt;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 412 || attempt > 20) throw error;
    }
  }
}

function patchesOf(reliability: ReliabilitySandbox, cluster: FleetClusterDescription): number {
  return reliability.sandbox.statistics.snapshot().cosmos.documentWritesByDocument[cluster.serviceProviderClusterDocumentId] ?? 0;
}

/** Runs `rounds` rounds of two reconciling writers and a foreign writer on one document. */
export async function runConcurrentWriters(reliability: ReliabilitySandbox, rounds: number): Promise<ConcurrentWriterFigures> {
  const { sandbox } = reliability;
  const [cluster] = seedLanes(sandbox, "concurrent", 1, 4) as [FleetClusterDescription];
  const maxWriteAttempts = Number(reliability.config.maxWriteAttempts);
  // Different settings give each writer its own clients (the cache is keyed by the settings).
  const writers: StatusProvider[] = [reliability.provider({ lookupConcurrency: "5" }), reliability.provider({ lookupConcurrency: "6" })];
  const figures: ConcurrentWriterFigures = {
    rounds,
    providerPasses: 0,
    providerFailures: 0,
    thirdWriterEdits: 0,
    thirdWriterRetries: 0,
    preconditionFailures: 0,
    maxProviderPatchesPerRound: 0,
    patchBoundPerRound: 2 * maxWriteAttempts,
    lostForeignEdits: 0,
    violations: [],
    exhaustedMessage: "",
    exhaustedLeftSubtreeUnchanged: false,
  };
  const preconditionBefore = sandbox.statistics.snapshot().cosmos.responsesByStatus["412"] ?? 0;
  let expectedForeign = foreignFields(readServiceProviderCluster(sandbox, cluster) ?? {});
  let editNumber = 0;
  const identities = Object.values(cluster.dataPlaneOperators);
  for (let round = 0; round < rounds; round += 1) {
    sandbox.identities.rotate(identities[round % identities.length] ?? "");
    makeRecheckDue(sandbox, cluster);
    const patchesBefore = patchesOf(reliability, cluster);
    const edits = [editNumber + 1, editNumber + 2, editNumber + 3];
    editNumber += 3;
    let thirdWriterPatches = 0;
    const [passes, retries] = await Promise.all([
      Promise.allSettled(writers.map((writer) => writer.create(inputsFor(cluster)))),
      Promise.all(edits.map(async (edit) => thirdWriterEdit(reliability, cluster, edit))),
    ]);
    for (const retry of retries) {
      figures.thirdWriterRetries += retry;
      thirdWriterPatches += retry + 1;
    }
    figures.thirdWriterEdits += edits.length;
    figures.providerPasses += passes.length;
    for (const pass of passes) {
      if (pass.status === "rejected") {
        figures.providerFailures += 1;
        const failure = classifyFailure(pass.reason);
        if (!/after \d+ attempts/.test(failure.message)) figures.violations.push(`round ${round}: unexpected failure: ${failure.message}`);
      }
    }
    figures.maxProviderPatchesPerRound = Math.max(figures.maxProviderPatchesPerRound, patchesOf(reliability, cluster) - patchesBefore - thirdWriterPatches);
    const thirdWriterEdits = { ...((expectedForeign.properties as Document).thirdWriterEdits as Document) };
    for (const edit of edits) thirdWriterEdits[`edit-${edit}`] = { editNumber: edit };
    expectedForeign = { ...expectedForeign, properties: { ...(expectedForeign.properties as Document), thirdWriterEdits } };
    const after = readServiceProviderCluster(sandbox, cluster);
    const stored = ((after?.properties as Document | undefined)?.thirdWriterEdits ?? {}) as Document;
    figures.lostForeignEdits += Object.keys(thirdWriterEdits).filter((key) => !isDeepStrictEqual(stored[key], thirdWriterEdits[key])).length;
    const anySucceeded = passes.some((pass) => pass.status === "fulfilled");
    const desired = new Map(identities.map((id) => [id.toLowerCase(), id]));
    const violations = checkSettledDocument(
      after,
      { outcome: anySucceeded ? "succeeded" : "writeFailed", expectedForeign, desired, documentId: cluster.serviceProviderClusterDocumentId },
      sandbox.identities,
      reliability.secrets(),
    );
    figures.violations.push(...violations.map((violation) => `round ${round}: ${violation}`));
  }
  figures.preconditionFailures = (sandbox.statistics.snapshot().cosmos.responsesByStatus["412"] ?? 0) - preconditionBefore;
  if (figures.maxProviderPatchesPerRound > figures.patchBoundPerRound) {
    figures.violations.push(`a round made ${figures.maxProviderPatchesPerRound} provider writes, above the bound of ${figures.patchBoundPerRound}`);
  }
  await exhaust(reliability, cluster, figures);
  return figures;
}

/** A writer that loses every race: it must give up after maxWriteAttempts with a clear error. */
async function exhaust(reliability: ReliabilitySandbox, cluster: FleetClusterDescription, figures: ConcurrentWriterFigures): Promise<void> {
  const { sandbox } = reliability;
  const attempts = Number(reliability.config.maxWriteAttempts);
  sandbox.identities.rotate(Object.values(cluster.dataPlaneOperators)[0] ?? "");
  makeRecheckDue(sandbox, cluster);
  const before = readServiceProviderCluster(sandbox, cluster);
  const rule = sandbox.faults.add({
    target: "cosmos",
    kind: "race",
    count: attempts + 5,
    match: { documentId: cluster.serviceProviderClusterDocumentId, operation: "write" },
  });
  try {
    await reliability.provider().create(inputsFor(cluster));
    figures.violations.push("a writer that lost every race reported success");
  } catch (error) {
    figures.exhaustedMessage = classifyFailure(error).message;
  } finally {
    rule.remaining = 0;
  }
  if (rule.triggered !== attempts) {
    figures.violations.push(`the losing writer tried ${rule.triggered} times; maxWriteAttempts is ${attempts}`);
  }
  if (!figures.exhaustedMessage.includes(`after ${attempts} attempts`) || !figures.exhaustedMessage.includes(cluster.serviceProviderClusterDocumentId)) {
    figures.violations.push(`the exhausted-retries error does not name the document and the attempts: ${figures.exhaustedMessage}`);
  }
  const after = readServiceProviderCluster(sandbox, cluster);
  const status = (document: Document | undefined): unknown =>
    ((document?.properties as Document | undefined)?.status as Document | undefined)?.dataPlaneOperatorsManagedIdentities;
  figures.exhaustedLeftSubtreeUnchanged = isDeepStrictEqual(status(after), status(before));
  if (!figures.exhaustedLeftSubtreeUnchanged) figures.violations.push("the losing writer changed the owned subtree");
}
