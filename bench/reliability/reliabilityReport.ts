/**
 * Renders the figures of a reliability run as docs/reliability.md.
 */
import type { BadInputResult } from "./badInputCatalogue";
import type { ConcurrentWriterFigures } from "./concurrentWriters";
import type { EngineSampleFigures } from "./engineSample";
import type { CampaignFigures } from "./faultCampaign";
import { deleteFaultKinds, hostFaultKinds, laneFaultKinds, settingsFaultKinds, tokenFaultKinds } from "./faultCatalogue";
import type { InterruptionFigures } from "./interruptedScenario";
import { invariantCatalogue, invariantOf } from "./invariants";

/** Everything one run measured. */
export interface ReliabilityFigures {
  readonly generatedAt: string;
  readonly campaign: CampaignFigures;
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

/** Violations of every scenario by invariant (indexes of invariantCatalogue): the campaign counts its own, the other scenarios' are attributed here. */
function violationsByInvariant(figures: ReliabilityFigures): number[] {
  const counts = [...figures.campaign.violationsByInvariant];
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

/** The Markdown text of docs/reliability.md. */
export function renderReliabilityReport(figures: ReliabilityFigures): string {
  const { campaign, engineSample, concurrentWriters: writers } = figures;
  const total = totalViolations(figures);
  const byInvariant = violationsByInvariant(figures);
  const violationsOf = (key: string): number => byInvariant[invariantCatalogue.findIndex((invariant) => invariant.key === key)] ?? 0;
  const violations = [
    ...campaign.violations,
    ...engineSample.violations,
    ...engineSample.secretLeaks,
    ...writers.violations,
    ...figures.interruptions.flatMap((run) => run.violations),
    ...figures.badInputs.flatMap((row) => row.problems.map((problem) => `${row.name}: ${problem}`)),
  ];
  return [
    "# Reliability and security, measured",
    "",
    `Generated by \`npm run reliability\` (bench/reliability/main.ts) on ${figures.generatedAt}. Every figure below comes from that run; rerun it to refresh this page. The same scenarios run, smaller, in \`npm test\` (test/e2e/reliability*.test.ts, test/integration/sandboxSecurity.test.ts).`,
    "",
    "## Summary",
    "",
    "| Measure | Value | Target |",
    "|---|---:|---:|",
    `| Reconcile passes, in-process provider (real SDK clients over HTTPS) | ${campaign.passes} | ≥ 1000 |`,
    `| Reconcile passes through the real engine (\`pulumi up --refresh\`) | ${engineSample.passes} | ~20 |`,
    `| Faults fired | ${Object.values(campaign.faultsInjected).reduce((sum, count) => sum + count, 0) + Object.values(engineSample.faultsInjected).reduce((sum, count) => sum + count, 0)} | |`,
    `| Invariant violations (all scenarios) | ${total} | 0 |`,
    `| … of them: a stored clientId/principalId cleared without a definitive answer about the identity | ${violationsOf("definitiveAnswers")} | 0 |`,
    `| … of them: something stored changed by a failure not about one identity | ${violationsOf("globalFailures")} | 0 |`,
    `| … of them: a resource whose document exists lost from state | ${violationsOf("stateKeepsResources")} | 0 |`,
    `| Provider crashes | ${campaign.crashes} | 0 |`,
    `| Cosmos writes without If-Match | ${campaign.writesWithoutIfMatch} | 0 |`,
    `| Secrets found in engine output, logs, state and history | ${engineSample.secretLeaks.length} | 0 |`,
    `| Campaign duration | ${(campaign.durationInMs / 1000).toFixed(1)} s | a few minutes |`,
    "",
    "Settings of the campaign: " +
      Object.entries(figures.settings)
        .map(([key, value]) => `\`${key}=${value}\``)
        .join(", ") +
      ".",
    "",
    "## 1. Fault campaign",
    "",
    "Each pass: change the world (rotate an identity in ARM, delete or recreate one, edit a foreign field of the document, add a field the hook does not know inside the owned subtree), make the stored recheck time due, add zero, one or two faults scoped to the pass's cluster, run `create`/`update` of the real provider (with its default settings: stored IDs are kept on a failed lookup, and the process's own credential reads the identities), then read the document back from Cosmos and check the invariants below. When another writer's edit raced in inside the owned subtree, the pass is judged against the document as its decision last saw it: the one before the pass with that edit applied. Some passes are followed by a refresh (`read`) with a fault of its own; then come phases of deletes, host faults, settings faults and token faults.",
    "",
    ...invariantTable(figures),
    "",
    `The Violations column counts every scenario of this page (campaign, engine sample, concurrent writers, interrupted runs, catalogue), each violation under the invariant it breaks.`,
    "",
    `Outcomes: ${campaign.outcomes.succeeded} succeeded, ${campaign.outcomes.lookupFailed} failed after persisting (lookup errors recorded), ${campaign.outcomes.writeFailed} failed without writing, ${campaign.outcomes.globalFailure} ended by a global failure before any write (stored IDs unchanged), ${campaign.outcomes.crashed} crashed. ARM GETs: ${campaign.armRequests}; Cosmos document writes: ${campaign.cosmosDocumentWrites}. World changes: ${Object.entries(
      campaign.changes,
    )
      .map(([name, count]) => `${count} × ${name}`)
      .join(", ")}.`,
    "",
    `Stored IDs in the passes that looked every identity up and wrote (entries that held a clientId/principalId before the pass): ${campaign.storedIds.confirmed} confirmed by a read, ${campaign.storedIds.replacedByRead} replaced by a read returning other values, ${campaign.storedIds.clearedByNotFound} cleared by a 404, ${campaign.storedIds.keptBesideError} kept beside a retrievalError because the lookup failed without a definitive answer.`,
    "",
    ...faultTable(campaign, engineSample),
    "",
    "Token-endpoint faults run in a sequential phase with a 1 s token lifetime and a credential for another client ID (an empty MSAL cache), so every request meets the token endpoint.",
    "Host faults run in a phase of their own, each pass with a provider in front of the failed host (for `arm-host-down`, its Times fired counts the passes it hit); such a pass must end as a global failure, or it counts as a violation.",
    "A failure not about one identity (credential, ARM 401, ARM unreachable, every lookup of the pass failing alike) must leave the owned subtree, stored clientId/principalId values included, exactly as it was, checked against the document read back from Cosmos; a pass whose only fault is one of these must end as a global failure, or it counts as a violation. The global-failure column counts, among the passes whose only fault was that one and fired, those that ended so; " +
      `passes with two faults that ended so: ${
        Object.entries(campaign.globalFailuresByFault)
          .filter(([name]) => name.includes("+"))
          .map(([name, count]) => `${count} × ${name}`)
          .join(", ") || "none"
      }; without a fault: ${campaign.globalFailuresByFault["no fault"] ?? 0}.`,
    "",
    `Refreshes: ${campaign.refreshes.kept + campaign.refreshes.dropped + campaign.refreshes.failed} of the lane passes were followed by a refresh (\`read\`, what \`pulumi refresh\` calls; about half of them with the recheck made due so that it asks ARM, some after an identity was recreated in ARM), most with a fault of their own drawn from the table above (counted in it): ${campaign.refreshes.kept} returned the resource with the persisted status, ${campaign.refreshes.dropped} dropped it because its document had been deleted by \`cosmos-delete-before-write\`, ${campaign.refreshes.failed} failed; none wrote.`,
    "",
    `Deletes: ${campaign.deletes.cleared + campaign.deletes.kept + campaign.deletes.failed}, each after a pass without faults; ${campaign.deletes.withOtherWriter} met another writer (the delete faults above), the others none. ${campaign.deletes.cleared} reset the subtree to {} (keeping fields the hook does not know), ${campaign.deletes.kept} kept it whole, ${campaign.deletes.failed} failed.`,
    "",
    `Settings faults: a provider whose ${settingsFaultKinds.map((kind) => `\`${kind.setting}\``).join(" or ")} names a Cosmos resource that does not exist (the sandbox answers 404 with substatus 1003, as Cosmos DB does) refreshed, updated and deleted resources recorded with the right settings: ${campaign.settingsOperations.failedNamingSetting} of ${campaign.settingsOperations.run} operations failed naming the setting and its value, writing nothing (their Times fired counts the operations).`,
    "",
    `Through the engine, \`pulumi refresh --run-program\` with \`cosmosContainer=${engineSample.wrongContainerRefresh.container}\`: ${engineSample.wrongContainerRefresh.refreshFailed ? "failed" : "**succeeded**"} with \`${cell(engineSample.wrongContainerRefresh.message)}\`; status resources in state ${engineSample.wrongContainerRefresh.resourcesBefore} before, ${engineSample.wrongContainerRefresh.resourcesAfter} after; documents ${engineSample.wrongContainerRefresh.documentsUnchanged ? "unchanged" : "**changed**"}; the \`up\` with the right container afterwards: ${engineSample.wrongContainerRefresh.upAfterwards}, ${engineSample.wrongContainerRefresh.resourcesAfterUp} status resources in state. (A plain \`pulumi refresh\` would have used the settings stored at the last \`up\`.)`,
    "",
    "## 2. Concurrent writers",
    "",
    `Two provider instances with separate Cosmos and ARM clients reconciled one document at the same time for ${writers.rounds} rounds (an identity rotated before each), while a third writer (the Cosmos SDK, If-Match, its own retries) made ${writers.thirdWriterEdits} foreign edits. Cosmos answered ${writers.preconditionFailures} writes with 412; the third writer retried ${writers.thirdWriterRetries} times.`,
    "",
    `- Lost updates: ${writers.lostForeignEdits} foreign edits lost; every round ended with the current ARM values (violations: ${writers.violations.length}).`,
    `- Bounded retries: at most ${writers.maxProviderPatchesPerRound} provider writes in one round (bound ${writers.patchBoundPerRound} = 2 writers × maxWriteAttempts); ${writers.providerFailures} of ${writers.providerPasses} provider passes failed.`,
    `- Retries exhausted (a writer that loses every race): \`${cell(writers.exhaustedMessage)}\`; owned subtree unchanged: ${writers.exhaustedLeftSubtreeUnchanged ? "yes" : "no"}.`,
    "",
    "## 3. Interrupted runs",
    "",
    "`pulumi up --refresh` made slow with 4 s of ARM latency, then the `pulumi` CLI and the dynamic-provider host (found among this process's children with `ps`) killed with SIGKILL while lookups were in flight.",
    "",
    ...interruptionLines(figures.interruptions),
    "",
    recoverySection(),
    "",
    "## 4. Bad input catalogue",
    "",
    'Run through `check`, then `create` of the real provider with real clients; settings rows use a provider configured with that setting. "Written" counts Cosmos document writes seen by the sandbox.',
    "",
    "| Input | Stage | Message | Written |",
    "|---|---|---|---|",
    ...figures.badInputs.map(
      (row) =>
        `| ${cell(row.name)} | ${row.stage} | ${cell(row.message.length > 400 ? `${row.message.slice(0, 400)}…` : row.message)} | ${row.written}${row.problems.length > 0 ? ` — **${cell(row.problems.join("; "))}**` : ""} |`,
    ),
    "",
    "Unknown config keys are not reported as such: the provider reads only the keys it knows, so a misspelt key shows up as the real key being unset (above), and a misspelt optional key (for example `lookupTimeoutSecond`) silently keeps the default.",
    "",
    "## 5. Secrets",
    "",
    "Scanned for the Cosmos key, the identity header, the admin token, every token the sandbox issued and any `Bearer <token>` text, after the engine sample (provider host run with `AZURE_LOG_LEVEL=info`, every fifth `up` with `--logtostderr -v=9`):",
    "",
    "| Source | Characters scanned | Secrets found |",
    "|---|---:|---:|",
    ...Object.entries(engineSample.scannedCharacters).map(
      ([name, size]) => `| ${name} | ${size} | ${engineSample.secretLeaks.filter((leak) => leak.startsWith(name)).length} |`,
    ),
    "",
    "Every error message and retrievalError of the campaign, the concurrent writers and the catalogue is scanned too (counted as violations above).",
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

function recoverySection(): string {
  return [
    "### Recovering an interrupted run",
    "",
    "What a killed `pulumi up` leaves with the file backend (measured above with the 3.248 engine):",
    "",
    "1. **A lock file** `<state>/.pulumi/locks/organization/<project>/<stack>/<uuid>.json` holding the dead CLI's pid, user, host and start time. Every later `up`, `refresh` or `destroy` fails with `the stack is currently locked by 1 lock(s)`. Check that no update is running (the pid in the file is gone), then run `pulumi cancel --stack <stack>` (Automation API: `stack.cancel()`), which deletes the lock for the file backend.",
    "2. **Possibly pending operations** in the checkpoint (`pending_operations`, e.g. `creating <resource>` when the kill came during creates). The engine writes the checkpoint file in batches, not at every step (observed: no write at all during a 4 s run until it ended), so a kill may leave pending creates or nothing from the run; the table above shows what this run's kills left. `up` goes ahead anyway with the warning `Attempting to deploy or update resources with N pending operations from previous deployment` and redoes the work — safe here, because create and update are idempotent conditional writes of one subtree — but the entries stay in the checkpoint, and the warning on every run, until cleared: `pulumi refresh --clear-pending-creates --yes` (Automation API: `stack.refresh({ clearPendingCreates: true })`). (Editing `pending_operations` out of `pulumi stack export` output and re-importing it should do the same; this run does not exercise that path.)",
    "3. **Then** `pulumi up --refresh`: it reads every status back from Cosmos and writes whatever the killed run did not finish. A second `up` reports no changes.",
    "",
    "`recoverInterruptedStack()` in bench/reliability/interruptedRun.ts does steps 1 and 2, and refuses while the lock's process is still alive on this host or the lock was taken on another host. Nothing is lost in Cosmos by the kill: every write is a single conditional patch, so a document holds either the previous subtree or the new one, never half of it.",
  ].join("\n");
}
