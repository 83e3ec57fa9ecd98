/**
 * Only a definitive answer about an identity changes its stored IDs, in clusterServiceManagedIdentity
 * mode through the provider with the real @azure/identity, @azure/arm-msi, @azure/core-rest-pipeline
 * and @azure/cosmos clients against a per-cluster sandbox:
 *
 * - the data plane operators' half: ARM's ResourceNotFound clears an identity's IDs (upstream's
 *   rule, on the error code); any other 404 (SubscriptionNotFound, or no Azure error at all, as an
 *   endpoint that does not route to ARM answers) and a malformed 200 keep them beside a
 *   retrievalError, with the recheck left open;
 * - the MSI half: only the data plane's null for an identity clears it; an answer Go's decoder
 *   refuses (a field of another type), one missing a field, an entry, or answering for an identity
 *   not asked for writes nothing of that half and fails naming what is wrong.
 *
 * Every assertion reads the ServiceProviderCluster document back from the sandbox's Cosmos.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { JsonObject } from "../../resources/core/json";
import type { AnswerEdit, FaultRuleInput } from "../../sandbox/faultInjector";
import type { Sandbox } from "../../sandbox/sandbox";
import { useClusterModeSandbox } from "../fixtures/clusterModeSandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";

const fixture = useClusterModeSandbox({ clusters: 2, identitiesPerCluster: 2 });
let sandbox: Sandbox;
let clusters: FleetClusterDescription[];
beforeAll(() => {
  sandbox = fixture.sandbox;
  clusters = fixture.clusters;
});

type Entry = { resourceID?: string; resourceId?: string; clientId?: string; principalId?: string; retrievalError?: string };

function statusOf(cluster: FleetClusterDescription): JsonObject {
  const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
  return structuredClone((document.properties as JsonObject).status as JsonObject);
}
const dataPlaneHalf = (cluster: FleetClusterDescription) =>
  statusOf(cluster).dataPlaneOperatorsManagedIdentities as { identities?: Record<string, Entry>; earliestRecheckTime?: string };
const msiHalf = (cluster: FleetClusterDescription): JsonObject => statusOf(cluster).msiManagedIdentities as JsonObject;

function makeDue(cluster: FleetClusterDescription): void {
  for (const half of ["dataPlaneOperatorsManagedIdentities", "msiManagedIdentities"]) {
    sandbox.documents.patch(
      cluster.partitionKey,
      cluster.serviceProviderClusterDocumentId,
      `/properties/status/${half}/earliestRecheckTime`,
      "2000-01-01T00:00:00Z",
    );
  }
}

/** Both halves recorded from a fault-free pass, then made due so that the next pass asks Azure again. */
async function recordedAndDue(cluster: FleetClusterDescription): Promise<void> {
  makeDue(cluster);
  await fixture.provider().create({ clusterResourceId: cluster.clusterResourceId });
  for (const id of Object.values(cluster.dataPlaneOperators)) {
    expect(dataPlaneHalf(cluster).identities?.[id.toLowerCase()], id).toEqual({
      resourceID: id,
      clientId: sandbox.identities.get(id)?.clientId,
      principalId: sandbox.identities.get(id)?.principalId,
    });
  }
  expect((msiHalf(cluster).serviceManagedIdentity as Entry).clientId).toBe(sandbox.identities.get(cluster.serviceManagedIdentity)?.clientId);
  makeDue(cluster);
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error)) throw new Error("expected the pass to fail");
  return outcome;
}

