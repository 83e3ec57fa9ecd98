/**
 * Helpers for tests that drive the real Pulumi engine against an in-process sandbox.
 *
 * The engine code and the program are loaded from the compiled output with Node's own `require`
 * (not through vitest's transform), exactly as `npm start` runs them: the provider closure is then
 * serialized the way the engine sees it in production.
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { expect, inject } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedDemoFleet } from "../../sandbox/seed";
import type { FaultRuleInput } from "../../sandbox/faultInjector";

const projectDirectory = resolve(__dirname, "..", "..");
const nativeRequire = createRequire(join(projectDirectory, "package.json"));

type EngineModule = typeof import("../../cli/engine");
type SandboxSettingsModule = typeof import("../../cli/sandboxSettings");

/**
 * A fresh directory for one stack or tool run of an e2e file, inside this run's scratch root
 * (test/setup/e2eScratch.ts, which removes the root when the run ends).
 */
export function e2eScratchDirectory(prefix: string): string {
  return mkdtempSync(join(inject("e2eScratchRoot"), `${prefix}-`));
}

/** The compiled engine module (run `npm run build` first; `npm test` does). */
export function engineModule(): EngineModule {
  return nativeRequire(join(projectDirectory, "dist", "cli", "engine.js")) as EngineModule;
}

/** A cluster entry of the `clusters` config. */
export interface ClusterConfig {
  readonly clusterResourceId: string;
  readonly dataPlaneOperators?: Record<string, string>;
  readonly serviceManagedIdentity?: string;
}

/** A stack with private state, home and work directories, pointed at the sandbox. */
export interface TestStack {
  readonly stack: automation.Stack;
  readonly stateDirectory: string;
  readonly workDirectory: string;
  setClusters(clusters: readonly ClusterConfig[]): Promise<void>;
}

/**
 * Opens a fresh stack over the project's program for this sandbox. Its work directory holds a copy
 * of the project's own Pulumi.yaml, so the CLI validates the stack config as `pulumi up` does.
 * `environment` may change the sandbox's environment (e.g. drop COSMOS_KEY for Entra ID).
 */
export async function openTestStack(
  sandbox: Sandbox,
  name: string,
  clusters: readonly ClusterConfig[],
  extraConfig: Record<string, string> = {},
  environmentFor: (sandboxEnvironment: Record<string, string>) => Record<string, string> = (sandboxEnvironment) => sandboxEnvironment,
): Promise<TestStack> {
  const engine = engineModule();
  const { settingsForRunningSandbox } = nativeRequire(join(projectDirectory, "dist", "cli", "sandboxSettings.js")) as SandboxSettingsModule;
  const root = e2eScratchDirectory(name);
  const paths = { state: join(root, "state"), home: join(root, "home"), workDirectory: join(root, "work") };
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const command = await engine.engineCommand();
  const stack = await engine.openStack({
    engine: command,
    stackName: name,
    paths,
    config: { ...config, documentWaitSeconds: "2", clusters: JSON.stringify(clusters), ...extraConfig },
    environment: environmentFor(environment),
  });
  return {
    stack,
    stateDirectory: paths.state,
    workDirectory: paths.workDirectory,
    async setClusters(next) {
      await engine.setClusterList(stack, next);
    },
  };
}

/** Every file under a directory, concatenated (state files, checkpoint backups, history). */
export function readTree(directory: string): string {
  let text = "";
  for (const entry of readdirSync(directory)) {
    const path = join(directory, entry);
    text += statSync(path).isDirectory() ? readTree(path) : readFileSync(path, "utf8");
  }
  return text;
}

/** Records output for assertions and for a readable failure. */
export function outputCollector(): { onOutput: (text: string) => void; text: () => string } {
  let collected = "";
  return { onOutput: (text) => (collected += text), text: () => collected };
}

/**
 * A user's shell for the literal CLI: the built CLI's bin directory (pulumi, the Node.js language
 * host, the dynamic-provider shim) first on PATH, the given backend, home and passphrase, and
 * nothing of this process's PULUMI_* or ARO_HCP_PROJECT_DIR.
 */
export function literalCliEnvironment(cliRoot: string, extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("PULUMI_") && name !== "ARO_HCP_PROJECT_DIR"));
  return { ...inherited, PATH: `${join(cliRoot, "bin")}:${process.env.PATH ?? ""}`, PULUMI_SKIP_UPDATE_CHECK: "true", ...extra };
}

