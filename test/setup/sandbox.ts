import type {} from "vitest";
import type { TestProject } from "vitest/node";
import { type SandboxConnection, startSandbox } from "../../sandbox/sandbox";

declare module "vitest" {
  interface ProvidedContext {
    /** Connection details of the sandbox started by this global setup (see docs/sandbox.md). */
    sandbox: SandboxConnection;
  }
}

/**
 * Vitest global setup of the integration project: starts the sandbox once in the main process and
 * provides its connection details as `inject("sandbox")`. Tests run in workers, so they reach the
 * sandbox state only through the admin API (`SandboxAdminClient`). No data is seeded; tests create
 * what they need (or call `seedDemoFleet()` on the admin client).
 *
 * @param project - The vitest project.
 * @returns The teardown, which stops every sandbox server.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sandbox = await startSandbox();
  project.provide("sandbox", sandbox.connection());
  return async () => {
    await sandbox.stop();
  };
}
