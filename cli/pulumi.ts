/**
 * `npm run pulumi -- <command> [--stack NAME] [flags]`: drive the real engine by hand.
 *
 * preview, up, refresh and destroy run the project's program through the Automation API, which
 * reports the run itself (drift per cluster after a refresh); the literal `pulumi up` with the built
 * CLI on PATH runs the same program through the Node.js language host. Every other command (stack, config, state, cancel, version, about, …) is passed to the
 * built `pulumi` binary with the same environment, in the stack's work directory.
 *
 * The work directory is the project directory, as for the literal `pulumi` CLI, so both use the
 * same Pulumi.yaml and Pulumi.<stack>.yaml. The user's PULUMI_BACKEND_URL, PULUMI_HOME, secrets
 * provider and PULUMI_CONFIG_PASSPHRASE(_FILE) are kept; without a backend the project's file
 * backend (.pulumi/state) is used.
 *
 * The stack named `sandbox` is the only one the wrapper configures itself: from the running
 * sandbox's `.sandbox/endpoints.json` (endpoints, clustersFile, sandbox-only key and passphrase).
 * Every other stack gets its own config and the caller's environment, untouched.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engineCommand, openStack, projectDirectory, refreshParallelism, sandboxPassphrase, userEngineEnvironment } from "./engine";
import type { SandboxDescription } from "./sandboxSettings";
import { sandboxSettings, sandboxStackName } from "./sandboxSettings";
import { missingPassphraseMessage, stackSettingsFileName } from "./stackSecrets";
import { failureCollector, formatFailureSummary } from "./failureSummary";
import { tracingCommand } from "./otelTraces";
import { formatRunReport, reportRun } from "../resources/report/runReport";
import { runRecordsVariable } from "../resources/report/runRecordFormat";

const programCommands = ["preview", "up", "update", "refresh", "destroy"] as const;

/** The failed clusters of the run, summarised by cause at its end (failureSummary.ts) when the run recorded nothing. */
const failures = failureCollector();

/** The run's records and report files (runReport.ts), when this run is a program command. */
let runFiles: { readonly records: string; readonly report: string } | undefined;

/**
 * The records file of this run: the caller's ARO_HCP_RUN_RECORDS (appended to, as in CI), else
 * `.pulumi/runs/<stack>.jsonl`, emptied first; the report goes beside it as `<stack>.json`.
 */
function runRecordFiles(stackName: string): { readonly records: string; readonly report: string } {
  const given = process.env[runRecordsVariable];
  if (given !== undefined && given.length > 0) return { records: given, report: given.replace(/(\.jsonl)?$/, "-report.json") };
  const directory = join(projectDirectory, ".pulumi", "runs");
  mkdirSync(directory, { recursive: true });
  const records = join(directory, `${stackName.replace(/[^A-Za-z0-9._-]/g, "_")}.jsonl`);
  writeFileSync(records, "");
  return { records, report: records.replace(/\.jsonl$/, ".json") };
}

function takeOption(argumentsList: string[], name: string): string | undefined {
  const index = argumentsList.findIndex((argument) => argument === `--${name}` || argument.startsWith(`--${name}=`));
  if (index === -1) {
    return undefined;
  }
  const [argument] = argumentsList.splice(index, 1);
  if (argument.includes("=")) {
    return argument.slice(argument.indexOf("=") + 1);
  }
  return argumentsList.splice(index, 1)[0];
}

/** Commands that act on one stack; `stack init|rm|select NAME` already name it positionally. */
function takesStackOption(command: string, rest: readonly string[]): boolean {
  const positional = rest.filter((argument) => !argument.startsWith("-"));
  if (command === "stack" && ["init", "rm", "select"].includes(positional[0] ?? "") && positional.length > 1) {
    return false;
  }
  return ["stack", "config", "cancel", "state"].includes(command);
}