/**
 * A stack of the literal CLI over the project directory (or another program's), as a user's shell
 * has it: the built CLI on PATH ({@link literalCliEnvironment}), a file backend, home and passphrase
 * in `scratchDirectory`, `--event-log` allowed (PULUMI_DEBUG_COMMANDS), the sandbox's settings, and
 * the stack initialised with the sandbox's config and `clusters` as its clusters file. Returns the
 * shell's environment. The caller removes `Pulumi.<stackName>.yaml` from that directory afterwards.
 */
export async function initLiteralStack(
  sandbox: Sandbox,
  scratchDirectory: string,
  stackName: string,
  clusters: readonly ClusterConfig[],
  programDirectory: string = projectDirectory,
): Promise<NodeJS.ProcessEnv> {
  for (const directory of ["state", "home"]) {
    mkdirSync(join(scratchDirectory, directory), { recursive: true });
  }
  const clustersFile = join(scratchDirectory, "clusters.json");
  writeFileSync(clustersFile, JSON.stringify(clusters));
  const { settingsForRunningSandbox } = nativeRequire(join(projectDirectory, "dist", "cli", "sandboxSettings.js")) as SandboxSettingsModule;
  const settings = settingsForRunningSandbox(sandbox);
  const environment = literalCliEnvironment((await engineModule().engineCommand()).root, {
    PULUMI_DEBUG_COMMANDS: "true",
    PULUMI_BACKEND_URL: `file://${join(scratchDirectory, "state")}`,
    PULUMI_HOME: join(scratchDirectory, "home"),
    PULUMI_CONFIG_PASSPHRASE: `${stackName}-test-passphrase`,
    ...settings.environment,
  });
  await runLiteralPulumi(programDirectory, environment, stackName, "stack", "init");
  // One `config set-all` for every key: each CLI start costs this machine about 0.2 s of CPU.
  const pairs = Object.entries({ ...settings.config, documentWaitSeconds: "2", clustersFile }).flatMap(([key, value]) => [
    "--plaintext",
    `aro-hcp-identity-status:${key}=${value}`,
  ]);
  await runLiteralPulumi(programDirectory, environment, stackName, "config", "set-all", ...pairs);
  return environment;
}

/** A per-cluster sandbox (production's credential mode) with the demo fleet, and a literal CLI stack over it. */
export interface LiteralDemoFleet {
  readonly scratchDirectory: string;
  readonly sandbox: Sandbox;
  readonly fleet: FleetClusterDescription[];
  readonly environment: NodeJS.ProcessEnv;
  /** `pulumi <args>` on the stack, in the project's directory, with PULUMI_NODEJS_TRANSPILE_ONLY and `extra` added to the shell's environment. */
  readonly pulumi: (extra: NodeJS.ProcessEnv, ...args: string[]) => Promise<string>;
}

/** Starts {@link LiteralDemoFleet} in a new scratch directory named after `prefix`; {@link removeLiteralStack} undoes it. */
export async function startLiteralDemoFleet(prefix: string, stackName: string): Promise<LiteralDemoFleet> {
  const scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca"), perClusterCredentials: true });
  const fleet = seedDemoFleet(sandbox);
  const clusters = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId }));
  const environment = await initLiteralStack(sandbox, scratchDirectory, stackName, clusters);
  // `pulumi` as docs/configuration.md suggests for repeated commands: ts-node transpiles index.ts without type-checking it
  // each time (about a third of a small stack's command here). `environment` is the shell as initialised, the engine's
  // default, which test/e2e/literalCli.test.ts and the workflow test run.
  const pulumi = (extra: NodeJS.ProcessEnv, ...args: string[]): Promise<string> =>
    runLiteralPulumi(projectDirectory, { ...environment, PULUMI_NODEJS_TRANSPILE_ONLY: "true", ...extra }, stackName, ...args);
  return { scratchDirectory, sandbox, fleet, environment, pulumi };
}

/** A sandbox fault by which Entra ID refuses every token request in `tenantId`, as a revoked first-party certificate would. */
export function revokedCertificateFault(tenantId: string): FaultRuleInput {
  return {
    target: "entra",
    kind: "status",
    statusCode: 401,
    errorCode: "invalid_client",
    message: "The certificate used by the client has been revoked.",
    match: { tenantId, method: "POST" },
    count: 10_000,
  };
}

