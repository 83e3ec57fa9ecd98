import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type {} from "vitest";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  interface ProvidedContext {
    /** The directory under .pulumi/ that holds this run's e2e stacks (see {@link setup}). */
    e2eScratchRoot: string;
  }
}

/**
 * Vitest global setup of the e2e project: one directory for this run's stacks (state, Pulumi home,
 * work directory), under the project's .pulumi/ so that a work directory resolves the project's
 * node_modules, provided to the test files as `inject("e2eScratchRoot")`
 * (test/e2e/engineHelpers.ts `e2eScratchDirectory`). The teardown removes it, so the test command,
 * run many times a day, leaves nothing behind; another run in the same checkout has its own.
 *
 * @param project - The vitest project.
 * @returns The teardown, which removes the directory.
 */
export default function setup(project: TestProject): () => void {
  const pulumiDirectory = join(resolve(__dirname, "..", ".."), ".pulumi");
  mkdirSync(pulumiDirectory, { recursive: true });
  const root = mkdtempSync(join(pulumiDirectory, "test-run-"));
  project.provide("e2eScratchRoot", root);
  return () => rmSync(root, { recursive: true, force: true });
}
