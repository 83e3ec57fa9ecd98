/**
 * `npm start`: the main job against the embedded sandbox. Starts the sandbox with its demo
 * fleet, runs `pulumi up` of this project's program through the real engine, prints what was
 * persisted in Cosmos, then stops the sandbox.
 */
import { join } from "node:path";
import { startSandbox } from "../sandbox/sandbox";
import { seedDemoFleet } from "../sandbox/seed";
import { engineCommand, enginePaths, openStack, projectDirectory } from "./engine";
import { settingsForRunningSandbox } from "./sandboxSettings";
import { formatTable, readSummaryRows } from "./summaryTable";

const stackName = "sandbox-demo";
/** A throwaway stack: the project's file backend and its own work directory, whatever the user's backend. */
const paths = { ...enginePaths, workDirectory: join(projectDirectory, ".pulumi", "sandbox-demo") };

async function main(): Promise<void> {
  const engine = await engineCommand((line) => console.log(line));
  console.log(`engine: pulumi v${engine.version}, ${engine.source} (${engine.root}/bin/pulumi)`);
  // Production's credential mode: each cluster's identities readable by its own SMI only.
  const sandbox = await startSandbox({ certificateDirectory: join(projectDirectory, ".sandbox", "demo"), perClusterCredentials: true });
  try {
    const fleet = seedDemoFleet(sandbox);
    const tenants = new Set(fleet.map((cluster) => cluster.tenantId)).size;
    const subscriptions = new Set(fleet.map((cluster) => cluster.partitionKey)).size;
    console.log(
      `sandbox: ARM ${sandbox.endpoints.arm}, Cosmos ${sandbox.endpoints.cosmos}, Managed Identities data plane ${sandbox.endpoints.dataPlane}; ` +
        `${fleet.length} clusters seeded in ${subscriptions} subscriptions of ${tenants} tenants, each read as its own service managed identity (credentialMode clusterServiceManagedIdentity)`,
    );
    const { config, environment } = settingsForRunningSandbox(sandbox);
    // The demo: every cluster declares its operators, except the last, whose operators are read
    // from its HCPOpenShiftCluster document as upstream does.
    const clusters = fleet.map((cluster, index) =>
      index === fleet.length - 1
        ? { clusterResourceId: cluster.clusterResourceId }
        : {
            clusterResourceId: cluster.clusterResourceId,
            dataPlaneOperators: cluster.dataPlaneOperators,
            serviceManagedIdentity: cluster.serviceManagedIdentity,
          },
    );
    const stack = await openStack({ engine, stackName, paths, config: { ...config, clusters: JSON.stringify(clusters) }, environment });
    // The sandbox is in memory: state from an earlier run describes documents that are gone.
    await stack.workspace.removeStack(stackName, { force: true }).catch(() => undefined);
    const fresh = await openStack({ engine, stackName, paths, config: { ...config, clusters: JSON.stringify(clusters) }, environment });
    const result = await fresh.up({ onOutput: (text) => process.stdout.write(text), color: "never" });
    console.log(`\npulumi up: ${result.summary.result}; ${JSON.stringify(result.summary.resourceChanges ?? {})}`);
    const rows = await readSummaryRows(
      sandbox.cosmosContainer,
      fleet.map((cluster) => ({
        clusterResourceId: cluster.clusterResourceId,
        partitionKey: cluster.partitionKey,
        documentId: cluster.serviceProviderClusterDocumentId,
      })),
    );
    console.log("\nPersisted in Cosmos (read back from the ServiceProviderCluster documents):\n");
    console.log(formatTable(rows));
  } finally {
    await sandbox.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
