/**
 * Renders the figures of a reliability run: the generated section of docs/reliability.md (numbers
 * and tables; the page says in its own words how the scenarios run and what the figures mean).
 */
import type { BadInputResult } from "./badInputCatalogue";
import { clusterFaultKinds, runFaultKinds } from "./clusterFaultCatalogue";
import type { ClusterModeFigures } from "./clusterModeCampaign";
import type { ConcurrentWriterFigures } from "./concurrentWriters";
import type { EngineSampleFigures } from "./engineSample";
import type { CampaignFigures } from "./faultCampaign";
import { deleteFaultKinds, hostFaultKinds, laneFaultKinds, settingsFaultKinds, tokenFaultKinds } from "./faultCatalogue";
import type { InterruptionFigures } from "./interruptedScenario";
import { invariantCatalogue, invariantOf } from "./invariants";
import { sumOfCounts } from "../performance/statistics";

/** Everything one run measured. */
export interface ReliabilityFigures {
  readonly generatedAt: string;
  readonly campaign: CampaignFigures;
  /** The cluster-mode phase (clusterServiceManagedIdentity over a per-cluster sandbox). */
  readonly clusterMode: ClusterModeFigures;
  readonly engineSample: EngineSampleFigures;
  readonly concurrentWriters: ConcurrentWriterFigures;
  readonly interruptions: readonly InterruptionFigures[];
  readonly badInputs: readonly BadInputResult[];
  readonly settings: Readonly<Record<string, string>>;
}

/** Total invariant violations (and crashes, leaks and catalogue problems) of a run. */
export function totalViolations(figures: ReliabilityFigures): number {
  return (
    figures.campaign.violationCount +
    figures.clusterMode.violationCount +
    figures.engineSample.violations.length +
    figures.engineSample.secretLeaks.length +
    figures.concurrentWriters.violations.length +
    figures.concurrentWriters.lostForeignEdits +
    figures.interruptions.reduce((sum, interruption) => sum + interruption.violations.length, 0) +
    figures.badInputs.reduce((sum, row) => sum + row.problems.length, 0)
  );
}

const cell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();

function faultTable(campaign: CampaignFigures, engine: EngineSampleFigures): string[] {
  const lines = [
    "| Fault | What the sandbox does | Rules added | Times fired (campaign) | Passes with this fault alone (fired) ended by a global failure, nothing written | Times fired (engine sample) |",
    "|---|---|---:|---:|---:|---:|",
  ];
  for (const kind of [...laneFaultKinds, ...tokenFaultKinds, ...hostFaultKinds]) {
    lines.push(
      `| ${kind.name} | ${cell(kind.description)} | ${campaign.faultsPlanned[kind.name] ?? 0} | ${campaign.faultsInjected[kind.name] ?? 0} | ${campaign.globalFailuresByFault[kind.name] ?? 0} of ${campaign.singleFaultPasses[kind.name] ?? 0} | ${engine.faultsInjected[kind.name] ?? 0} |`,
    );
  }
  // Not passes: a delete and a wrong setting have no global-failure column of their own.
  for (const kind of [...deleteFaultKinds, ...settingsFaultKinds]) {
    lines.push(
      `| ${kind.name} | ${cell(kind.description)} | ${campaign.faultsPlanned[kind.name] ?? 0} | ${campaign.faultsInjected[kind.name] ?? 0} | — | ${engine.faultsInjected[kind.name] ?? 0} |`,
    );
  }
  return lines;
}

function deletesLine(deletes: CampaignFigures["deletes"]): string {
  const total = deletes.plain + deletes.withOtherWriter + deletes.renamed;
  const outputs = Object.entries(deletes.byOutputs)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
  return (
    `Deletes: ${total}; ${deletes.plain} plain (${deletes.clusterGone} of them after the cluster's documents were deleted), ${deletes.withOtherWriter} after another writer recorded a fresh status, ` +
    `${deletes.renamed} after a rename (a resource of the same cluster created first; ${deletes.renameCreatesWroteNothing} of those creates, over a current status, wrote nothing). ` +
    `Outputs handed to them: ${outputs || "none"}. ${deletes.wroteNothing} of ${total} succeeded and left the ServiceProviderCluster document exactly as it was, etag and instanceVersion included.`
  );
}

