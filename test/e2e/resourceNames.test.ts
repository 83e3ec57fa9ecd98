/**
 * Resources are named after their clusters. A stack written by earlier releases (names
 * `<cluster>-<hash>`) moves to the new names through aliases: `up` renames, it replaces and deletes
 * nothing, and Cosmos keeps what was recorded.
 */
import { createRequire } from "node:module";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readServiceProviderCluster } from "../fixtures/storedDocument";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { engineModule, outputCollector } from "./engineHelpers";

const projectDirectory = join(__dirname, "..", "..");
const nativeRequire = createRequire(join(projectDirectory, "package.json"));
let sandbox: Sandbox;
let fleet: FleetClusterDescription[];

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${projectDirectory}/.pulumi/resource-names-ca-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 2 });
}, 120_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe("resource names", () => {
  it("renames a stack of the old hashed names to cluster names without replacing or deleting anything", async () => {
    const engine = engineModule();
    const { settingsForRunningSandbox } = nativeRequire(
      join(projectDirectory, "dist", "cli", "sandboxSettings.js"),
    ) as typeof import("../../cli/sandboxSettings");
    const { ServiceProviderClusterIdentityStatus } = nativeRequire(join(projectDirectory, "dist", "resources", "index.js")) as typeof import("../../resources");
    const { hashedResourceNameFor } = nativeRequire(
      join(projectDirectory, "dist", "program", "declareFleet.js"),
    ) as typeof import("../../program/declareFleet");
    const command = await engine.engineCommand();
    const root = mkdtempSync(join(projectDirectory, ".pulumi", "test-resource-names-"));
    const paths = { state: join(root, "state"), home: join(root, "home"), workDirectory: join(root, "work") };
    const { config, environment } = settingsForRunningSandbox(sandbox);
    const clusters = fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }));
    const open = (program: automation.PulumiFn) =>
      engine.openStack({
        engine: command,
        stackName: "names",
        paths,
        program,
        environment,
        config: { ...config, documentWaitSeconds: "2", clusters: JSON.stringify(clusters) },
      });

    // The program of earlier releases: hashed names, outputs keyed by ARM ID.
    const legacy = await open(() => {
      for (const cluster of clusters) new ServiceProviderClusterIdentityStatus(hashedResourceNameFor(cluster.clusterResourceId), cluster);
      return Promise.resolve({});
    });
    expect((await legacy.up()).summary.resourceChanges).toMatchObject({ create: 3 });
    const recorded = await Promise.all(
      fleet.map((cluster) => readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey)),
    );

    const current = await open(engine.projectProgram());
    const output = outputCollector();
    const result = await current.up({ onOutput: output.onOutput });
    expect(result.summary.resourceChanges, output.text()).not.toHaveProperty("create");
    expect(result.summary.resourceChanges).not.toHaveProperty("delete");
    expect(result.summary.resourceChanges).not.toHaveProperty("replace");
    const deployment = (await current.exportStack()).deployment as { resources: Array<{ urn: string; type: string }> };
    const names = deployment.resources
      .filter((resource) => resource.type.endsWith("ServiceProviderClusterIdentityStatus"))
      .map((resource) => resource.urn.split("::").pop());
    expect(names.sort()).toEqual(fleet.map((cluster) => cluster.clusterResourceId.split("/").pop()).sort());
    for (const [index, cluster] of fleet.entries()) {
      const document = await readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
      expect(document?.properties.status).toBeDefined();
      expect(document?.properties.status).toEqual(recorded[index]?.properties.status);
    }
  });
});
