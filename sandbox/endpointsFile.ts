import { credentialModeSettings } from "../cli/sandboxSettings";
import type { Sandbox } from "./sandbox";
import type { FleetClusterDescription } from "./seed";

/** The Pulumi project namespace of the config keys. */
const pulumiProject = "aro-hcp-identity-status";

/**
 * What `npm run sandbox` writes to `endpoints.json` (docs/sandbox.md): the endpoints, the CA
 * bundle's path, the admin token, the environment and the stack config for the CLI, the seeded
 * clusters and the credential chain. Tests that start a sandbox in process write the same file
 * for clients in other processes (the conformance program).
 *
 * @param sandbox - The running sandbox.
 * @param caBundlePath - Where its CA bundle is.
 * @param clustersFile - The program's cluster list.
 * @param demoFleet - The seeded clusters.
 * @returns The file's content.
 */
export function sandboxDescription(
  sandbox: Sandbox,
  caBundlePath: string,
  clustersFile: string,
  demoFleet: readonly FleetClusterDescription[],
): Record<string, unknown> {
  return {
    startedAt: new Date().toISOString(),
    processId: process.pid,
    endpoints: sandbox.endpoints,
    caBundlePath,
    adminToken: sandbox.adminToken,
    database: sandbox.database,
    container: sandbox.container,
    environment: {
      COSMOS_KEY: sandbox.cosmosKey,
      IDENTITY_ENDPOINT: sandbox.endpoints.identity,
      IDENTITY_HEADER: sandbox.identityHeader,
    },
    pulumiConfig: {
      [`${pulumiProject}:cosmosEndpoint`]: sandbox.endpoints.cosmos,
      [`${pulumiProject}:cosmosDatabase`]: sandbox.database,
      [`${pulumiProject}:cosmosContainer`]: sandbox.container,
      [`${pulumiProject}:armEndpoint`]: sandbox.endpoints.arm,
      [`${pulumiProject}:tlsCaFile`]: caBundlePath,
      [`${pulumiProject}:documentWaitSeconds`]: "5",
      [`${pulumiProject}:clustersFile`]: clustersFile,
      // Per-cluster mode: production's credential mode (cli/sandboxSettings.ts credentialModeSettings).
      ...Object.fromEntries(Object.entries(credentialModeSettings(sandbox.credentialChain)).map(([key, value]) => [`${pulumiProject}:${key}`, value])),
    },
    clustersFile,
    demoFleet,
    credentialChain: sandbox.credentialChain,
  };
}