/** Violations of every scenario by invariant (indexes of invariantCatalogue): the campaign counts its own, the other scenarios' are attributed here. */
function violationsByInvariant(figures: ReliabilityFigures): number[] {
  const counts = figures.campaign.violationsByInvariant.map((count, index) => count + (figures.clusterMode.violationsByInvariant[index] ?? 0));
  const others = [
    ...figures.engineSample.violations,
    ...figures.engineSample.secretLeaks,
    ...figures.concurrentWriters.violations,
    ...figures.interruptions.flatMap((run) => run.violations),
    ...figures.badInputs.flatMap((row) => row.problems),
  ];
  for (const violation of others) counts[invariantOf(violation)] = (counts[invariantOf(violation)] ?? 0) + 1;
  return counts;
}

function invariantTable(figures: ReliabilityFigures): string[] {
  const counts = violationsByInvariant(figures);
  return [
    "| # | Invariant | Violations |",
    "|---:|---|---:|",
    ...invariantCatalogue.map((invariant, index) => `| ${index + 1} | ${cell(invariant.statement)} | ${counts[index] ?? 0} |`),
  ];
}

function interruptionLines(interruptions: readonly InterruptionFigures[]): string[] {
  const lines = [
    "| Killed during | Processes killed (SIGKILL) | Lock files left | Pending operations left | Next `up` without recovery | Recovery steps | `up` after recovery | One more `up` | Violations |",
    "|---|---|---:|---|---|---|---|---|---:|",
  ];
  for (const run of interruptions) {
    lines.push(
      `| ${run.phase} | CLI ${run.killedCli}, provider host ${run.killedProviderHosts} | ${run.lockFilesLeft} | ${cell(run.pendingOperations.join(", ") || "none")} | ${cell(run.blockedBy)} | ${cell(run.recoverySteps.join("; ") || "none")} | ${cell(run.convergedResult)} | ${cell(JSON.stringify(run.followUpChanges))} | ${run.violations.length} |`,
    );
  }
  return lines;
}

const expectationText: Record<string, string> = {
  clusterFailure: "a ClusterCredentialError naming the cluster, nothing written",
  nothingWritten: "a failure before any write naming the SMI, nothing written",
  definitive403: "the refused identities' IDs cleared beside a 403, the rest recorded",
  recovers: "exactly a fault-free run",
};

