/**
 * `npm run pulumi -- <command> [--stack NAME] [flags]`: drive the real engine by hand.
 *
 * preview, up, refresh and destroy run the project's program through the Automation API (the
 * Node.js language host is not available offline, so `pulumi up` cannot start the program
 * itself). Every other command (stack, config, state, cancel, version, about, …) is passed to the
 * built `pulumi` binary with the same environment, in the stack's work directory.
 *
 * Connection settings: when `.sandbox/endpoints.json` exists (a sandbox is running, `npm run
 * sandbox`) its config and environment are applied; otherwise the stack's own config and the
 * caller's environment are used (real Azure).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { engineCommand, engineEnvironment, enginePaths, openStack, projectDirectory } from "./engine";
import type { SandboxDescription } from "./sandboxSettings";
import { sandboxSettings } from "./sandboxSettings";

const programCommands = ["preview", "up", "update", "refresh", "destroy"] as const;

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

function sandboxDescription(): SandboxDescription | undefined {
  const file = process.env.ARO_HCP_SANDBOX_FILE ?? join(projectDirectory, ".sandbox", "endpoints.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as SandboxDescription) : undefined;
}

async function main(): Promise<void> {
  const argumentsList = process.argv.slice(2);
  const command = argumentsList.shift();
  if (command === undefined || command === "help" || command === "--help") {
    console.log("usage: npm run pulumi -- <preview|up|refresh|destroy> [--stack NAME] [--diff] [--expect-no-changes] [--refresh] [--continue-on-error] [--clear-pending-creates]\n       npm run pulumi -- <any other pulumi command>   (passed to the built CLI)");
    return;
  }
  const engine = await engineCommand();
  const sandbox = sandboxDescription();
  const stackName = takeOption(argumentsList, "stack") ?? process.env.PULUMI_STACK ?? (sandbox === undefined ? "dev" : "sandbox");
  const settings = sandbox === undefined ? undefined : sandboxSettings(sandbox);
  console.error(`pulumi v${engine.version} (${engine.source}); stack '${stackName}'; ${sandbox === undefined ? "stack config and environment (no sandbox running)" : "sandbox from .sandbox/endpoints.json"}`);

  if (!(programCommands as readonly string[]).includes(command)) {
    const result = spawnSync(join(engine.root, "bin", "pulumi"), [command, ...argumentsList, ...(["stack", "config", "cancel"].includes(command) ? ["--stack", stackName] : [])], {
      cwd: enginePaths.workDirectory,
      env: { ...process.env, ...engineEnvironment(settings?.environment), PATH: `${join(engine.root, "bin")}:${process.env.PATH ?? ""}` },
      stdio: "inherit",
    });
    process.exitCode = result.status ?? 1;
    return;
  }

  const stack = await openStack({ engine, stackName, ...(settings === undefined ? {} : { config: settings.config, environment: settings.environment }) });
  const flags = new Set(argumentsList);
  const common = { onOutput: (text: string) => process.stdout.write(text), color: "auto" as const };
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
    case "refresh":
      await stack.refresh({ ...common, expectNoChanges: flags.has("--expect-no-changes"), clearPendingCreates: flags.has("--clear-pending-creates") });
      break;
    case "destroy":
      await stack.destroy(common);
      break;
  }
}

main().catch((error: unknown) => {
  // The engine already printed its diagnostics through onOutput; keep the summary short.
  const message = error instanceof Error ? error.message : String(error);
  const exitCode = /Command failed with exit code (\d+)/.exec(message)?.[1];
  console.error(exitCode === undefined ? message : `pulumi exited with code ${exitCode}; the diagnostics are above`);
  process.exitCode = 1;
});
