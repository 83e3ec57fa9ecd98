/**
 * The real Pulumi engine, offline: finds or builds the CLI (tools/build-pulumi-cli.sh), keeps all
 * engine state inside the project, and opens a stack whose program is this project's index.ts,
 * run as an Automation API inline program (the Node.js language host is not published as a Go
 * module, see docs/pulumi-engine.md).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as automation from "@pulumi/pulumi/automation";

/** The project root (this file compiles to dist/cli/engine.js). */
export const projectDirectory = resolve(__dirname, "..", "..");
/** The Pulumi project name; config keys live in its namespace. */
export const pulumiProjectName = "aro-hcp-identity-status";

/** Where the engine keeps its files; all git-ignored. */
export const enginePaths = {
  state: join(projectDirectory, ".pulumi", "state"),
  home: join(projectDirectory, ".pulumi", "home"),
  workDirectory: join(projectDirectory, ".pulumi", "work"),
};

/** Which CLI runs, and where it came from. */
export interface EngineCommand {
  readonly command: automation.PulumiCommand;
  readonly root: string;
  readonly version: string;
  readonly source: "built from Go modules" | "found on PATH";
}

function sdkVersion(): string {
  const manifest = JSON.parse(readFileSync(join(projectDirectory, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  return manifest.dependencies["@pulumi/pulumi"];
}

/**
 * A CLI on PATH at exactly the SDK's version is used as is (set ARO_HCP_USE_PATH_PULUMI=0 to
 * ignore it); otherwise the CLI is built from the published Go modules into .cache/pulumi/.
 */
export async function engineCommand(log: (line: string) => void = () => undefined): Promise<EngineCommand> {
  const version = sdkVersion();
  if (process.env.ARO_HCP_USE_PATH_PULUMI !== "0") {
    const onPath = pathPulumi(version);
    if (onPath !== undefined) {
      const command = await automation.PulumiCommand.get({ root: onPath });
      return { command, root: onPath, version, source: "found on PATH" };
    }
  }
  const output = execFileSync("bash", [join(projectDirectory, "tools", "build-pulumi-cli.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  const root = output.trim().split("\n").pop() ?? "";
  log(`pulumi v${version} (built from Go modules) in ${root}/bin`);
  const command = await automation.PulumiCommand.get({ root });
  return { command, root, version, source: "built from Go modules" };
}

function pathPulumi(version: string): string | undefined {
  for (const directory of (process.env.PATH ?? "").split(":")) {
    const candidate = join(directory, "pulumi");
    if (directory.length === 0 || !existsSync(candidate) || candidate.includes(join(".cache", "pulumi"))) {
      continue;
    }
    try {
      const reported = execFileSync(candidate, ["version"], { encoding: "utf8", timeout: 20_000 }).trim();
      const binDirectory = dirname(realpathSync(candidate));
      // Inline programs need the CLI and its bundled pulumi-resource-pulumi-nodejs beside it.
      if (reported === `v${version}` && existsSync(join(binDirectory, "pulumi-resource-pulumi-nodejs"))) {
        return dirname(binDirectory);
      }
    } catch {
      // Not runnable: ignore it.
    }
  }
  return undefined;
}

/**
 * The environment the engine (and the provider host it starts) runs with: offline, state and
 * home inside the project, a passphrase for local secrets. Callers add Azure/Cosmos variables.
 */
export function engineEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  for (const directory of Object.values(enginePaths)) {
    mkdirSync(directory, { recursive: true });
  }
  return {
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_BACKEND_URL: `file://${enginePaths.state}`,
    PULUMI_HOME: enginePaths.home,
    PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? "aro-hcp-local-state",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "false",
    // The DIY backend rewrites the whole checkpoint (and its .bak) after every step: quadratic in
    // the fleet size, 10 of the 20 s of a 200-cluster `up` (docs/performance.md). Skipping the
    // intermediate checkpoints still saves the final one, also when the run fails; only a killed
    // engine loses the run's progress, and every operation of this provider is idempotent (a
    // repeated create re-reads the document and writes nothing new). PULUMI_SKIP_CHECKPOINTS=false
    // in the environment restores per-step checkpoints.
    PULUMI_SKIP_CHECKPOINTS: process.env.PULUMI_SKIP_CHECKPOINTS ?? "true",
    // The provider host resolves @pulumi/pulumi and the Azure SDKs from here.
    ARO_HCP_PROJECT_DIR: projectDirectory,
    ...extra,
  };
}

/** Options for {@link openStack}. */
export interface OpenStackOptions {
  readonly engine: EngineCommand;
  readonly stackName: string;
  /** The inline program; defaults to this project's index.ts program. */
  readonly program?: automation.PulumiFn;
  /** Stack config without namespace for this project's keys, or with a namespace. Plain values only. */
  readonly config?: Readonly<Record<string, string>>;
  /** Extra environment for the engine and the provider host (e.g. COSMOS_KEY). Never stored in state. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Separate state and work directories (tests run several stacks side by side). */
  readonly paths?: Partial<typeof enginePaths>;
}

/** Creates or selects a stack over the project's program. */
export async function openStack(options: OpenStackOptions): Promise<automation.Stack> {
  const paths = { ...enginePaths, ...options.paths };
  const environment = engineEnvironment({
    PULUMI_BACKEND_URL: `file://${paths.state}`,
    PULUMI_HOME: paths.home,
    ...options.environment,
  });
  for (const directory of [paths.state, paths.home, paths.workDirectory]) {
    mkdirSync(directory, { recursive: true });
  }
  const program = options.program ?? projectProgram();
  const stack = await automation.LocalWorkspace.createOrSelectStack(
    { stackName: options.stackName, projectName: pulumiProjectName, program },
    {
      workDir: paths.workDirectory,
      pulumiHome: paths.home,
      pulumiCommand: options.engine.command,
      envVars: environment,
      projectSettings: {
        name: pulumiProjectName,
        runtime: "nodejs",
        backend: { url: `file://${paths.state}` },
        description: "Records ARO-HCP data plane operator managed identity status in the ServiceProviderCluster document",
      },
    },
  );
  if (options.config !== undefined) {
    const config: automation.ConfigMap = {};
    for (const [key, value] of Object.entries(options.config)) {
      config[key.includes(":") ? key : `${pulumiProjectName}:${key}`] = { value, secret: false };
    }
    await stack.setAllConfig(config);
  }
  return stack;
}

/** The project's program (index.ts), loaded from the compiled output. */
export function projectProgram(): automation.PulumiFn {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const program = require(join(projectDirectory, "dist", "index.js")) as automation.PulumiFn;
  if (typeof program !== "function") {
    throw new TypeError("dist/index.js does not export the program function; run `npm run build`");
  }
  return program;
}
