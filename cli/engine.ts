/**
 * The real Pulumi engine, offline: finds or builds the CLI (tools/build-pulumi-cli.sh) and opens a
 * stack over the project's own Pulumi.yaml whose program is this project's index.ts,
 * run as an Automation API inline program. The literal `pulumi up` runs the same program through the
 * Node.js language host the build script also builds (see docs/pulumi-engine.md).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
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

/** The project's own @pulumi/pulumi pin (a devDependency: consumers bring theirs through the peer range). */
function sdkVersion(): string {
  const manifest = JSON.parse(readFileSync(join(projectDirectory, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
  return manifest.devDependencies["@pulumi/pulumi"];
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

/** The backend when the user names none: a file backend inside the project. */
export const defaultBackendUrl = `file://${enginePaths.state}`;

/**
 * The passphrase of throwaway stacks only: the sandbox stack, `npm start`'s demo, tests and
 * benchmarks, whose secrets are sandbox values. Never used for a stack of the user's.
 */
export const sandboxPassphrase = "aro-hcp-sandbox-only";

/**
 * The engine's resource operations at once when the caller sets no `PULUMI_PARALLEL`: at least 16,
 * or the engine's own default (4 × cores) when that is more.
 *
 * Every read, create and update of this provider holds one engine slot for at least one Cosmos
 * round trip, so on a large stack the slots wait on latency, not CPU: 16 slots make `refresh` and
 * the no-op `up` faster on 2 cores (the engine's default there is 8), while `up`, bound by CPU,
 * and the provider host's peak stay as they are; 32 raise the peak and are no faster
 * (docs/performance.md, "Engine settings compared"). On 4 cores or more the engine's default is 16 or more, and
 * stays.
 */
export function defaultEngineParallelism(cores: number = availableParallelism()): number {
  return Math.max(16, 4 * cores);
}

/**
 * The slots of a `refresh`: at least 128, or the engine's own default (4 × cores) when that is more.
 *
 * A refresh step of this provider is one Cosmos read and no write, and each slot waits out that
 * read's round trip, while the reads that wait at the same time go to Cosmos as one request
 * (resources/cosmos/documentStore.ts). With 32 slots a 2,000-cluster `refresh` waits on those round
 * trips (1.71–1.80× the engine floor's time at the same slots); with 128 it is bound by the
 * provider host's CPU instead (1.34–1.38×), at about the same host CPU and peak (185 against 181 MB);
 * 256 measured no better (docs/performance.md, "Engine settings"). `up` stays at
 * {@link defaultEngineParallelism}: with 32 its host's peak rises and it is no faster.
 */
export function defaultRefreshParallelism(cores: number = availableParallelism()): number {
  return Math.max(128, 4 * cores);
}

/**
 * The `--parallel` the project's doors give a `refresh`: {@link defaultRefreshParallelism}, or
 * `undefined` when the caller exported PULUMI_PARALLEL, which then applies as to every command.
 */
export function refreshParallelism(environment: NodeJS.ProcessEnv = process.env, cores: number = availableParallelism()): number | undefined {
  return environment.PULUMI_PARALLEL === undefined ? defaultRefreshParallelism(cores) : undefined;
}

/**
 * The environment the engine (and the provider host it starts) runs with: offline, no update
 * check. The backend, home and passphrase are the caller's (process.env) unless `extra` names
 * them; callers add Azure/Cosmos variables.
 */
export function engineEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "false",
    // The DIY backend rewrites the whole checkpoint (and its .bak) after every step: quadratic in
    // the fleet size, most of a large `up` (docs/performance.md, "Engine settings"). Skipping the
    // intermediate checkpoints still saves the final one, also when the run fails; only a killed
    // engine loses the run's progress, and every operation of this provider is idempotent (a
    // repeated create re-reads the document and writes nothing new). PULUMI_SKIP_CHECKPOINTS=false
    // in the environment restores per-step checkpoints.
    PULUMI_SKIP_CHECKPOINTS: process.env.PULUMI_SKIP_CHECKPOINTS ?? "true",
    // The default of `--parallel` for up, preview and destroy, and for a refresh not started by
    // this project's doors (they pass refreshParallelism()); the flag still wins, and so does the
    // caller's own PULUMI_PARALLEL.
    PULUMI_PARALLEL: process.env.PULUMI_PARALLEL ?? String(defaultEngineParallelism()),
    // Diffs in those slots, not inside the engine's step generation one after another: a cluster
    // whose inputs name no operators has its diff read the cluster document, and a no-op `up` of
    // 2,000 such clusters waited out each read in turn (57 s against 15 s; docs/performance.md,
    // "Growth"). PULUMI_PARALLEL_DIFF=false in the environment restores the engine's default.
    PULUMI_PARALLEL_DIFF: process.env.PULUMI_PARALLEL_DIFF ?? "true",
    // The provider host resolves @pulumi/pulumi and the Azure SDKs from here.
    ARO_HCP_PROJECT_DIR: projectDirectory,
    ...extra,
  };
}

/**
 * The user's door (`npm run pulumi`): the project directory is the work directory, as for the
 * literal CLI, so both see the same Pulumi.<stack>.yaml; the user's PULUMI_BACKEND_URL and
 * PULUMI_HOME are kept, and only when unset does the project's file backend apply.
 */
export function userEngineEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const home = process.env.PULUMI_HOME ?? enginePaths.home;
  mkdirSync(home, { recursive: true });
  if (process.env.PULUMI_BACKEND_URL === undefined) {
    mkdirSync(enginePaths.state, { recursive: true });
  }
  return engineEnvironment({
    PULUMI_BACKEND_URL: process.env.PULUMI_BACKEND_URL ?? defaultBackendUrl,
    PULUMI_HOME: home,
    ...extra,
  });
}

/** Options for {@link openStack}. */
export interface OpenStackOptions {
  readonly engine: EngineCommand;
  readonly stackName: string;
  /** The inline program; defaults to this project's index.ts program. */
  readonly program?: automation.PulumiFn;
  /**
   * Stack config without namespace for this project's keys, or with a namespace. Plain values;
   * `clusters` is a JSON list, stored as a list (Pulumi.yaml declares it `type: array`).
   */
  readonly config?: Readonly<Record<string, string>>;
  /** Extra environment for the engine and the provider host (e.g. COSMOS_KEY). Never stored in state. */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Private state, home and work directories of a throwaway stack (tests, benchmarks, the demo;
   * these use {@link sandboxPassphrase}). Without them the stack is the user's: see
   * {@link userEngineEnvironment}.
   */
  readonly paths?: typeof enginePaths;
  /** Secrets provider of a stack created here (e.g. `azurekeyvault://…`); default: the backend's. */
  readonly secretsProvider?: string;
}

/**
 * Creates or selects a stack over the project's program. The work directory always holds the
 * project's own Pulumi.yaml (a link to it for private directories), never synthesized settings.
 */
export async function openStack(options: OpenStackOptions): Promise<automation.Stack> {
  const paths = options.paths;
  let workDirectory = projectDirectory;
  let environment: Record<string, string>;
  if (paths === undefined) {
    environment = userEngineEnvironment(options.environment);
  } else {
    for (const directory of [paths.state, paths.home, paths.workDirectory]) {
      mkdirSync(directory, { recursive: true });
    }
    linkProjectFiles(paths.workDirectory);
    workDirectory = paths.workDirectory;
    environment = engineEnvironment({
      PULUMI_BACKEND_URL: `file://${paths.state}`,
      PULUMI_HOME: paths.home,
      PULUMI_CONFIG_PASSPHRASE: sandboxPassphrase,
      ...options.environment,
    });
  }
  const program = options.program ?? projectProgram();
  const stack = await automation.LocalWorkspace.createOrSelectStack(
    { stackName: options.stackName, projectName: pulumiProjectName, program },
    {
      workDir: workDirectory,
      pulumiHome: environment.PULUMI_HOME,
      pulumiCommand: options.engine.command,
      envVars: environment,
      ...(options.secretsProvider === undefined ? {} : { secretsProvider: options.secretsProvider }),
    },
  );
  if (options.config !== undefined) {
    await writeStackConfig(stack, options.config);
  }
  return stack;
}

/**
 * Links the project's Pulumi.yaml into a private work directory, and its `main` (index.ts), which
 * the CLI requires to exist beside the project file even when the program runs inline.
 */
function linkProjectFiles(workDirectory: string): void {
  for (const file of ["Pulumi.yaml", "index.ts"]) {
    const link = join(workDirectory, file);
    rmSync(link, { force: true });
    symlinkSync(join(projectDirectory, file), link);
  }
}

function fullKey(key: string): string {
  return key.includes(":") ? key : `${pulumiProjectName}:${key}`;
}

/**
 * Writes plain config values into the stack settings file, `clusters` as a YAML list (what
 * `pulumi config set --path` would store; a JSON string fails the CLI's `type: array` check).
 * Through the file, not `pulumi config set`: a large fleet is past Linux's 128 KB per argument.
 */
export async function writeStackConfig(stack: automation.Stack, values: Readonly<Record<string, string>>): Promise<void> {
  const settings = await existingStackSettings(stack);
  const config: Record<string, unknown> = { ...(settings.config ?? {}) };
  for (const [key, value] of Object.entries(values)) {
    config[fullKey(key)] = fullKey(key) === `${pulumiProjectName}:clusters` ? (JSON.parse(value) as unknown) : value;
  }
  await stack.workspace.saveStackSettings(stack.name, { ...settings, config });
}

/**
 * The stack's settings file, or none yet: a runner that selects a stack another runner created
 * (a shared backend) starts in a work directory without that file.
 */
async function existingStackSettings(stack: automation.Stack): Promise<automation.StackSettings> {
  try {
    return await stack.workspace.stackSettings(stack.name);
  } catch (error) {
    if (error instanceof Error && error.message.includes("failed to find stack settings file")) {
      return {};
    }
    throw error;
  }
}

/** Replaces the stack's `clusters` list. */
export async function setClusterList(stack: automation.Stack, clusters: readonly unknown[]): Promise<void> {
  await writeStackConfig(stack, { clusters: JSON.stringify(clusters) });
}

/**
 * Declares the fleet in a JSON file named by `clustersFile` (and empties `clusters`): the layout
 * for fleets. The engine hands a dynamic provider the whole stack config and stores it twice in
 * the default provider's state entry, so a `clusters` list in config adds to the state of every
 * cluster on top of its resource (docs/pulumi-engine.md, "State size").
 */
export async function setClusterFile(stack: automation.Stack, clusters: readonly unknown[], file: string): Promise<void> {
  writeFileSync(file, `${JSON.stringify(clusters)}\n`);
  await writeStackConfig(stack, { clustersFile: file, clusters: "[]" });
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