function sandboxDescription(): SandboxDescription | undefined {
  const file = process.env.ARO_HCP_SANDBOX_FILE ?? join(projectDirectory, ".sandbox", "endpoints.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as SandboxDescription) : undefined;
}

function stackSettingsText(stackName: string): string | undefined {
  const file = join(projectDirectory, stackSettingsFileName(stackName));
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

async function main(): Promise<void> {
  const argumentsList = process.argv.slice(2);
  const command = argumentsList.shift();
  if (command === undefined || command === "help" || command === "--help") {
    console.log(
      "usage: npm run pulumi -- <preview|up|refresh|destroy> [--stack NAME] [--secrets-provider URL] [--diff] [--expect-no-changes] [--refresh] [--continue-on-error] [--clear-pending-creates] [--otel-traces=file://…|grpc://…]\n" +
        "       npm run pulumi -- <any other pulumi command>   (passed to the built CLI, in the project directory)",
    );
    return;
  }
  const sandbox = sandboxDescription();
  const stackName = takeOption(argumentsList, "stack") ?? process.env.PULUMI_STACK ?? (sandbox === undefined ? "dev" : sandboxStackName);
  const isSandboxStack = stackName === sandboxStackName;
  if (isSandboxStack && sandbox === undefined) {
    throw new Error(`the '${sandboxStackName}' stack is configured from a running sandbox, and none is running: start one with \`npm run sandbox\``);
  }
  const settings = isSandboxStack && sandbox !== undefined ? sandboxSettings(sandbox) : undefined;
  // The fixed passphrase protects sandbox-only values; a user's stack never gets it.
  const passphrase: Record<string, string> =
    isSandboxStack && process.env.PULUMI_CONFIG_PASSPHRASE === undefined && process.env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined
      ? { PULUMI_CONFIG_PASSPHRASE: sandboxPassphrase }
      : {};
  const environment: Record<string, string> = { ...settings?.environment, ...passphrase };
  const engine = await engineCommand();
  const backendUrl = userEngineEnvironment().PULUMI_BACKEND_URL;
  console.error(
    `pulumi v${engine.version} (${engine.source}); stack '${stackName}'; backend ${backendUrl}; ${settings === undefined ? "the stack's config and your environment" : "sandbox settings from .sandbox/endpoints.json"}`,
  );

  if (!(programCommands as readonly string[]).includes(command)) {
    const result = spawnSync(
      join(engine.root, "bin", "pulumi"),
      [command, ...argumentsList, ...(takesStackOption(command, argumentsList) ? ["--stack", stackName] : [])],
      {
        cwd: projectDirectory,
        env: { ...process.env, ...userEngineEnvironment(environment), PATH: `${join(engine.root, "bin")}:${process.env.PATH ?? ""}` },
        stdio: "inherit",
      },
    );
    process.exitCode = result.status ?? 1;
    return;
  }

  const secretsProvider = takeOption(argumentsList, "secrets-provider");
  const otelTraces = takeOption(argumentsList, "otel-traces");
  const problem = missingPassphraseMessage({
    stackName,
    stackSettingsText: stackSettingsText(stackName),
    secretsProviderOption: secretsProvider,
    backendUrl,
    environment: { ...process.env, ...environment },
  });
  if (problem !== undefined) {
    throw new Error(problem);
  }
  runFiles = runRecordFiles(stackName);
  const stack = await openStack({
    engine: otelTraces === undefined ? engine : { ...engine, command: tracingCommand(engine.command, otelTraces) },
    stackName,
    environment: { ...environment, [runRecordsVariable]: runFiles.records },
    ...(settings === undefined ? {} : { config: settings.config }),
    ...(secretsProvider === undefined ? {} : { secretsProvider }),
  });
  const flags = new Set(argumentsList);
  const common = { onOutput: (text: string) => process.stdout.write(text), onEvent: failures.onEvent, color: "auto" as const };
  switch (command) {
    case "preview":
      await stack.preview({ ...common, diff: flags.has("--diff"), expectNoChanges: flags.has("--expect-no-changes") });
      break;
    case "up":
    case "update":
      await stack.up({
        ...common,
        diff: flags.has("--diff"),
        expectNoChanges: flags.has("--expect-no-changes"),
        refresh: flags.has("--refresh"),
        // One failed cluster should not stop the rest of a fleet.
        continueOnError: flags.has("--continue-on-error"),
      });
      break;
    case "refresh": {
      // With the program, so that its warnings name each drifted cluster and identity in the
      // normal output and the stack outputs show the drift (`--run-program=false` turns it off).
      const parallel = refreshParallelism();
      await stack.refresh({
        ...common,
        // More slots than `up`: a refresh step is one Cosmos read, and reads that wait together go together.
        ...(parallel === undefined ? {} : { parallel }),
        expectNoChanges: flags.has("--expect-no-changes"),
        clearPendingCreates: flags.has("--clear-pending-creates"),
        runProgram: !flags.has("--run-program=false"),
      });
      break;
    }
    case "destroy":
      await stack.destroy(common);
      break;
  }
}

main()
  .catch((error: unknown) => {
    // The engine already printed its diagnostics through onOutput; keep the summary short.
    const message = error instanceof Error ? error.message : String(error);
    const exitCode = /Command failed with exit code (\d+)/.exec(message)?.[1];
    console.error(exitCode === undefined ? message : `pulumi exited with code ${exitCode}; the diagnostics are above`);
    process.exitCode = 1;
  })
  .finally(() => {
    // The run report when the provider recorded the run; else (a preview that changed nothing) the engine's failures by cause.
    const report = runFiles === undefined ? undefined : reportRun(runFiles.records, runFiles.report);
    if (report !== undefined && runFiles !== undefined && report.verdict !== "noRecords") {
      console.error(`${formatRunReport(report)}\n(the report as JSON: ${runFiles.report})`);
      return;
    }
    const summary = formatFailureSummary(failures.failures);
    if (summary !== undefined) console.error(summary);
  });