function clusterModeLines(mode: ClusterModeFigures): string[] {
  const lines = [
    `${mode.runs} runs (each a provider process with a credential cache of its own, reconciling every cluster of the fleet side by side), ${mode.passes} passes, plus ${mode.referencePasses} fault-free reruns for the comparisons. Outcomes: ${mode.outcomes.succeeded} succeeded, ${mode.outcomes.lookupFailed} failed after persisting, ${mode.outcomes.writeFailed} failed without writing, ${mode.outcomes.clusterFailure} ended by a cluster credential failure (ClusterCredentialError) before any write, ${mode.outcomes.globalFailure} ended by a global failure (AzureAccessError) before any write, ${mode.outcomes.msiFailed} wrote no MSI half (MsiIdentitiesError) beside a data plane half decided as usual, ${mode.outcomes.crashed} crashed. World changes: ${
      Object.entries(mode.changes)
        .map(([name, count]) => `${count} × ${name}`)
        .join(", ") || "none"
    }.`,
    "",
    `Isolation: after a fault aimed at one cluster, ${mode.isolation.compared} other clusters' passes were compared with a fault-free rerun from the same document (${mode.isolation.comparedAfterCredentialFaults} of them after a data plane, SMI or role fault); ${mode.isolation.differed} differed.`,
    "",
    `Counted by the sandbox: ${mode.dataPlaneRequests} data plane requests (${Object.entries(mode.dataPlaneResponsesByStatus)
      .map(([status, count]) => `${count} × ${status === "0" ? "reset" : status}`)
      .join(", ")}), ${mode.entraTokensIssued} Entra tokens issued, Entra refusals by AADSTS code (90033: an injected fault; 700027: a certificate refused) ${
      Object.entries(mode.entraErrorsByCode)
        .map(([code, count]) => `${code}: ${count}`)
        .join(", ") || "none"
    }, ${mode.armForbidden} ARM 403 answers, ${mode.cosmosDocumentWrites} Cosmos document writes, ${mode.writesWithoutIfMatch} without If-Match. Phase duration ${(mode.durationInMs / 1000).toFixed(1)} s.`,
    "",
    "| Fault (aimed at one cluster) | What the sandbox does | Rules added | Times fired | Target passes with this fault alone (fired) that ended as expected | Expected |",
    "|---|---|---:|---:|---:|---|",
  ];
  for (const kind of clusterFaultKinds) {
    lines.push(
      `| ${kind.name} | ${cell(kind.description)} | ${mode.faultsPlanned[kind.name] ?? 0} | ${mode.faultsInjected[kind.name] ?? 0} | ${mode.endedAsExpected[kind.name] ?? 0} of ${mode.singleFaultPasses[kind.name] ?? 0} | ${expectationText[kind.expected] ?? kind.expected} |`,
    );
  }
  for (const kind of laneFaultKinds) {
    if ((mode.faultsPlanned[kind.name] ?? 0) === 0) continue;
    lines.push(
      `| ${kind.name} (process-mode lane fault) | ${cell(kind.description)} | ${mode.faultsPlanned[kind.name] ?? 0} | ${mode.faultsInjected[kind.name] ?? 0} | ${kind.global === true ? `${mode.endedAsExpected[kind.name] ?? 0} of ${mode.singleFaultPasses[kind.name] ?? 0}` : `— (${mode.singleFaultPasses[kind.name] ?? 0} alone)`} | ${kind.global === true ? "a global failure, nothing written" : "the invariants"} |`,
    );
  }
  lines.push(
    "",
    "| Fault of the first-party credential (a whole run) | What happens | Runs | Times fired | Passes that must write nothing: did | Passes that must end as a fault-free run: did | Next run (a new process): ended as a fault-free run |",
    "|---|---|---:|---:|---:|---:|---:|",
  );
  for (const kind of runFaultKinds) {
    const passes = mode.runFaultPasses[kind.name];
    lines.push(
      `| ${kind.name} | ${cell(kind.description)} | ${passes?.runs ?? 0} | ${mode.faultsInjected[kind.name] ?? 0} | ${passes?.nothingWrittenAsExpected ?? 0} of ${passes?.nothingWritten ?? 0} | ${passes?.faultFreeAsExpected ?? 0} of ${passes?.faultFree ?? 0} | ${passes === undefined || passes.nextRun === 0 ? "—" : `${passes.nextRunAsExpected} of ${passes.nextRun}`} |`,
    );
  }
  lines.push("", `Cluster-mode faults fired in all: ${sumOfCounts(mode.faultsInjected)}.`);
  return lines;
}

