/**
 * Stacks whose state lives in Azure Blob Storage (`azblob://`), served here by Azurite: the way a
 * team shares one backend between many pipelines. Each opened stack is its own runner: its own
 * Pulumi home and work directory, the same container.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import type { Sandbox } from "../../sandbox/sandbox";
import type { AzblobBackend } from "../../sandbox/azurite";
import { type ClusterConfig, e2eScratchDirectory, engineModule } from "./engineHelpers";

/** A throwaway passphrase for this test run's stacks; the same for every runner, like a shared pipeline secret. */
const passphrase = randomBytes(16).toString("hex");

/** Options of {@link openAzblobStack}. */
export interface AzblobStackOptions {
  readonly stackName: string;
  readonly clusters: readonly ClusterConfig[];
  readonly extraConfig?: Readonly<Record<string, string>>;
}

/** One runner's view of a stack. */
export interface AzblobRunner {
  readonly stack: automation.Stack;
  /** The local file-backend directory the engine helpers create; it must stay empty. */
  readonly fileStateDirectory: string;
}

/**
 * Opens (creating or selecting) a stack of the project's program against the sandbox, with its
 * state in the blob backend. Every call is a separate runner: fresh home and work directories.
 */
export async function openAzblobStack(sandbox: Sandbox, backend: AzblobBackend, options: AzblobStackOptions): Promise<AzblobRunner> {
  const engine = engineModule();
  const root = e2eScratchDirectory(`azblob-${options.stackName}`);
  // The file backend directory stays empty: the tests check that nothing went there.
  const paths = { state: join(root, "unused-file-state"), home: join(root, "home"), workDirectory: join(root, "work") };
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const stack = await engine.openStack({
    engine: await engine.engineCommand(),
    stackName: options.stackName,
    paths,
    config: { ...config, documentWaitSeconds: "2", clusters: JSON.stringify(options.clusters), ...options.extraConfig },
    environment: {
      ...environment,
      // PULUMI_BACKEND_URL wins over the project's backend setting and any `pulumi login`.
      PULUMI_BACKEND_URL: backend.url,
      ...backend.environment,
      PULUMI_CONFIG_PASSPHRASE: passphrase,
    },
  });
  return { stack, fileStateDirectory: paths.state };
}

/** The `clusterResourceId` outputs of the resources in a stack's state, as read through the backend. */
export async function clustersInState(stack: automation.Stack): Promise<string[]> {
  const exported = await stack.exportStack();
  const resources = (exported.deployment as { resources?: Array<{ outputs?: { clusterResourceId?: unknown } }> }).resources ?? [];
  return resources
    .map((resource) => resource.outputs?.clusterResourceId)
    .filter((id): id is string => typeof id === "string")
    .sort();
}

/** Waits (polling, no time limit of its own: the test's timeout bounds it) until a condition holds. */
export async function waitUntil(condition: () => Promise<boolean>, pollIntervalInMs = 200): Promise<void> {
  while (!(await condition())) {
    await new Promise((resolvePoll) => setTimeout(resolvePoll, pollIntervalInMs));
  }
}
