/**
 * Issue 11 item 4: state written by an earlier version keeps working. The fixture
 * (test/fixtures/legacyLoaderDeployment.json) is `pulumi stack export` of a real engine `up` made
 * with the 4.6 KB loader of commit 0e1dce3, which searched the file system for the package on every
 * call; its sandbox endpoints and CA path are placeholders filled here. It is imported into a
 * stack over a fresh sandbox seeded the same way (seedFleet is deterministic: same ARM IDs and
 * Cosmos ids), whose documents carry no status entry yet. Then, with this version:
 * - refresh runs the OLD loader text from state, which loads this implementation, and reports the
 *   missing status subtrees as drift;
 * - up restores them (read back from Cosmos) and leaves the NEW loader in inputs and outputs;
 * - a second up is a no-op; destroy removes the subtrees and nothing else.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import { providerText } from "../../resources/provider/providerLoader";
import type { TestStack } from "./engineHelpers";
import { openTestStack, outputCollector, readTree } from "./engineHelpers";
import type { ServiceProviderClusterJson } from "../fixtures/storedDocument";
import { asServiceProviderClusterJson, foreignFieldsOf, ownedStatusOf, requireServiceProviderCluster } from "../fixtures/storedDocument";

type Document = ServiceProviderClusterJson;

/** A resource of the exported deployment, as far as these tests look into it. */
interface StateResource {
  readonly type: string;
  readonly inputs: { readonly __provider?: string };
  readonly outputs: { readonly __provider?: string; readonly clusterResourceId?: string; readonly drift: readonly string[] };
}

/** A line only the old loader has: its walk from the working directory up to the root. */
const oldLoaderMarker = "for (let directory = process.cwd();; directory = path.dirname(directory))";

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let testStack: TestStack;
const seeded = new Map<string, Document>();

async function readDocument(cluster: FleetClusterDescription): Promise<Document> {
  return requireServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
}

function ownedStatus(document: Document): ReturnType<typeof ownedStatusOf> {
  return ownedStatusOf(document);
}

function foreignFields(document: Document): Document {
  return foreignFieldsOf(document);
}

async function clusterResources(): Promise<StateResource[]> {
  const deployment = (await testStack.stack.exportStack()).deployment as { resources: StateResource[] };
  return deployment.resources.filter((resource) => String(resource.type).endsWith(":ServiceProviderClusterIdentityStatus"));
}

beforeAll(async () => {
  sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/e2e-legacy-${process.pid}` });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 2, subscriptions: 1 });
  for (const cluster of fleet) {
    seeded.set(
      cluster.serviceProviderClusterDocumentId,
      asServiceProviderClusterJson(structuredClone(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId))),
    );
  }
  // The clusters config the fixture was made with: cluster 0 declares its operators, cluster 1 reads them from its document.
  testStack = await openTestStack(sandbox, "legacy", [
    { clusterResourceId: fleet[0].clusterResourceId, dataPlaneOperators: fleet[0].dataPlaneOperators },
    { clusterResourceId: fleet[1].clusterResourceId },
  ]);
  const fixture = readFileSync(join(__dirname, "..", "fixtures", "legacyLoaderDeployment.json"), "utf8")
    .replaceAll("${armEndpoint}", sandbox.endpoints.arm)
    .replaceAll("${cosmosEndpoint}", sandbox.endpoints.cosmos)
    .replaceAll("${tlsCaFile}", sandbox.caBundlePath ?? "");
  await testStack.stack.importStack(JSON.parse(fixture) as Parameters<TestStack["stack"]["importStack"]>[0]);
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe("a stack written by the previous loader (fixture), under this version", () => {
  it("imports with the old loader in every resource's inputs and outputs and the fixture's cluster IDs", async () => {
    const resources = await clusterResources();
    expect(resources.map((resource) => resource.outputs.clusterResourceId).sort()).toEqual(fleet.map((cluster) => cluster.clusterResourceId).sort());
    for (const resource of resources) {
      expect(resource.inputs.__provider).toContain(oldLoaderMarker);
      expect(resource.outputs.__provider).toContain(oldLoaderMarker);
    }
  });

  it("refresh runs the old loader, which loads this implementation, and reports the missing entries as drift", async () => {
    const output = outputCollector();
    const refresh = await testStack.stack.refresh({ color: "never", onOutput: output.onOutput });
    expect(refresh.summary.result).toBe("succeeded");
    expect(refresh.summary.resourceChanges?.update).toBe(2);
    for (const resource of await clusterResources()) {
      // The fresh documents carry no entry of the identities the fixture's state knows.
      expect(resource.outputs.drift.length).toBeGreaterThan(0);
      for (const line of resource.outputs.drift) expect(line).toMatch(/was removed from the status in Cosmos$|^the status subtree was deleted in Cosmos$/);
    }
    // Refresh writes nothing: the owned subtree is as seeded.
    for (const cluster of fleet)
      expect(ownedStatus(await readDocument(cluster))).toEqual(ownedStatus(seeded.get(cluster.serviceProviderClusterDocumentId) as Document));
  });

  it("up restores every status in Cosmos and stores the new loader in inputs and outputs", async () => {
    const result = await testStack.stack.up({ color: "never" });
    expect(result.summary.result).toBe("succeeded");
    for (const cluster of fleet) {
      const document = await readDocument(cluster);
      const status = ownedStatus(document);
      expect(Object.keys(status?.identities ?? {}).sort()).toEqual(
        Object.values(cluster.dataPlaneOperators)
          .map((id) => id.toLowerCase())
          .sort(),
      );
      for (const identityId of Object.values(cluster.dataPlaneOperators)) {
        const identity = sandbox.identities.get(identityId);
        expect(status?.identities?.[identityId.toLowerCase()]).toEqual({
          resourceID: identityId,
          clientId: identity?.clientId,
          principalId: identity?.principalId,
        });
      }
      expect(foreignFields(document)).toEqual(foreignFields(seeded.get(cluster.serviceProviderClusterDocumentId) as Document));
    }
    for (const resource of await clusterResources()) {
      expect(resource.inputs.__provider).not.toContain(oldLoaderMarker);
      expect(resource.inputs.__provider).toBe(providerText);
      expect(resource.outputs.__provider).toBe(resource.inputs.__provider);
    }
  });

  it("a second up changes nothing and writes nothing", async () => {
    sandbox.statistics.reset();
    const result = await testStack.stack.up({ color: "never", expectNoChanges: true });
    expect(result.summary.resourceChanges).toEqual({ same: 3 });
    const snapshot = sandbox.statistics.snapshot();
    expect(Object.values(snapshot.cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0)).toBe(0);
    expect(snapshot.arm.getRequests).toBe(0);
  });

  it("keeps the Cosmos key and the identity header out of the state", () => {
    const state = readTree(testStack.stateDirectory);
    expect(state).not.toContain(sandbox.cosmosKey);
    expect(state).not.toContain(sandbox.identityHeader);
  });

  it("destroy removes the owned subtree and leaves the rest of every document intact", async () => {
    const result = await testStack.stack.destroy({ color: "never" });
    expect(result.summary.result).toBe("succeeded");
    for (const cluster of fleet) {
      const document = await readDocument(cluster);
      expect(ownedStatus(document)).toEqual({});
      expect(foreignFields(document)).toEqual(foreignFields(seeded.get(cluster.serviceProviderClusterDocumentId) as Document));
    }
  });
});