/** Undoes {@link initLiteralStack} and the sandbox: the stack's file in the program's directory, the scratch directory. */
export async function removeLiteralStack(
  sandbox: Sandbox | undefined,
  scratchDirectory: string | undefined,
  stackName: string,
  programDirectory: string = projectDirectory,
): Promise<void> {
  await sandbox?.stop();
  rmSync(join(programDirectory, `Pulumi.${stackName}.yaml`), { force: true });
  if (scratchDirectory !== undefined) {
    rmSync(scratchDirectory, { recursive: true, force: true });
  }
}

/**
 * Runs `pulumi <args> --stack <stack> --non-interactive` in a program directory; rejects with its
 * output unless it exits 0. Asynchronous: an in-process sandbox answers from this event loop.
 */
export function runLiteralPulumi(directory: string, environment: NodeJS.ProcessEnv, stackName: string, ...args: string[]): Promise<string> {
  return new Promise((resolveOutput, reject) => {
    execFile(
      "pulumi",
      [...args, "--stack", stackName, "--non-interactive"],
      { cwd: directory, env: environment, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 300_000 },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        if (error === null) {
          resolveOutput(output);
        } else {
          reject(new Error(`pulumi ${args.join(" ")} in ${directory} failed (${error.message.split("\n")[0] ?? ""}):\n${output}`));
        }
      },
    );
  });
}

/** An owned status subtree as read from Cosmos, as far as {@link expectRecordsDeclaredIdentities} looks. */
type RecordedStatus = { readonly identities?: Readonly<Record<string, unknown>> } | undefined;

/**
 * The status records exactly the cluster's declared identities, keyed by lowercased ID, each with
 * the user's spelling and the clientId/principalId the sandbox's ARM holds.
 */
export function expectRecordsDeclaredIdentities(sandbox: Sandbox, status: RecordedStatus, dataPlaneOperators: Readonly<Record<string, string>>): void {
  const identities = status?.identities ?? {};
  expect(Object.keys(identities).sort()).toEqual(
    Object.values(dataPlaneOperators)
      .map((id) => id.toLowerCase())
      .sort(),
  );
  for (const identityId of Object.values(dataPlaneOperators)) {
    const identity = sandbox.identities.get(identityId);
    expect(identity, identityId).toBeDefined();
    expect(identities[identityId.toLowerCase()]).toEqual({ resourceID: identityId, clientId: identity?.clientId, principalId: identity?.principalId });
  }
}

/** The client ID a test writes over a cluster's first data plane operator identity in Cosmos (drift to correct). */
export const wrongClientId = "0badc0de-0000-4000-8000-000000000000";

/** A cluster's first data plane operator identity, as its status keys it (lowercased). */
export function firstIdentity(cluster: FleetClusterDescription): string {
  return (Object.values(cluster.dataPlaneOperators)[0] ?? "").toLowerCase();
}

/** A JSON pointer to the given path (RFC 6901 escapes). */
export function pointerTo(...tokens: string[]): string {
  return `/${tokens.map((token) => token.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
}

/** The client ID Cosmos holds for the cluster's first data plane operator identity. */
export async function storedClientId(sandbox: Sandbox, cluster: FleetClusterDescription): Promise<string | undefined> {
  const { resource } = await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<{
    properties?: { status?: { dataPlaneOperatorsManagedIdentities?: { identities?: Record<string, { clientId?: string }> } } };
  }>();
  return resource?.properties?.status?.dataPlaneOperatorsManagedIdentities?.identities?.[firstIdentity(cluster)]?.clientId;
}

/** Someone changes every cluster's first identity in Cosmos to {@link wrongClientId}; the clusters of `dueTenantId` come due for their recheck. */
export function tamperWithFirstIdentities(sandbox: Sandbox, clusters: readonly FleetClusterDescription[], dueTenantId?: string): void {
  const path = ["properties", "status", "dataPlaneOperatorsManagedIdentities"];
  for (const cluster of clusters) {
    sandbox.documents.patch(
      cluster.partitionKey,
      cluster.serviceProviderClusterDocumentId,
      pointerTo(...path, "identities", firstIdentity(cluster), "clientId"),
      wrongClientId,
    );
    if (dueTenantId !== undefined && cluster.tenantId === dueTenantId) {
      sandbox.documents.patch(
        cluster.partitionKey,
        cluster.serviceProviderClusterDocumentId,
        pointerTo(...path, "earliestRecheckTime"),
        "2000-01-01T00:00:00Z",
      );
    }
  }
}
