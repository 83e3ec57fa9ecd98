/**
 * Issue 10 item 5 end to end with the real SDK clients: a cluster and an identity named with
 * Turkish İ are found and written where upstream (Go) puts them. The sandbox seeds the documents
 * under ids it computes the Go way (sandbox/goLowerCase.ts); the expected id and key come from
 * test/fixtures/goVectors.json, which Go printed.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import { providerForSandbox } from "../fixtures/sandboxConfig";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { buildClusterDocument, buildServiceProviderClusterDocument } from "../../sandbox/documentBuilders";

interface ArmVector {
  readonly armResourceId: string;
  readonly lower: string;
  readonly documentId: string;
}

const vectors = (JSON.parse(fs.readFileSync(path.resolve(__dirname, "../fixtures/goVectors.json"), "utf8")) as { armResourceIds: ArmVector[] }).armResourceIds;
const connection = inject("sandbox");
const admin = new SandboxAdminClient(connection.endpoints.admin, connection.adminToken);
let provider: ReturnType<typeof createManagedIdentityStatusProvider>;

function goVector(predicate: (id: string) => boolean): ArmVector {
  const vector = vectors.find((candidate) => predicate(candidate.armResourceId));
  if (vector === undefined) throw new Error("missing Go vector");
  return vector;
}

let dispose: (() => void) | undefined;

beforeAll(() => {
  ({ provider, dispose } = providerForSandbox(connection));
});

// The CA file is the test's own: nothing is left in the temporary directory.
afterAll(() => dispose?.());

describe("a cluster and an identity named with İ, against the sandbox", () => {
  it("writes the identity under Go's key into the document with Go's id", async () => {
    const cluster = goVector((id) => id.endsWith("/hcpOpenShiftClusters/cluster-İ"));
    const serviceProviderCluster = goVector((id) => id === `${cluster.armResourceId}/serviceProviderClusters/default`);
    const identity = goVector((id) => id.endsWith("/userAssignedIdentities/disk-csi-İ"));
    const partitionKey = serviceProviderCluster.lower.split("/")[2];
    const serviceManagedIdentity = identity.armResourceId.replace("disk-csi-İ", "service-İ");
    const armIdentity = await admin.createIdentity(identity.armResourceId);
    await admin.createIdentity(serviceManagedIdentity);
    const clusterDocument = buildClusterDocument({
      clusterResourceId: cluster.armResourceId,
      dataPlaneOperators: { "disk-csi-driver": identity.armResourceId },
      serviceManagedIdentity,
    });
    const serviceProviderClusterDocument = buildServiceProviderClusterDocument({ clusterResourceId: cluster.armResourceId });
    // The sandbox stands in for upstream: it must seed under Go's ids, or this test proves nothing.
    expect([clusterDocument.id, clusterDocument.partitionKey]).toEqual([cluster.documentId, partitionKey]);
    expect([serviceProviderClusterDocument.id, serviceProviderClusterDocument.partitionKey]).toEqual([serviceProviderCluster.documentId, partitionKey]);
    await admin.putDocument(partitionKey, cluster.documentId, clusterDocument);
    await admin.putDocument(partitionKey, serviceProviderCluster.documentId, serviceProviderClusterDocument);

    const result = await provider.create({ clusterResourceId: cluster.armResourceId, dataPlaneOperators: { "disk-csi-driver": identity.armResourceId } });

    expect(result.id).toBe(serviceProviderCluster.documentId);
    const stored = (await admin.readDocument(partitionKey, serviceProviderCluster.documentId)) as unknown as {
      properties: { status: { dataPlaneOperatorsManagedIdentities: { identities: Record<string, unknown> } } };
    };
    const identities = stored.properties.status.dataPlaneOperatorsManagedIdentities.identities;
    expect(Object.keys(identities)).toEqual([identity.lower]);
    expect(identities[identity.lower]).toMatchObject({ clientId: armIdentity.clientId, principalId: armIdentity.principalId });
  });
});