describe("the data plane operators' half: only ARM's ResourceNotFound clears an identity", () => {
  it.each([
    [
      "a 404 SubscriptionNotFound",
      { kind: "status", statusCode: 404, errorCode: "SubscriptionNotFound", message: "The subscription 'x' could not be found." },
      /^SubscriptionNotFound \(HTTP 404\): The subscription 'x' could not be found\.$/,
    ],
    [
      "a 404 without an Azure error (an endpoint that does not route to ARM)",
      { kind: "bareStatus", statusCode: 404, body: "404 page not found" },
      /^HTTP404 \(HTTP 404\): /,
    ],
    [
      "a 404 ResourceGroupNotFound",
      { kind: "status", statusCode: 404, errorCode: "ResourceGroupNotFound", message: "Resource group 'x' could not be found." },
      /^ResourceGroupNotFound \(HTTP 404\): /,
    ],
    [
      "a 200 whose properties.clientId is a number",
      { kind: "malformedAnswer", answerEdits: [{ op: "set", pointer: "/properties/clientId", value: 12345 }] },
      /^MalformedAnswer \(HTTP 200\): properties\.clientId is a number, expected a string$/,
    ],
    [
      "a 200 whose properties.principalId is an object",
      { kind: "malformedAnswer", answerEdits: [{ op: "set", pointer: "/properties/principalId", value: { id: "x" } }] },
      /^MalformedAnswer \(HTTP 200\): properties\.principalId is an object, expected a string$/,
    ],
  ] as Array<[string, Omit<FaultRuleInput, "target" | "match">, RegExp]>)(
    "%s for one identity keeps its stored IDs beside the error, leaves the recheck open, and fails naming it",
    async (_title, fault, recorded) => {
      const cluster = clusters[0];
      await recordedAndDue(cluster);
      const [failing, healthy] = Object.values(cluster.dataPlaneOperators);
      const stored = dataPlaneHalf(cluster).identities?.[failing.toLowerCase()];
      const msiBefore = msiHalf(cluster);
      const rule = sandbox.faults.add({ target: "arm", match: { resourceId: failing }, count: 20, ...fault });
      const error = await failureOf(fixture.provider().create({ clusterResourceId: cluster.clusterResourceId }));
      expect(rule.triggered).toBeGreaterThan(0);
      expect(error.name).toBe("UserAssignedIdentityReadError");
      expect(error.message).toContain(`${failing}: `);
      expect(error.message).toContain("[stored IDs kept]");
      const half = dataPlaneHalf(cluster);
      expect(half.identities?.[failing.toLowerCase()]).toEqual({
        resourceID: failing,
        clientId: stored?.clientId,
        principalId: stored?.principalId,
        retrievalError: expect.stringMatching(recorded) as unknown,
      });
      expect(half.identities?.[healthy.toLowerCase()]).toMatchObject({ clientId: sandbox.identities.get(healthy)?.clientId });
      expect(half.earliestRecheckTime).toBeUndefined();
      // The MSI half (its own data plane answer) is written as usual.
      expect({ ...msiHalf(cluster), earliestRecheckTime: undefined }).toEqual({ ...msiBefore, earliestRecheckTime: undefined });
    },
  );

  it("a 404 without an Azure error on every lookup keeps every stored ID", async () => {
    const cluster = clusters[0];
    await recordedAndDue(cluster);
    const before = dataPlaneHalf(cluster);
    const rule = sandbox.faults.add({ target: "arm", kind: "bareStatus", statusCode: 404, match: { pathContains: "/providers/" }, count: 100 });
    const error = await failureOf(fixture.provider().create({ clusterResourceId: cluster.clusterResourceId }));
    expect(rule.triggered).toBe(Object.keys(cluster.dataPlaneOperators).length);
    expect(error.message).toMatch(/could not be read: HTTP404 \(HTTP 404\)/);
    const after = dataPlaneHalf(cluster);
    for (const [key, entry] of Object.entries(before.identities ?? {})) {
      expect(after.identities?.[key]).toEqual({ ...entry, retrievalError: expect.stringMatching(/^HTTP404 \(HTTP 404\): /) as unknown });
    }
    expect(after.earliestRecheckTime).toBeUndefined();
  });

  it("ARM's ResourceNotFound is definitive: the deleted identity's IDs are cleared and the recheck is set", async () => {
    const cluster = clusters[0];
    await recordedAndDue(cluster);
    const [deleted] = Object.values(cluster.dataPlaneOperators);
    const removed = sandbox.identities.get(deleted);
    sandbox.identities.delete(deleted);
    try {
      await fixture.provider().create({ clusterResourceId: cluster.clusterResourceId });
      const half = dataPlaneHalf(cluster);
      expect(half.identities?.[deleted.toLowerCase()]).toEqual({
        resourceID: deleted,
        retrievalError: expect.stringMatching(/^ResourceNotFound \(HTTP 404\): /) as unknown,
      });
      expect(typeof half.earliestRecheckTime).toBe("string");
    } finally {
      if (removed !== undefined) sandbox.identities.create(deleted, { tenantId: removed.tenantId });
    }
  });
});

