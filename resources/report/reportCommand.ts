/**
 * The run report's command line (the package's `aro-hcp-run-report`):
 * - `<records file> [--json <report file>]`: one stack's run (runReport.ts); prints the report;
 * - `--plan <shard-plan.json> <records file or directory>… [--json <report file>]`: a region's run,
 *   every shard of the plan judged together (regionReport.ts); exit code 1 when the verdict fails.
 * Exit code 2 on a usage error or input that cannot be read.
 */
import { formatRegionReport, reportRegion } from "./regionReport";
import { formatRunReport, reportRun } from "./runReport";

/** A region's options, or a usage error naming what is wrong. */
function parseRegionArguments(argumentsList: readonly string[]): { planFile: string; paths: string[]; jsonFile?: string } | { usageError: string } {
  const paths: string[] = [];
  const options = new Map<string, string>();
  for (let index = 0; index < argumentsList.length; index += 1) {
    const argument = argumentsList[index];
    if (!argument.startsWith("--")) {
      paths.push(argument);
      continue;
    }
    if (argument !== "--plan" && argument !== "--json") return { usageError: `unknown option ${argument}` };
    const value = argumentsList[index + 1];
    if (value === undefined || value.startsWith("--")) return { usageError: `${argument} needs a file` };
    options.set(argument, value);
    index += 1;
  }
  const planFile = options.get("--plan");
  if (planFile === undefined) return { usageError: "--plan <shard-plan.json> is required" };
  if (paths.length === 0) return { usageError: "give the shards' records files, or a directory of them (*.jsonl)" };
  const jsonFile = options.get("--json");
  return { planFile, paths, ...(jsonFile === undefined ? {} : { jsonFile }) };
}

function regionReportCommand(argumentsList: readonly string[], usageName: string): void {
  const options = parseRegionArguments(argumentsList);
  if ("usageError" in options) {
    console.error(`${options.usageError}\nusage: ${usageName} --plan <shard-plan.json> <records file or directory>... [--json <report file>]`);
    process.exitCode = 2;
    return;
  }
  let report;
  try {
    report = reportRegion(options);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 2;
    return;
  }
  console.log(formatRegionReport(report));
  if (report.verdict !== "ok") process.exitCode = 1;
}

/** The command: a region's run with `--plan`, else one stack's run as it has always read. */
export function runReportCommand(argumentsList: readonly string[], usageName = "aro-hcp-run-report"): void {
  if (argumentsList.includes("--plan")) {
    regionReportCommand(argumentsList, usageName);
    return;
  }
  const jsonIndex = argumentsList.indexOf("--json");
  const jsonFile = jsonIndex === -1 ? undefined : argumentsList[jsonIndex + 1];
  const recordsFile = argumentsList.find((argument, index) => !argument.startsWith("--") && (jsonIndex === -1 || index !== jsonIndex + 1));
  if (recordsFile === undefined || (jsonIndex !== -1 && jsonFile === undefined)) {
    console.error(`usage: ${usageName} <records file (ARO_HCP_RUN_RECORDS)> [--json <report file>]`);
    console.error(`       ${usageName} --plan <shard-plan.json> <records file or directory>... [--json <report file>]`);
    process.exitCode = 2;
    return;
  }
  console.log(formatRunReport(reportRun(recordsFile, jsonFile)));
}
