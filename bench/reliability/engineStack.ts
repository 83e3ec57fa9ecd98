/**
 * A stack of the project's program over a reliability sandbox, with private state, home and work
 * directories, driven by the real engine (the CLI built from Go modules) as `npm start` drives it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { engineCommand, openStack, projectDirectory, setClusterList } from "../../cli/engine";
import type { ReliabilitySandbox } from "./reliabilitySandbox";

/** A stack and where it keeps its files. */
export interface EngineStack {
  readonly stack: automation.Stack;
  readonly stateDirectory: string;
  readonly homeDirectory: string;
  readonly workDirectory: string;
  setClusters(clusters: readonly unknown[]): Promise<void>;
  /** Deletes the stack's state, home and work directories. */
  remove(): void;
}

/** Opens a fresh stack named `name` for the clusters, with extra config and environment. */
export async function openEngineStack(
  reliability: ReliabilitySandbox,
  name: string,
  clusters: readonly unknown[],
  extra: { config?: Record<string, string>; environment?: Record<string, string> } = {},
): Promise<EngineStack> {
  const root = mkdtempSync(join(projectDirectory, ".pulumi", `reliability-${name}-`));
  const paths = { state: join(root, "state"), home: join(root, "home"), workDirectory: join(root, "work") };
  const engine = await engineCommand();
  const stack = await openStack({
    engine,
    stackName: name,
    paths,
    config: { ...reliability.config, clusters: JSON.stringify(clusters), ...extra.config },
    environment: { ...reliability.environment, ...extra.environment },
  });
  return {
    stack,
    stateDirectory: paths.state,
    homeDirectory: paths.home,
    workDirectory: paths.workDirectory,
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
    async setClusters(next) {
      await setClusterList(stack, next);
    },
  };
}
