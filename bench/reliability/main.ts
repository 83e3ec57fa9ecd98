/**
 * `npm run reliability`: the fault campaign (1000+ passes), the engine sample, concurrent writers,
 * interrupted runs and the bad-input catalogue against one in-process sandbox; writes the figures
 * to docs/reliability.md and exits non-zero when any invariant was violated.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectDirectory } from "../../cli/engine";
import { replaceGeneratedSection } from "../generatedSection";
import { runBadInputCatalogue } from "./badInputCatalogue";
import { runClusterModeCampaign, startClusterModeSandbox } from "./clusterModeCampaign";
import { runConcurrentWriters } from "./concurrentWriters";
import { runEngineSample } from "./engineSample";
import { runFaultCampaign } from "./faultCampaign";
import { runInterruptedScenario } from "./interruptedScenario";
import { startReliabilitySandbox } from "./reliabilitySandbox";
import { renderReliabilityReport, totalViolations } from "./reliabilityReport";

function numberFromEnvironment(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

async function main(): Promise<number> {
  const log = (line: string): void => {
    process.stderr.write(`reliability: ${line}\n`);
  };
  const reliability = await startReliabilitySandbox("report");
  try {
    const campaignOptions = {
      lanePasses: numberFromEnvironment("RELIABILITY_PASSES", 1000),
      tokenPasses: 40,
      hostPasses: 16,
      deletes: 48,
      settingsRounds: 8,
      refreshShare: 0.25,
      lanes: 8,
      identitiesPerCluster: 3,
      faultProbability: 0.85,
      seed: 20261129,
    };
    const { lanePasses, refreshShare, deletes, hostPasses, settingsRounds, tokenPasses } = campaignOptions;
    log(
      `fault campaign: ${lanePasses} passes (${refreshShare * 100} % followed by a refresh) + ${deletes} deletes + ${hostPasses} host-fault passes + ${settingsRounds} settings-fault rounds + ${tokenPasses} token-fault passes`,
    );
    const campaign = await runFaultCampaign(reliability, campaignOptions);
    log(`campaign: ${campaign.passes} passes in ${(campaign.durationInMs / 1000).toFixed(1)} s, ${campaign.violationCount} violations`);
    const clusterModeOptions = {
      runs: numberFromEnvironment("RELIABILITY_CLUSTER_RUNS", 120),
      clusters: 5,
      identitiesPerCluster: 3,
      clusterFaultShare: 0.7,
      runFaultShare: 0.2,
      laneFaultShare: 0.35,
      secondFaultShare: 0.15,
      seed: 20261203,
    };
    log(
      `cluster mode: ${clusterModeOptions.runs} runs of ${clusterModeOptions.clusters} clusters, each in its own tenant, in clusterServiceManagedIdentity mode over a per-cluster sandbox`,
    );
    const clusterSandbox = await startClusterModeSandbox("report");
    let clusterMode;
    try {
      clusterMode = await runClusterModeCampaign(clusterSandbox, clusterModeOptions);
    } finally {
      await clusterSandbox.stop();
    }
    log(
      `cluster mode: ${clusterMode.passes} passes in ${(clusterMode.durationInMs / 1000).toFixed(1)} s, ${clusterMode.isolation.compared} isolation comparisons, ${clusterMode.violationCount} violations`,
    );
    log("concurrent writers");
    const concurrentWriters = await runConcurrentWriters(reliability, 40);
    const enginePasses = numberFromEnvironment("RELIABILITY_ENGINE_PASSES", 20);
    log(`engine sample: ${enginePasses} passes of pulumi up --refresh`);
    const engineSample = await runEngineSample(reliability, enginePasses, 20261129);
    log("interrupted runs");
    const interruptions = await runInterruptedScenario(reliability);
    log("bad input catalogue");
    // Last: its expired-token entry expires every token this process's credentials hold.
    const badInputs = await runBadInputCatalogue(reliability);
    const figures = {
      generatedAt: new Date().toISOString(),
      campaign,
      clusterMode,
      engineSample,
      concurrentWriters,
      interruptions,
      badInputs,
      settings: reliability.config,
    };
    const path = join(projectDirectory, "docs", "reliability.md");
    writeFileSync(path, replaceGeneratedSection(readFileSync(path, "utf8"), "npm run reliability", renderReliabilityReport(figures)));
    const total = totalViolations(figures);
    log(`wrote ${path}: ${total} violation(s)`);
    return total === 0 ? 0 : 1;
  } finally {
    await reliability.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`reliability: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
