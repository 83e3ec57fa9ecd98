/**
 * The documented configurations through the real engine over the project's real Pulumi.yaml (a
 * copy in the stack's work directory, no synthesized project settings), so the CLI validates the
 * stack config exactly as the literal `pulumi up` does. Each case checks what Cosmos holds after.
 *
 * Reproduces issue 11 item 1: with `cosmosKey` declared `secret: true` and `default: ""`, every
 * run below that leaves cosmosKey unset failed with "must be encrypted as it's secret".
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DataPlaneOperatorsManagedIdentities } from "../../resources/core/serviceProviderClusterDocument";
import { ownedStatusOf, readServiceProviderCluster } from "../fixtures/storedDocument";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { openTestStack, outputCollector, readTree } from "./engineHelpers";

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${process.cwd()}/.pulumi/project-config-ca-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: 4, identitiesPerCluster: 2 });
}, 120_000);

afterAll(async () => {
  await sandbox?.stop();
});

async function persistedIdentities(cluster: FleetClusterDescription): Promise<NonNullable<DataPlaneOperatorsManagedIdentities["identities"]>> {
  const document = await readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
  return (document === undefined ? undefined : ownedStatusOf(document))?.identities ?? {};
}

async function expectRecorded(cluster: FleetClusterDescription): Promise<void> {
  const identities = await persistedIdentities(cluster);
  for (const identityId of Object.values(cluster.dataPlaneOperators)) {
    const expected = sandbox.identities.get(identityId);
    expect(identities[identityId.toLowerCase()], identityId).toMatchObject({ clientId: expected?.clientId, principalId: expected?.principalId });
  }
}

function withoutCosmosKey(environment: Record<string, string>): Record<string, string> {
  const { COSMOS_KEY: _dropped, ...rest } = environment;
  return rest;
}

function authorizedByKind(): Record<string, number> {
  return sandbox.statistics.snapshot().cosmos.authorizedByKind;
}

describe("the project's Pulumi.yaml with the literal CLI's config validation", () => {
  it("is the project's own file in the work directory", async () => {
    const { workDirectory } = await openTestStack(sandbox, "project-file", []);
    expect(realpathSync(join(workDirectory, "Pulumi.yaml"))).toBe(realpathSync(join(process.cwd(), "Pulumi.yaml")));
  });

  it("records with the key from COSMOS_KEY (cosmosKey left at its default)", async () => {
    const cluster = fleet[0];
    const { stack } = await openTestStack(sandbox, "key-from-environment", [
      { clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators },
    ]);
    const before = authorizedByKind();
    const output = outputCollector();
    const result = await stack.up({ onOutput: output.onOutput });
    expect(result.summary.result, output.text()).toBe("succeeded");
    // Counted before this test's own reads, which use the sandbox's key.
    const after = authorizedByKind();
    await expectRecorded(cluster);
    expect(after.master ?? 0).toBeGreaterThan(before.master ?? 0);
    expect(after.aad ?? 0).toBe(before.aad ?? 0);
  });

  it("records with the key as a secret in the stack config, and the key is in neither state nor the stack file", async () => {
    const cluster = fleet[1];
    const testStack = await openTestStack(
      sandbox,
      "key-as-secret",
      [{ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }],
      {},
      withoutCosmosKey,
    );
    await testStack.stack.setConfig("aro-hcp-identity-status:cosmosKey", { value: sandbox.cosmosKey, secret: true });
    const output = outputCollector();
    const result = await testStack.stack.up({ onOutput: output.onOutput });
    expect(result.summary.result, output.text()).toBe("succeeded");
    await expectRecorded(cluster);
    expect(readTree(testStack.stateDirectory)).not.toContain(sandbox.cosmosKey);
    expect(readTree(testStack.workDirectory)).not.toContain(sandbox.cosmosKey);
    expect(output.text()).not.toContain(sandbox.cosmosKey);
  });

  it("records with Entra ID when no key is set anywhere (tokens for the Cosmos audience)", async () => {
    const cluster = fleet[2];
    const { stack } = await openTestStack(
      sandbox,
      "entra-id",
      [{ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }],
      {},
      withoutCosmosKey,
    );
    const before = authorizedByKind();
    const output = outputCollector();
    const result = await stack.up({ onOutput: output.onOutput });
    expect(result.summary.result, output.text()).toBe("succeeded");
    const after = authorizedByKind();
    await expectRecorded(cluster);
    expect(after.aad ?? 0).toBeGreaterThan(before.aad ?? 0);
    expect(after.master ?? 0).toBe(before.master ?? 0);
  });

  it("refuses a cosmosKey stored in plain text, naming it, and writes nothing", async () => {
    const cluster = fleet[3];
    const { stack } = await openTestStack(
      sandbox,
      "plain-key",
      [{ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }],
      { cosmosKey: "not-a-secret" },
      withoutCosmosKey,
    );
    const output = outputCollector();
    const error = (await stack.up({ onOutput: output.onOutput }).catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(`${output.text()}\n${error.message}`).toContain("aro-hcp-identity-status:cosmosKey is stored in plain text in the stack config; set it as a secret");
    expect(await persistedIdentities(cluster)).toEqual({});
  });

  it("refuses a value of the wrong type, as the CLI does for `pulumi up`", async () => {
    const cluster = fleet[3];
    const { stack } = await openTestStack(sandbox, "wrong-type", [{ clusterResourceId: cluster.clusterResourceId }], { lookupConcurrency: "eight" });
    const output = outputCollector();
    const error = (await stack.up({ onOutput: output.onOutput }).catch((caught: unknown) => caught)) as Error;
    expect(`${output.text()}\n${error.message}`).toContain("configuration key 'lookupConcurrency' must be of type 'integer'");
    expect(await persistedIdentities(cluster)).toEqual({});
  });
});
