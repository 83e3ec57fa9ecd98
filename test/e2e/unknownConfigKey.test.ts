/**
 * Through the real engine, over the project's real Pulumi.yaml (the CLI itself accepts an undeclared
 * key of the namespace): the provider host hands `configure` the whole stack config, and a key
 * of the project's namespace that nothing reads fails the run with a message naming it, before
 * anything is written.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readServiceProviderCluster } from "../fixtures/storedDocument";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import { seedFleet } from "../../sandbox/seed";
import { openTestStack, outputCollector } from "./engineHelpers";

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${process.cwd()}/.pulumi/unknown-config-key-ca` });
});

afterAll(async () => {
  await sandbox?.stop();
});

async function readStatus(documentId: string, partitionKey: string): Promise<unknown> {
  const document = await readServiceProviderCluster(sandbox.cosmosContainer, documentId, partitionKey);
  return document?.properties.status?.dataPlaneOperatorsManagedIdentities;
}

describe("an unknown key in the aro-hcp-identity-status namespace", () => {
  it("fails the update naming the key and the known keys, and writes nothing", async () => {
    const [cluster] = seedFleet(sandbox, { clusters: 1, identitiesPerCluster: 2 });
    if (cluster === undefined) throw new Error("no cluster seeded");
    const { stack } = await openTestStack(
      sandbox,
      "unknown-key",
      [{ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }],
      {
        lookupConcurency: "4",
      },
    );
    const statusBefore = await readStatus(cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
    const output = outputCollector();
    const error = (await stack.up({ onOutput: output.onOutput }).catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    const text = `${output.text()}\n${error.message}`;
    expect(text).toContain("unknown config key 'aro-hcp-identity-status:lookupConcurency'");
    expect(text).toContain("lookupConcurrency");
    expect(await readStatus(cluster.serviceProviderClusterDocumentId, cluster.partitionKey)).toEqual(statusBefore);
    expect(sandbox.statistics.snapshot().arm.getRequests).toBe(0);
  });
});
