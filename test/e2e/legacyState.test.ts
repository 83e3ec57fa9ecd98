/**
 * Issue 11 item 4: state written by an earlier version keeps working. Each fixture is
 * `pulumi stack export` of a real engine `up` made with that version's code; its sandbox endpoints
 * and CA path are placeholders filled here:
 * - test/fixtures/legacyLoaderDeployment.json: the 4.6 KB loader of commit 0e1dce3, which searched
 *   the file system for the package on every call;
 * - test/fixtures/schema1Deployment.json: commit de0f46f, the last version before outputs schema 2:
 *   the 734-character provider text (requiring the package's deep path) and outputs schema 1;
 * - test/fixtures/schema2Deployment.json: commit 338f8e8, the last version before outputs schema 3:
 *   today's provider text, and `status` as an object.
 * Each is imported into a stack over a fresh sandbox seeded the same way (seedFleet is
 * deterministic: same ARM IDs and Cosmos ids), whose documents carry no status entry yet. Then,
 * with this version:
 * - refresh runs the OLD provider text from state, which loads this implementation, and reports
 *   the missing status subtrees as drift, leaving the outputs in their schema;
 * - up restores them (read back from Cosmos) and leaves the NEW text in inputs and outputs, and
 *   outputs of the current schema;
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
import { outputsSchemaVersion } from "../../resources/core/serviceProviderClusterDocument";
import type { TestStack } from "./engineHelpers";
import { expectRecordsDeclaredIdentities, openTestStack, outputCollector, readTree } from "./engineHelpers";
import type { ServiceProviderClusterJson } from "../fixtures/storedDocument";
import { asServiceProviderClusterJson, foreignFieldsOf, ownedStatusOf, requireServiceProviderCluster } from "../fixtures/storedDocument";

type Document = ServiceProviderClusterJson;

/** A resource of the exported deployment, as far as these tests look into it. */
interface StateResource {
  readonly type: string;
  readonly inputs: { readonly __provider?: string };
  readonly outputs: {
    readonly __provider?: string;
    readonly clusterResourceId?: string;
    readonly schemaVersion?: number;
    readonly status?: unknown;
    readonly drift?: readonly string[];
  };
}

/** An earlier version's exported stack. */
interface Fixture {
  readonly title: string;
  readonly file: string;
  /** The stack name in the fixture's URNs. */
  readonly stackName: string;
  /** A line only that version's provider text has; undefined when it stored today's text. */
  readonly marker: string | undefined;
  /** The outputs schema it wrote. */
  readonly schemaVersion: number;
}

const fixtures: readonly Fixture[] = [
  {
    title: "the 4.6 KB loader (commit 0e1dce3)",
    file: "legacyLoaderDeployment.json",
    stackName: "legacy",
    // Its walk from the working directory up to the root.
    marker: "for (let directory = process.cwd();; directory = path.dirname(directory))",
    schemaVersion: 1,
  },
  {
    title: "the 734-character text and outputs schema 1 (commit de0f46f)",
    file: "schema1Deployment.json",
    stackName: "landed",
    marker: 'const specifier = "aro-hcp-identity-status/dist/resources/managedIdentityStatusProvider.js";',
    schemaVersion: 1,
  },
  {
    title: "today's provider text and outputs schema 2 (commit 338f8e8)",
    file: "schema2Deployment.json",
    stackName: "schema2",
    marker: undefined,
    schemaVersion: 2,
  },
];

describe.each(fixtures)("a stack written by $title, under this version", (fixtureCase) => {
  const oldLoaderMarker = fixtureCase.marker;
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
    sandbox = await startSandbox({ certificateDirectory: `${__dirname}/../../.sandbox/e2e-${fixtureCase.stackName}-${process.pid}` });
    fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 2, subscriptions: 1 });
    for (const cluster of fleet) {
      seeded.set(
        cluster.serviceProviderClusterDocumentId,
        asServiceProviderClusterJson(structuredClone(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId))),
      );
    }
    // The clusters config the fixtures were made with: cluster 0 declares its operators, cluster 1 reads them from its document.
    testStack = await openTestStack(sandbox, fixtureCase.stackName, [
      { clusterResourceId: fleet[0].clusterResourceId, dataPlaneOperators: fleet[0].dataPlaneOperators },
      { clusterResourceId: fleet[1].clusterResourceId },
    ]);
    const fixture = readFileSync(join(__dirname, "..", "fixtures", fixtureCase.file), "utf8")
      .replaceAll("${armEndpoint}", sandbox.endpoints.arm)
      .replaceAll("${cosmosEndpoint}", sandbox.endpoints.cosmos)
      .replaceAll("${tlsCaFile}", sandbox.caBundlePath ?? "");
    await testStack.stack.importStack(JSON.parse(fixture) as Parameters<TestStack["stack"]["importStack"]>[0]);
  }, 600_000);

  afterAll(async () => {
    await sandbox?.stop();
  });

  it("imports with the fixture's loader in every resource's inputs and outputs, its outputs schema and the fixture's cluster IDs", async () => {
    const resources = await clusterResources();
    expect(resources.map((resource) => resource.outputs.clusterResourceId).sort()).toEqual(fleet.map((cluster) => cluster.clusterResourceId).sort());
    for (const resource of resources) {
      expect(resource.inputs.__provider).toContain(oldLoaderMarker ?? providerText);
      expect(resource.outputs.__provider).toContain(oldLoaderMarker ?? providerText);
      expect(resource.outputs.schemaVersion).toBe(fixtureCase.schemaVersion);
    }
  });

  it("refresh runs the old loader, which loads this implementation, and reports the missing entries as drift", async () => {
    const output = outputCollector();
    const refresh = await testStack.stack.refresh({ color: "never", onOutput: output.onOutput });
    expect(refresh.summary.result).toBe("succeeded");
    expect(refresh.summary.resourceChanges?.update).toBe(2);
    for (const resource of await clusterResources()) {
      // The fresh documents carry no entry of the identities the fixture's state knows.
      expect(resource.outputs.drift?.length).toBeGreaterThan(0);
      for (const line of resource.outputs.drift ?? [])
        expect(line).toMatch(/was removed from the status in Cosmos$|^the status subtree was deleted in Cosmos$/);
      if (fixtureCase.schemaVersion === 1) {
        // Outputs of schema 1 stay in it until the next update: they lack the inputs' digest.
        expect(resource.outputs.schemaVersion).toBe(1);
      } else {
        // Outputs of schema 2 hold everything schema 3 needs: refresh writes them as schema 3.
        expect(resource.outputs.schemaVersion).toBe(outputsSchemaVersion);
        expect(typeof resource.outputs.status).toBe("string");
      }
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
      expectRecordsDeclaredIdentities(sandbox, ownedStatus(document), cluster.dataPlaneOperators);
      expect(foreignFields(document)).toEqual(foreignFields(seeded.get(cluster.serviceProviderClusterDocumentId) as Document));
    }
    for (const resource of await clusterResources()) {
      if (oldLoaderMarker !== undefined) expect(resource.inputs.__provider).not.toContain(oldLoaderMarker);
      expect(resource.inputs.__provider).toBe(providerText);
      expect(resource.outputs.__provider).toBe(resource.inputs.__provider);
      expect(resource.outputs.schemaVersion).toBe(outputsSchemaVersion);
      expect(typeof resource.outputs.status).toBe("string");
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