/** The Markdown text of the generated section of docs/reliability.md. */
export function renderReliabilityReport(figures: ReliabilityFigures): string {
  const { campaign, engineSample, concurrentWriters: writers } = figures;
  const total = totalViolations(figures);
  const byInvariant = violationsByInvariant(figures);
  const violationsOf = (key: string): number => byInvariant[invariantCatalogue.findIndex((invariant) => invariant.key === key)] ?? 0;
  const { clusterMode } = figures;
  const violations = [
    ...campaign.violations,
    ...clusterMode.violations,
    ...engineSample.violations,
    ...engineSample.secretLeaks,
    ...writers.violations,
    ...figures.interruptions.flatMap((run) => run.violations),
    ...figures.badInputs.flatMap((row) => row.problems.map((problem) => `${row.name}: ${problem}`)),
  ];
  return [
    `Run: \`npm run reliability\` on ${figures.generatedAt}.`,
    "",
    "## Summary",
    "",
    "| Measure | Value | Target |",
    "|---|---:|---:|",
    `| Reconcile passes, in-process provider (real SDK clients over HTTPS) | ${campaign.passes} | ≥ 1000 |`,
    `| Reconcile passes in cluster mode (\`clusterServiceManagedIdentity\`, each cluster its own tenant; plus ${clusterMode.referencePasses} fault-free reruns) | ${clusterMode.passes} | |`,
    `| Reconcile passes through the real engine (\`pulumi up --refresh\`) | ${engineSample.passes} | ~20 |`,
    `| Faults fired | ${[campaign.faultsInjected, clusterMode.faultsInjected, engineSample.faultsInjected].reduce((sum, counts) => sum + Object.values(counts).reduce((total, count) => total + count, 0), 0)} | |`,
    `| Invariant violations (all scenarios) | ${total} | 0 |`,
    `| … of them: a stored clientId/principalId cleared without a definitive answer about the identity | ${violationsOf("definitiveAnswers")} | 0 |`,
    `| … of them: a stored ID changed by a non-definitive answer (another 404, a malformed or partial answer) | ${violationsOf("nonDefinitiveAnswers")} | 0 |`,
    `| … of them: something stored changed by a failure not about one identity | ${violationsOf("globalFailures")} | 0 |`,
    `| … of them: a resource whose document exists lost from state | ${violationsOf("stateKeepsResources")} | 0 |`,
    `| … of them: another cluster's document or state changed by a cluster's failure | ${violationsOf("clusterIsolation")} | 0 |`,
    `| Provider crashes | ${campaign.crashes + clusterMode.crashes} | 0 |`,
    `| Cosmos writes without If-Match | ${campaign.writesWithoutIfMatch + clusterMode.writesWithoutIfMatch} | 0 |`,
    `| Secrets found in engine output, logs, state and history | ${engineSample.secretLeaks.length} | 0 |`,
    `| Campaign duration (process mode + cluster mode) | ${(campaign.durationInMs / 1000).toFixed(1)} s + ${(clusterMode.durationInMs / 1000).toFixed(1)} s | a few minutes |`,
    "",
    "Settings of the campaign: " +
      Object.entries(figures.settings)
        .map(([key, value]) => `\`${key}=${value}\``)
        .join(", ") +
      ".",
    "",
    "## 1. Fault campaign",
    "",
    "Violations of every scenario of this run, by invariant:",
    "",
    ...invariantTable(figures),
    "",
    `Outcomes: ${campaign.outcomes.succeeded} succeeded, ${campaign.outcomes.lookupFailed} failed after persisting (lookup errors recorded), ${campaign.outcomes.writeFailed} failed without writing, ${campaign.outcomes.globalFailure} ended by a global failure before any write (stored IDs unchanged), ${campaign.outcomes.msiFailed} wrote no MSI half (MsiIdentitiesError) beside a data plane half decided as usual, ${campaign.outcomes.crashed} crashed. ARM GETs: ${campaign.armRequests}; Cosmos document writes: ${campaign.cosmosDocumentWrites}. World changes: ${Object.entries(
      campaign.changes,
    )
      .map(([name, count]) => `${count} × ${name}`)
      .join(", ")}.`,
    "",
    `Stored IDs in the passes that looked every identity up and wrote (entries that held a clientId/principalId before the pass): ${campaign.storedIds.confirmed} confirmed by a read, ${campaign.storedIds.replacedByRead} replaced by a read returning other values, ${campaign.storedIds.clearedByNotFound} cleared by ARM's ResourceNotFound, ${campaign.storedIds.keptBesideError} kept beside a retrievalError because the lookup failed without a definitive answer.`,
    "",
    ...faultTable(campaign, engineSample),
    "",
    "Passes ended by a global failure beyond the table: " +
      `with two faults: ${
        Object.entries(campaign.globalFailuresByFault)
          .filter(([name]) => name.includes("+"))
          .map(([name, count]) => `${count} × ${name}`)
          .join(", ") || "none"
      }; without a fault: ${campaign.globalFailuresByFault["no fault"] ?? 0}.`,
    "",
    `Refreshes (\`read\`): ${campaign.refreshes.kept + campaign.refreshes.dropped + campaign.refreshes.failed}; ${campaign.refreshes.kept} returned the resource with the persisted status, ${campaign.refreshes.dropped} dropped it (its cluster's documents deleted, its subscription's document there; a ServiceProviderCluster document deleted alone, by \`cosmos-delete-before-write\` or before the refresh, keeps the resource), ${campaign.refreshes.failed} failed.`,
    "",
    deletesLine(campaign.deletes),
    "",
    `Settings faults (${settingsFaultKinds.map((kind) => `\`${kind.setting}\``).join(" or ")} naming a Cosmos resource that does not exist): ${campaign.settingsOperations.failedNamingSetting} of ${campaign.settingsOperations.run} refreshes and updates failed naming the setting and its value; ${campaign.settingsOperations.deletesWroteNothing} of ${campaign.settingsOperations.deletes} deletes succeeded and wrote nothing.`,
    "",
    `Through the engine, \`pulumi refresh --run-program\` with \`cosmosContainer=${engineSample.wrongContainerRefresh.container}\`: ${engineSample.wrongContainerRefresh.refreshFailed ? "failed" : "**succeeded**"} with \`${cell(engineSample.wrongContainerRefresh.message)}\`; status resources in state ${engineSample.wrongContainerRefresh.resourcesBefore} before, ${engineSample.wrongContainerRefresh.resourcesAfter} after; documents ${engineSample.wrongContainerRefresh.documentsUnchanged ? "unchanged" : "**changed**"}; the \`up\` with the right container afterwards: ${engineSample.wrongContainerRefresh.upAfterwards}, ${engineSample.wrongContainerRefresh.resourcesAfterUp} status resources in state.`,
    "",
    "## 1b. Cluster mode",
    "",
    ...clusterModeLines(clusterMode),
    "",
    "## 2. Concurrent writers",
    "",
    `${writers.rounds} rounds; third writer's foreign edits: ${writers.thirdWriterEdits}, its retries: ${writers.thirdWriterRetries}; writes answered 412: ${writers.preconditionFailures}.`,
    "",
    `- Lost updates: ${writers.lostForeignEdits} foreign edits lost; every round ended with the current ARM values (violations: ${writers.violations.length}).`,
    `- Bounded retries: at most ${writers.maxProviderPatchesPerRound} provider writes in one round (bound ${writers.patchBoundPerRound} = 2 writers × maxWriteAttempts); ${writers.providerFailures} of ${writers.providerPasses} provider passes failed.`,
    `- Retries exhausted (a writer that loses every race): \`${cell(writers.exhaustedMessage)}\`; owned subtree unchanged: ${writers.exhaustedLeftSubtreeUnchanged ? "yes" : "no"}.`,
    "",
    "## 3. Interrupted runs",
    "",
    ...interruptionLines(figures.interruptions),
    "",
    "## 4. Bad input catalogue",
    "",
    "| Input | Stage | Message | Written |",
    "|---|---|---|---|",
    ...figures.badInputs.map(
      (row) =>
        `| ${cell(row.name)} | ${row.stage} | ${cell(row.message.length > 400 ? `${row.message.slice(0, 400)}…` : row.message)} | ${row.written}${row.problems.length > 0 ? ` — **${cell(row.problems.join("; "))}**` : ""} |`,
    ),
    "",
    "## 5. Secrets",
    "",
    "| Source | Characters scanned | Secrets found |",
    "|---|---:|---:|",
    ...Object.entries(engineSample.scannedCharacters).map(
      ([name, size]) => `| ${name} | ${size} | ${engineSample.secretLeaks.filter((leak) => leak.startsWith(name)).length} |`,
    ),
    "",
    "## Violations",
    "",
    violations.length === 0
      ? "None."
      : violations
          .slice(0, 40)
          .map((violation) => `- ${cell(violation)}`)
          .join("\n"),
    "",
  ].join("\n");
}