describe("the MSI half: only the data plane's null clears an identity", () => {
  const operatorOf = (cluster: FleetClusterDescription): string => Object.values(cluster.controlPlaneOperators ?? {})[0] ?? "";
  const otherClusterIdentity = (): string => Object.values(clusters[0].controlPlaneOperators ?? {})[0] ?? "";

  it.each([
    [
      "client_id a number",
      (id: string): AnswerEdit[] => [{ op: "set", identityId: id, pointer: "/client_id", value: 12345 }],
      /client_id is a number, expected a string or null/,
    ],
    [
      "object_id a boolean",
      (id: string): AnswerEdit[] => [{ op: "set", identityId: id, pointer: "/object_id", value: true }],
      /object_id is a boolean, expected a string or null/,
    ],
    ["client_id missing", (id: string): AnswerEdit[] => [{ op: "remove", identityId: id, pointer: "/client_id" }], /has no client_id/],
    [
      "object_id null beside a client_id",
      (id: string): AnswerEdit[] => [{ op: "set", identityId: id, pointer: "/object_id", value: null }],
      /object_id for \S+ is null but its client_id is not/,
    ],
    [
      "not_after a number (Go's decoder refuses the whole answer)",
      (id: string): AnswerEdit[] => [{ op: "set", identityId: id, pointer: "/not_after", value: 1 }],
      /not_after is a number, expected a string or null/,
    ],
    [
      "custom_claims.xms_az_nwperimid a string",
      (id: string): AnswerEdit[] => [{ op: "set", identityId: id, pointer: "/custom_claims/xms_az_nwperimid", value: "x" }],
      /custom_claims\.xms_az_nwperimid is a string, expected an array or null/,
    ],
    ["an entry missing", (id: string): AnswerEdit[] => [{ op: "dropEntry", identityId: id }], /holds nothing for \S*control-plane/],
    [
      "an entry for an identity not asked for in its place",
      (id: string): AnswerEdit[] => [{ op: "set", identityId: id, pointer: "/resource_id", value: otherClusterIdentity() }],
      /names .*, which was not asked for/,
    ],
    [
      "an entry for an identity not asked for besides",
      (id: string): AnswerEdit[] => [{ op: "addEntry", identityId: id, resourceId: otherClusterIdentity() }],
      /names .*, which was not asked for/,
    ],
    [
      "explicit_identities an object",
      (): AnswerEdit[] => [{ op: "set", within: "answer", pointer: "/explicit_identities", value: {} }],
      /explicit_identities is an object, expected an array/,
    ],
  ])("an answer with %s writes nothing of that half and fails naming what is wrong", async (_title, edits, message) => {
    const cluster = clusters[1];
    await recordedAndDue(cluster);
    const operator = operatorOf(cluster);
    const msiBefore = msiHalf(cluster);
    // Only the MSI half's request names a control plane operator identity; the SMI's credential request is answered.
    const rule = sandbox.faults.add({
      target: "dataPlane",
      kind: "malformedAnswer",
      match: { clusterResourceId: cluster.clusterResourceId, requestedIdentityId: operator },
      answerEdits: edits(operator),
      count: 5,
    });
    const rotated = Object.values(cluster.dataPlaneOperators)[0];
    const identity = sandbox.identities.rotate(rotated);
    try {
      const error = await failureOf(fixture.provider().create({ clusterResourceId: cluster.clusterResourceId }));
      expect(rule.triggered).toBe(1);
      expect(error.name).toBe("MsiIdentitiesError");
      expect(error.message).toMatch(message);
      expect(error.message).toContain("nothing of status.msiManagedIdentities was written");
      expect(msiHalf(cluster), "the MSI half, its IDs and its recheck time").toEqual(msiBefore);
      // The other half is decided on its own: the rotated identity's new IDs are written.
      expect(dataPlaneHalf(cluster).identities?.[rotated.toLowerCase()]).toMatchObject({ clientId: identity?.clientId, principalId: identity?.principalId });
    } finally {
      sandbox.faults.clear();
    }
  });

  it("the data plane's null for an identity deleted since clears that identity's IDs", async () => {
    const cluster = clusters[1];
    await recordedAndDue(cluster);
    const operator = operatorOf(cluster);
    const removed = sandbox.identities.get(operator);
    sandbox.identities.delete(operator);
    try {
      await fixture.provider().create({ clusterResourceId: cluster.clusterResourceId });
      expect((msiHalf(cluster).controlPlaneOperatorsIdentities as Record<string, Entry>)[operator.toLowerCase()]).toEqual({ resourceId: operator });
    } finally {
      if (removed !== undefined) sandbox.identities.create(operator, { tenantId: removed.tenantId });
    }
  });
});
