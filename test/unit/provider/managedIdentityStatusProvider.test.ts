import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countsOf } from "../../fixtures/storedDocument";
import type * as pulumi from "@pulumi/pulumi";
import { standInMsiAnswers } from "../../../resources/azure/managedIdentitiesDataPlane";
import { msiStatusText } from "../../../resources/provider/providerOutputs";
import { standInIds } from "../../fakes/syncHarness";
import { describe, expect, it } from "vitest";
import { createConcurrencyLimiter } from "../../../resources/sync/concurrencyLimiter";
import { createManagedIdentityStatusProvider } from "../../../resources/provider/managedIdentityStatusProvider";
import type { ProviderInputs } from "../../../resources/provider/providerInputs";
import type { ProviderOutputs } from "../../../resources/provider/providerOutputs";
import { unknownValue } from "../../../resources/provider/providerInputs";
import type { OutputsStatus } from "../../../resources/core/outputsStatus";
import { decodeOutputsStatus, inputsDigest, keyHashOf } from "../../../resources/core/outputsStatus";
import { readOutputsStatusText } from "../../../resources/core/outputsStatus";
import type { JsonObject, JsonValue } from "../../../resources/core/json";
import { FakeClock } from "../../fakes/fakeClock";
import { InMemoryDocumentStore, cosmosError } from "../../fakes/inMemoryDocumentStore";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import { ScriptedUserAssignedIdentityReader, resourceNotFoundError, restError } from "../../fakes/scriptedUserAssignedIdentityReader";
import { declareInClusterDocument, defaultSyncOptions } from "../../fakes/syncHarness";
import {
  buildClusterDocument,
  buildServiceProviderClusterDocument,
  buildSubscriptionDocument,
  clusterResourceIdFor,
  fixedNow,
  identityResourceId,
  locationOf,
  storedEntry,
  storedStatus,
  subtreeOf,
} from "../../fixtures/documents";
import { msiHalf } from "../../../resources/core/msiManagedIdentities";

type Inputs = ProviderInputs & { readonly __provider?: string };
type Outputs = ProviderOutputs & { readonly __provider?: string };
type Provider = Required<pulumi.dynamic.ResourceProvider<Inputs, Outputs>>;

const location = locationOf();
const cluster = clusterResourceIdFor();
const otherCluster = clusterResourceIdFor({
  subscriptionId: "00000000-0000-0000-0000-000000000000",
  resourceGroupName: "test-rg",
  clusterName: "other-cluster",
});
const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();
const recheckAtRandomZero = "2026-08-15T00:00:00Z";
const fromClusterDocument = "fromClusterDocument" as const;
const serializedProvider = "exports.handler = function () { /* serialized provider text */ }";

interface Setup {
  readonly provider: Provider;
  readonly store: InMemoryDocumentStore;
  readonly reader: ScriptedUserAssignedIdentityReader;
  readonly clock: FakeClock;
}

function setup(options: { documents?: JsonObject[]; identities?: Record<string, IdentityScript> } = {}): Setup {
  const documents = options.documents ?? [buildServiceProviderClusterDocument()];
  // Every pass reads the cluster document: the fixture cluster's is there unless a test gives its own.
  const hasClusterDocument = documents.some((document) => document.resourceType === "Microsoft.RedHatOpenShift/hcpOpenShiftClusters");
  // The subscription's document too, as the resource provider keeps it beside the cluster's.
  // The fixture cluster's document names the default inputs' set (it is the authority on the set).
  const store = new InMemoryDocumentStore([
    ...(hasClusterDocument ? [] : [buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA } })]),
    ...documents,
    buildSubscriptionDocument(),
  ]);
  const reader = new ScriptedUserAssignedIdentityReader(options.identities ?? {});
  const clock = new FakeClock(fixedNow);
  const provider = createManagedIdentityStatusProvider({
    adapters: {
      documentStore: store,
      userAssignedIdentityReader: reader,
      limiter: createConcurrencyLimiter(4),
      msiAnswers: standInMsiAnswers({ ...standInIds, overwriteAllowed: true }),
    },
    now: clock.now,
    random: () => 0,
    sleep: clock.sleep,
    options: { ...defaultSyncOptions, documentWaitInMs: 0 },
  });
  for (const method of ["configure", "check", "diff", "create", "update", "read", "delete"] as const) {
    expect(typeof provider[method]).toBe("function");
  }
  return { provider: provider as Provider, store, reader, clock };
}

const resolved = (clientId: string, principalId: string): IdentityScript => ({ values: { clientId, principalId } });

/** Checked inputs; `fromClusterDocument` leaves dataPlaneOperators out, so the cluster document is read. */
function inputs(operators: Record<string, string> | typeof fromClusterDocument = { "operator-a": identityA }, extra: Partial<Inputs> = {}): Inputs {
  return {
    clusterResourceId: cluster,
    ...(operators === fromClusterDocument ? {} : { dataPlaneOperators: operators }),
    __provider: serializedProvider,
    ...extra,
  };
}

function persistedSubtree(store: InMemoryDocumentStore): JsonValue | undefined {
  return subtreeOf(store.get(location.partitionKey, location.documentId));
}

function findUndefined(value: unknown, path = "outs"): string[] {
  if (value === undefined) return [path];
  if (Array.isArray(value)) return value.flatMap((item, index) => findUndefined(item, `${path}[${index}]`));
  if (typeof value === "object" && value !== null) return Object.entries(value).flatMap(([key, item]) => findUndefined(item, `${path}.${key}`));
  return [];
}

/** The outputs of a create or update result, which the provider must always return. */
function outsOf(result: { outs?: Outputs }): Outputs {
  expect(result.outs).toBeDefined();
  return result.outs as Outputs;
}

/** The status the outputs record as JSON text, which must read back without problems. */
function statusOf(outs: Outputs | undefined): OutputsStatus {
  expect(typeof outs?.status).toBe("string");
  const read = readOutputsStatusText(outs?.status);
  expect(read.problems).toEqual([]);
  return read.status;
}

/** The outputs the engine stores after create: the provider host adds the inputs' `__provider`. */
async function createdOutputs(setupValue: Setup, news: Inputs = inputs()): Promise<Outputs> {
  return { ...outsOf(await setupValue.provider.create(news)), __provider: news.__provider };
}

describe("check", () => {
  it("returns normalised inputs", async () => {
    const { provider } = setup();
    const result = await provider.check({} as Inputs, {
      clusterResourceId: cluster.replace("/resourceGroups/", "/RESOURCEGROUPS/"),
      dataPlaneOperators: { b: identityB, a: identityA },
    });
    expect(result).toEqual({ inputs: { clusterResourceId: cluster, dataPlaneOperators: { a: identityA, b: identityB } }, failures: [] });
  });

  it("reports user errors as failures per property instead of throwing", async () => {
    const { provider } = setup();
    const result = await provider.check({} as Inputs, { clusterResourceId: "nope", dataPlaneOperators: { op: "bad" }, extra: 1 } as unknown as Inputs);
    expect(result.failures?.map((failure) => failure.property)).toEqual(["extra", "clusterResourceId", "dataPlaneOperators.op"]);
  });

  it("makes no I/O", async () => {
    const { provider, store, reader } = setup();
    await provider.check({} as Inputs, inputs());
    expect(store.calls).toEqual([]);
    expect(reader.calls).toEqual([]);
  });
});

describe("create", () => {
  it("returns the document id and plain-JSON outputs that echo the inputs", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("a-client", "a-principal") } });
    const result = await setupValue.provider.create(inputs());
    expect(result.id).toBe(location.documentId);
    expect(outsOf(result)).toEqual({
      schemaVersion: 1,
      clusterResourceId: cluster,
      inputsDigest: inputsDigest({ "operator-a": identityA }, null),
      // One string: the engine and the provider host copy and encode one value instead of a tree.
      status: JSON.stringify({
        earliestRecheckTime: recheckAtRandomZero,
        operators: { "operator-a": [keyHashOf(keyA), "a-client", "a-principal"] },
      }),
      // The MSI half was current in the document: recorded as stored.
      msiStatus: msiStatusText(msiHalf.read(setupValue.store.get(location.partitionKey, location.documentId) as JsonObject).status),
    });
    expect(findUndefined(result.outs)).toEqual([]);
    expect(JSON.parse(JSON.stringify(result.outs))).toEqual(result.outs);
    // The outputs name the entry by operator; decoded with the document's keys, they are the document's subtree.
    expect(decodeOutputsStatus(statusOf(outsOf(result)), [keyA])).toEqual({
      identities: { [keyA]: { resourceID: keyA, clientId: "a-client", principalId: "a-principal" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
    expect(persistedSubtree(setupValue.store)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "a-client", principalId: "a-principal" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("adopts a current status without writing (issue 44 item 2): nothing looked up, the document, its etag included, as it was", async () => {
    const current = storedStatus([storedEntry(identityA, { clientId: "c", principalId: "p" })], "2026-08-14T20:00:00Z");
    const setupValue = setup({ documents: [buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: current })] });
    const before = structuredClone(setupValue.store.get(location.partitionKey, location.documentId));
    const { outs } = await setupValue.provider.create(inputs());
    expect(setupValue.reader.calls).toHaveLength(0);
    expect(setupValue.store.patches()).toHaveLength(0);
    expect(setupValue.store.get(location.partitionKey, location.documentId)).toEqual(before);
    expect(countsOf(outs).resolvedCount).toBe(1);
  });

  it("records where the desired set came from and the cluster's service managed identity in cluster-document mode", async () => {
    const setupValue = setup({
      documents: [buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA } }), buildServiceProviderClusterDocument()],
      identities: { [identityA]: resolved("c", "p") },
    });
    const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
    expect(outs).toMatchObject({
      inputsDigest: inputsDigest(null, null),
      serviceManagedIdentity: identityResourceId("service-managed-identity"),
    });
    expect(countsOf(outs).identityCount).toBe(1);
    expect(findUndefined(outs)).toEqual([]);
  });

  it("fails, naming both sets, when the inputs name another set than the cluster document: nothing looked up or written, the failure in the outputs", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p"), [identityB]: resolved("c2", "p2") } });
    const error = await setupValue.provider.create(inputs({ a: identityA, b: identityB })).then(
      () => undefined,
      (thrown: unknown) => thrown as Error & { id?: string; properties?: Outputs; reasons?: string[] },
    );
    expect(error?.message).toContain(`The inputs name: ${identityA}, ${identityB}. The document names: ${identityA}`);
    // A partial failure: the resource is stored with no status and the failure, both halves named.
    expect(error?.id).toBe(location.documentId);
    expect(error?.reasons).toEqual([error?.message]);
    expect(statusOf(error?.properties)).toEqual({});
    expect(error?.properties?.failure?.cause).toContain("the dataPlaneOperators input names other identities");
    expect(error?.properties?.failure?.halves).toEqual(["dataPlaneOperators", "msiIdentities"]);
    expect(error?.properties?.__provider).toBe(serializedProvider);
    expect(setupValue.reader.calls).toHaveLength(0);
    expect(setupValue.store.patches()).toHaveLength(0);
  });

  it("fails naming the settings when nothing of the cluster's subscription is where they point (another container), writing nothing", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    for (const id of [location.documentId, location.clusterDocumentId, location.subscriptionDocumentId]) setupValue.store.remove(location.partitionKey, id);
    await expect(setupValue.provider.create(inputs())).rejects.toThrow(
      new RegExp(
        `^none of the documents of cluster ${location.clusterName} is in the container \\(NotFound, HTTP 404\\): neither .*the update wrote nothing.*'aro-hcp-identity-status:cosmosContainer'`,
      ),
    );
    // With the subscription's document there, the cluster document is only missing: the wait's own message.
    setupValue.store.put(buildSubscriptionDocument());
    await expect(setupValue.provider.create(inputs())).rejects.toThrow(
      new RegExp(`^the HCPOpenShiftCluster document of cluster ${location.clusterName} \\(${location.clusterDocumentId}\\) does not exist after`),
    );
    expect(setupValue.store.patches()).toHaveLength(0);
  });

  it("counts not-found identities without failing", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p"), [identityB]: { error: resourceNotFoundError(identityB) } } });
    declareInClusterDocument(setupValue, [identityA, identityB]);
    const outs = await createdOutputs(setupValue, inputs({ a: identityA, b: identityB }));
    expect(countsOf(outs)).toEqual({ identityCount: 2, resolvedCount: 1, notFoundCount: 1, failedCount: 0 });
  });

  it("persists the rest and throws an initialization error carrying id, properties with __provider, and reasons when a lookup fails", async () => {
    const setupValue = setup({
      identities: { [identityA]: resolved("c", "p"), [identityB]: { error: restError("AuthorizationFailed", 403, "The client does not have authorization.") } },
    });
    let thrown: (Error & { id?: string; properties?: Outputs; reasons?: string[] }) | undefined;
    declareInClusterDocument(setupValue, [identityA, identityB]);
    try {
      await setupValue.provider.create(inputs({ a: identityA, b: identityB }));
    } catch (error) {
      thrown = error as typeof thrown;
    }
    expect(thrown).toBeDefined();
    expect(thrown?.id).toBe(location.documentId);
    expect(thrown?.reasons).toEqual([thrown?.message]);
    expect(thrown?.message).toContain(`${identityB}: AuthorizationFailed (HTTP 403): The client does not have authorization.`);
    expect(thrown?.properties?.__provider).toBe(serializedProvider);
    expect(countsOf(thrown?.properties)).toMatchObject({ resolvedCount: 1, failedCount: 1 });
    // Null, not absent: the engine would give the program an absent output of a partial failure as unknown.
    expect(thrown?.properties?.drift).toBeNull();
    expect(statusOf(thrown?.properties).operators?.b).toEqual({
      keyHash: keyHashOf(keyB),
      retrievalError: "AuthorizationFailed (HTTP 403): The client does not have authorization.",
    });
    expect(JSON.parse(JSON.stringify(thrown?.properties))).toEqual(thrown?.properties);
    expect(Object.keys((persistedSubtree(setupValue.store) as { identities: JsonObject }).identities)).toEqual([keyA, keyB]);
  });

  it("fails with no status recorded, the failure beside it, when the ServiceProviderCluster document does not exist", async () => {
    const setupValue = setup({ documents: [] });
    const error = (await setupValue.provider.create(inputs()).catch((caught: unknown) => caught)) as Error & { id?: string; properties?: Outputs };
    expect(error.name).toBe("CosmosDocumentError");
    expect(error.id).toBe(location.documentId);
    expect(statusOf(error.properties)).toEqual({});
    expect(error.properties?.failure?.halves).toEqual(["dataPlaneOperators", "msiIdentities"]);
    expect(error.message).toMatch(
      new RegExp(`^the ServiceProviderCluster document of cluster ${location.clusterName} \\(${location.documentId}\\) does not exist`),
    );
    expect(setupValue.store.patches()).toEqual([]);
  });
});

describe("diff", () => {
  it("reports a change when the stored provider text is another one (another release's), reading nothing", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const callsBefore = setupValue.store.calls.length;
    expect(
      await setupValue.provider.diff(location.documentId, { ...outs, __provider: "exports.handler = () => null; // another release's text" }, inputs()),
    ).toEqual({
      changes: true,
    });
    expect(setupValue.store.calls.length).toBe(callsBefore);
  });

  it("reports no change inside the recheck window with the same inputs", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const callsBefore = setupValue.store.calls.length;
    expect(await setupValue.provider.diff(location.documentId, outs, inputs())).toEqual({ changes: false });
    expect(setupValue.store.calls.length).toBe(callsBefore);
    expect(setupValue.reader.calls).toHaveLength(1);
  });

  it.each([
    ["an identity is added", inputs({ "operator-a": identityA, "operator-b": identityB })],
    ["an operator is renamed", inputs({ "operator-renamed": identityA })],
    ["the operators are removed (desired set moves to the cluster document)", inputs(fromClusterDocument)],
    [
      "a service managed identity is given",
      inputs(fromClusterDocument, { dataPlaneOperators: { "operator-a": identityA }, serviceManagedIdentity: identityResourceId("smi") }),
    ],
    ["an operator's identity is unknown", inputs({ "operator-a": unknownValue })],
  ])("reports an update without replacement when %s", async (_title, news) => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    expect(await setupValue.provider.diff(location.documentId, outs, news)).toEqual({ changes: true });
  });

  it("reports a change once the recheck is due", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.clock.advance(12 * 60 * 60 * 1000);
    expect(await setupValue.provider.diff(location.documentId, outs, inputs())).toEqual({ changes: true });
    expect(setupValue.reader.calls).toHaveLength(1);
  });

  it("reports a change while an entry records a real failure, even inside the window", async () => {
    const setupValue = setup({ identities: { [identityA]: { error: restError("AuthorizationFailed", 403, "no access yet") } } });
    const outs = await createdOutputs(setupValue).catch((error: { properties?: Outputs }) => error.properties as Outputs);
    expect(countsOf(outs).failedCount).toBe(1);
    expect(await setupValue.provider.diff(location.documentId, outs, inputs())).toEqual({ changes: true });
  });

  it("reports no change inside the window for a NotFound entry: it is data, not a failure", async () => {
    const setupValue = setup({ identities: { [identityA]: { error: resourceNotFoundError(identityA) } } });
    const outs = await createdOutputs(setupValue);
    expect(countsOf(outs).notFoundCount).toBe(1);
    expect(await setupValue.provider.diff(location.documentId, outs, inputs())).toEqual({ changes: false });
    setupValue.clock.advance(12 * 60 * 60 * 1000);
    expect(await setupValue.provider.diff(location.documentId, outs, inputs())).toEqual({ changes: true });
  });

  it("reports a change when refresh recorded drift", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    expect(await setupValue.provider.diff(location.documentId, { ...outs, drift: ["identity x: clientId was changed in Cosmos"] }, inputs())).toEqual({
      changes: true,
    });
  });

  it("replaces when the cluster changes (the old resource's delete writes nothing, so the new one is created first)", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    expect(
      await setupValue.provider.diff(
        location.documentId,
        outs,
        inputs(fromClusterDocument, { clusterResourceId: otherCluster, dataPlaneOperators: { "operator-a": identityA } }),
      ),
    ).toEqual({
      changes: true,
      replaces: ["clusterResourceId"],
    });
  });

  it("does not replace when only the casing of the cluster ID changes", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const result = await setupValue.provider.diff(
      location.documentId,
      outs,
      inputs({ "operator-a": identityA }, { clusterResourceId: cluster.replace("test-cluster", "TEST-CLUSTER") }),
    );
    expect(result.replaces).toBeUndefined();
  });

  it("reports a change, without replacing, when the cluster is unknown during preview", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    expect(await setupValue.provider.diff(location.documentId, outs, inputs({ "operator-a": identityA }, { clusterResourceId: unknownValue }))).toEqual({
      changes: true,
    });
  });

  it.each([
    ["outputs without a schemaVersion", (outs: Outputs) => ({ ...outs, schemaVersion: undefined })],
    ["outputs of another schemaVersion (a later release's)", (outs: Outputs) => ({ ...outs, schemaVersion: 2 })],
    ["outputs without status", (outs: Outputs) => ({ clusterResourceId: outs.clusterResourceId, documentId: "a-document-id" })],
    [
      "outputs whose status names an operator without a key hash",
      (outs: Outputs) => ({ ...outs, status: JSON.stringify({ operators: { "operator-a": { clientId: "c" } } }) }),
    ],
    ["outputs whose status is not JSON text", (outs: Outputs) => ({ ...outs, status: "{not json" })],
    ["outputs whose status is an object", (outs: Outputs) => ({ ...outs, status: statusOf(outs) })],
    ["outputs with a malformed drift field", (outs: Outputs) => ({ ...outs, drift: "none" })],
  ])("reports a change for %s", async (_title, transform) => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    expect(await setupValue.provider.diff(location.documentId, transform(outs) as unknown as Outputs, inputs())).toEqual({ changes: true });
  });

  describe("in cluster-document mode", () => {
    function clusterModeSetup(operators: Record<string, string | null>): Setup {
      return setup({
        documents: [buildClusterDocument({ dataPlaneOperators: operators }), buildServiceProviderClusterDocument()],
        identities: { [identityA]: resolved("c", "p"), [identityB]: resolved("c2", "p2") },
      });
    }

    it("reads only the cluster document and calls no Azure API", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      const callsBefore = setupValue.store.calls.length;
      const readerCallsBefore = setupValue.reader.calls.length;
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: false });
      expect(setupValue.store.calls.slice(callsBefore)).toEqual([
        { kind: "read", partitionKey: location.partitionKey, id: location.clusterDocumentId, outcome: "found" },
      ]);
      expect(setupValue.reader.calls).toHaveLength(readerCallsBefore);
    });

    it("reports a change when the cluster document's operators change", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      setupValue.store.put(buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA, "operator-b": identityB } }));
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: true });
    });

    it("reports a change when the cluster document's service managed identity changes, and records the new one", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      const replacement = identityResourceId("replacement-service-managed-identity");
      setupValue.store.put(buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA }, serviceManagedIdentity: replacement }));
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: true });
      const updated = { ...outsOf(await setupValue.provider.update(location.documentId, outs, inputs(fromClusterDocument))), __provider: outs.__provider };
      expect(updated.serviceManagedIdentity).toBe(replacement);
      expect(await setupValue.provider.diff(location.documentId, updated, inputs(fromClusterDocument))).toEqual({ changes: false });
    });

    it("reports a change when the cluster starts deleting, and none once the skip is recorded", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      setupValue.store.put(buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA }, deletionTimestamp: "2026-08-14T12:00:00Z" }));
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: true });
      const skipped = { ...outsOf(await setupValue.provider.update(location.documentId, outs, inputs(fromClusterDocument))), __provider: outs.__provider };
      expect(skipped.skippedReason).toBe("clusterDeleting");
      expect(await setupValue.provider.diff(location.documentId, skipped, inputs(fromClusterDocument))).toEqual({ changes: false });
    });

    it("reports a change when a control plane operator joins the cluster document, and none once the update recorded it in the MSI half", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: false });
      const joined = buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA } });
      const operatorsPath = ["properties", "customerProperties", "platform", "operatorsAuthentication", "userAssignedIdentities", "controlPlaneOperators"];
      const controlPlaneOperators = operatorsPath.reduce((node, key) => node[key] as JsonObject, joined);
      controlPlaneOperators["cloud-controller-manager"] = identityB;
      setupValue.store.put(joined);
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: true });
      const updated = { ...outsOf(await setupValue.provider.update(location.documentId, outs, inputs(fromClusterDocument))), __provider: outs.__provider };
      const msi = msiHalf.read(setupValue.store.get(location.partitionKey, location.documentId) as JsonObject).status;
      expect(msi?.controlPlaneOperatorsIdentities?.[identityB.toLowerCase()]).toMatchObject({ resourceId: identityB, clientId: standInIds.clientId });
      expect(await setupValue.provider.diff(location.documentId, updated, inputs(fromClusterDocument))).toEqual({ changes: false });
    });

    it("reports a change when only the MSI half's recheck is due, with the operators declared (no document read)", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      // The document's MSI half is rechecked at 01:02:03 tomorrow; two hours from now the data plane operators half is
      // written again (another identity), to be rechecked at 02:00, after it.
      setupValue.clock.advance(2 * 60 * 60 * 1000);
      setupValue.store.put(buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA, "operator-b": identityB } }));
      const declared = inputs({ "operator-a": identityA, "operator-b": identityB });
      const updated = { ...outsOf(await setupValue.provider.update(location.documentId, outs, declared)), __provider: outs.__provider };
      setupValue.clock.advance(11.5 * 60 * 60 * 1000);
      const readsBefore = setupValue.store.calls.length;
      expect(await setupValue.provider.diff(location.documentId, updated, declared)).toEqual({ changes: true });
      expect(setupValue.store.calls.length, "documents read by diff").toBe(readsBefore);
    });

    it("reports a change when the cluster document is gone or unreadable", async () => {
      const setupValue = clusterModeSetup({ "operator-a": identityA });
      const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
      setupValue.store.remove(location.partitionKey, location.clusterDocumentId);
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: true });
      setupValue.store.put(buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA, "operator-b": null } }));
      expect(await setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).toEqual({ changes: true });
      // The update that follows names the problem and writes nothing: the diff did not hide it.
      const patchesBefore = setupValue.store.appliedPatches().length;
      await expect(setupValue.provider.update(location.documentId, outs, inputs(fromClusterDocument))).rejects.toThrow(
        "userAssignedIdentities.dataPlaneOperators.operator-b: identity resource ID is missing (null)",
      );
      expect(setupValue.store.appliedPatches()).toHaveLength(patchesBefore);
    });
  });
});

describe("update", () => {
  it("makes no Azure call and no write inside the window when there is no drift", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const result = await setupValue.provider.update(location.documentId, outs, inputs());
    expect({ ...result.outs, __provider: outs.__provider }).toEqual(outs);
    expect(setupValue.reader.calls).toHaveLength(1);
    expect(setupValue.store.appliedPatches()).toHaveLength(1);
  });

  it("keeps the stored outputs as they were, the failure beside them, when a pass fails with nothing written; the next update asks Azure and clears it", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const patches = setupValue.store.appliedPatches().length;
    // Inputs naming another set than the cluster document: the pass fails before Azure is asked.
    const error = (await setupValue.provider
      .update(location.documentId, outs, inputs({ a: identityA, b: identityB }))
      .catch((caught: unknown) => caught)) as Error & { id?: string; properties?: Outputs; reasons?: string[] };
    expect(error.name).toBe("DesiredSetDisagreementError");
    expect(error.id).toBe(location.documentId);
    const { failure, ...kept } = error.properties ?? ({} as Outputs);
    expect(kept).toEqual({ serviceManagedIdentity: null, skippedReason: null, msiSkippedReason: null, drift: null, ...outs });
    expect(failure?.cause).toContain("the dataPlaneOperators input names other identities");
    expect(failure?.halves).toEqual(["dataPlaneOperators", "msiIdentities"]);
    expect(setupValue.store.appliedPatches()).toHaveLength(patches);
    expect(setupValue.reader.calls).toHaveLength(1);
    // The engine stores those outputs: a failed last pass is a change even with the first inputs, inside the recheck window.
    const failed = error.properties as Outputs;
    expect(await setupValue.provider.diff(location.documentId, failed, inputs())).toEqual({ changes: true });
    const result = await setupValue.provider.update(location.documentId, failed, inputs());
    expect(setupValue.reader.calls).toHaveLength(2);
    expect(outsOf(result).failure).toBeUndefined();
    expect(await setupValue.provider.diff(location.documentId, { ...outsOf(result), __provider: outs.__provider }, inputs())).toEqual({ changes: false });
  });

  it("forces lookups when refresh recorded drift, repairs the document and clears the drift", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.store.mutate(location.partitionKey, location.documentId, (document) => {
      ((document.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities = storedStatus(
        [storedEntry(identityA, { clientId: "tampered", principalId: "p" })],
        recheckAtRandomZero,
      );
    });
    const result = await setupValue.provider.update(location.documentId, { ...outs, drift: [`identity ${keyA}: clientId was changed in Cosmos`] }, inputs());
    expect(setupValue.reader.calls).toHaveLength(2);
    expect(outsOf(result).drift).toBeUndefined();
    expect(persistedSubtree(setupValue.store)).toEqual({
      identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
      earliestRecheckTime: recheckAtRandomZero,
    });
  });

  it("forces lookups for outputs of another schema version (unknown state) and writes the current ones", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const result = await setupValue.provider.update(location.documentId, { ...outs, schemaVersion: 2 }, inputs());
    expect(setupValue.reader.calls).toHaveLength(2);
    // Both halves were forced: the MSI half now holds the stand-in's answer.
    const { __provider: _provider, msiStatus: _msi, ...expected } = outs;
    const { msiStatus, ...rest } = outsOf(result);
    expect(rest).toEqual(expected);
    // The outputs keep fingerprints of the MSI half's IDs: the stand-in's now, as Cosmos holds them.
    expect(msiStatus).toBe(msiStatusText(msiHalf.read(setupValue.store.get(location.partitionKey, location.documentId) as JsonObject).status));
    expect(msiStatus).not.toBe(outs.msiStatus);
  });

  it("records one entry for two operators naming one identity, under both names, and finds no change afterwards", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const shouting = identityA.replace("identity-a", "IDENTITY-A");
    const news = inputs({ "disk-csi-driver": identityA, "file-csi-driver": shouting });
    const outs = await createdOutputs(setupValue, news);
    const entry = { keyHash: keyHashOf(keyA), clientId: "c", principalId: "p" };
    expect(statusOf(outs).operators).toEqual({ "disk-csi-driver": entry, "file-csi-driver": entry });
    expect(countsOf(outs).identityCount).toBe(1);
    expect(Object.keys((persistedSubtree(setupValue.store) as { identities: JsonObject }).identities)).toEqual([keyA]);
    expect(await setupValue.provider.diff(location.documentId, outs, news)).toEqual({ changes: false });
  });

  it("looks up an added identity and prunes a removed one", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p"), [identityB]: resolved("c2", "p2") } });
    const outs = await createdOutputs(setupValue);
    // The cluster's set changes (the authority), and the inputs name the new one.
    declareInClusterDocument(setupValue, [identityB]);
    const result = await setupValue.provider.update(location.documentId, outs, inputs({ "operator-b": identityB }));
    expect(statusOf(outsOf(result)).operators).toEqual({ "operator-b": { keyHash: keyHashOf(keyB), clientId: "c2", principalId: "p2" } });
    expect((persistedSubtree(setupValue.store) as JsonObject).identities).toEqual({ [keyB]: { resourceID: identityB, clientId: "c2", principalId: "p2" } });
    expect(setupValue.reader.calledKeys).toEqual([keyA, keyB]);
  });

  it("throws an initialization error with __provider from the new inputs on partial failure", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p"), [identityB]: { error: restError("InternalServerError", 500, "boom") } } });
    const outs = await createdOutputs(setupValue);
    declareInClusterDocument(setupValue, [identityA, identityB]);
    const error = (await setupValue.provider
      .update(location.documentId, outs, inputs({ a: identityA, b: identityB }, { __provider: "new provider text" }))
      .catch((caught: unknown) => caught)) as Error & { id?: string; properties?: Outputs; reasons?: string[] };
    expect(error.id).toBe(location.documentId);
    expect(error.properties?.__provider).toBe("new provider text");
    expect(error.reasons?.[0]).toContain(`${identityB}: InternalServerError (HTTP 500): boom`);
  });
});

describe("read", () => {
  async function refreshed(setupValue: Setup, outs: Outputs): Promise<{ id: string; props?: Outputs }> {
    return setupValue.provider.read(location.documentId, outs) as Promise<{ id: string; props?: Outputs }>;
  }

  it("returns the same id and no drift when Cosmos matches the state, without calling Azure inside the window", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const result = await refreshed(setupValue, outs);
    expect(result.id).toBe(location.documentId);
    expect(result.props).toEqual(outs);
    expect(setupValue.reader.calls).toHaveLength(1);
    expect(setupValue.store.appliedPatches()).toHaveLength(1);
  });

  it("detects a clientId tampered with in Cosmos and reports what Cosmos holds", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.store.mutate(location.partitionKey, location.documentId, (document) => {
      const subtree = ((document.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities as JsonObject;
      ((subtree.identities as JsonObject)[keyA] as JsonObject).clientId = "tampered";
    });
    const result = await refreshed(setupValue, outs);
    expect(result.id).toBe(location.documentId);
    expect(result.props?.drift).toEqual([`identity ${keyA}: clientId was changed in Cosmos`]);
    expect(statusOf(result.props).operators?.["operator-a"]?.clientId).toBe("tampered");
    expect(setupValue.reader.calls).toHaveLength(1);
    expect(await setupValue.provider.diff(location.documentId, result.props as Outputs, inputs())).toEqual({ changes: true });
  });

  it.each([
    ["of another schema version", (outs: Outputs) => ({ ...outs, schemaVersion: 2 })],
    ["whose status is not JSON text (a hand edit)", (outs: Outputs) => ({ ...outs, status: "{not json" })],
  ])("returns outputs %s as they are, reading nothing", async (_title, transform) => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const unknown = transform(await createdOutputs(setupValue)) as unknown as Outputs;
    const callsBefore = setupValue.store.calls.length;
    expect(await refreshed(setupValue, unknown)).toEqual({ id: location.documentId, props: unknown });
    expect(setupValue.store.calls.length).toBe(callsBefore);
    expect(setupValue.reader.calls).toHaveLength(1);
  });

  it("detects a deleted subtree", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.store.mutate(location.partitionKey, location.documentId, (document) => {
      delete ((document.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities;
    });
    const result = await refreshed(setupValue, outs);
    expect(result.id).toBe(location.documentId);
    expect(result.props?.drift).toEqual(["the status subtree was deleted in Cosmos"]);
    expect(result.props?.status).toBe("{}");
    expect(countsOf(result.props).identityCount).toBe(0);
  });

  it("detects entries added and removed by someone else", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.store.mutate(location.partitionKey, location.documentId, (document) => {
      ((document.properties as JsonObject).status as JsonObject).dataPlaneOperatorsManagedIdentities = storedStatus(
        [storedEntry(identityB, { clientId: "x" })],
        recheckAtRandomZero,
      );
    });
    const result = await refreshed(setupValue, outs);
    // The state names operator-a's identity by a hash of its key, which the document no longer holds.
    expect(result.props?.drift).toEqual([
      `identity (operator operator-a) was removed from the status in Cosmos`,
      `identity ${keyB} was added to the status in Cosmos`,
    ]);
    // What Cosmos holds now: an entry no declared operator names stays keyed as in Cosmos.
    expect(statusOf(result.props).operators).toBeUndefined();
    expect(Object.keys(statusOf(result.props).identities ?? {})).toEqual([keyB]);
  });

  it("asks Azure once the recheck is due and reports an identity rotated there", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.reader.set(identityA, resolved("c-rotated", "p-rotated"));
    setupValue.clock.advance(12 * 60 * 60 * 1000);
    const result = await refreshed(setupValue, outs);
    expect(setupValue.reader.calls).toHaveLength(2);
    expect(result.props?.drift).toEqual([`identity ${keyA}: clientId and principalId changed in Azure`]);
    expect(setupValue.store.appliedPatches()).toHaveLength(1);
  });

  it("does not ask Azure while the recheck is not due, even if the identity rotated", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.reader.set(identityA, resolved("c-rotated", "p-rotated"));
    setupValue.clock.advance(11 * 60 * 60 * 1000);
    const result = await refreshed(setupValue, outs);
    expect(setupValue.reader.calls).toHaveLength(1);
    expect(result.props?.drift).toBeUndefined();
  });

  it("asks Azure about an entry recording a real failure and reports that it now resolves", async () => {
    const setupValue = setup({ identities: { [identityA]: { error: restError("AuthorizationFailed", 403, "no access yet") } } });
    const outs = await createdOutputs(setupValue).catch((error: { properties?: Outputs }) => error.properties as Outputs);
    setupValue.reader.set(identityA, resolved("c", "p"));
    const result = await refreshed(setupValue, outs);
    expect(result.props?.drift).toEqual([`identity ${keyA}: now resolves in Azure (was: AuthorizationFailed (HTTP 403))`]);
  });

  it("leaves a NotFound entry to the recheck gate: no Azure call, no drift, no change, no write", async () => {
    const setupValue = setup({ identities: { [identityA]: { error: resourceNotFoundError(identityA) } } });
    const outs = await createdOutputs(setupValue);
    expect(countsOf(outs).notFoundCount).toBe(1);
    setupValue.reader.set(identityA, resolved("c", "p"));
    setupValue.clock.advance(11 * 60 * 60 * 1000);
    const result = await refreshed(setupValue, outs);
    expect(result.props?.drift).toBeUndefined();
    expect(setupValue.reader.calls).toHaveLength(1);
    expect(await setupValue.provider.diff(location.documentId, result.props as Outputs, inputs())).toEqual({ changes: false });
    expect(setupValue.store.appliedPatches()).toHaveLength(1);
  });

  it("returns an empty id when the cluster's documents are gone and its subscription's document is there", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.store.remove(location.partitionKey, location.documentId);
    setupValue.store.remove(location.partitionKey, location.clusterDocumentId);
    const result = await refreshed(setupValue, outs);
    expect(result.id).toBe("");
    // Both proofs were read, together.
    expect(
      setupValue.store
        .reads()
        .slice(-2)
        .map((read) => read.id),
    ).toEqual([location.clusterDocumentId, location.subscriptionDocumentId]);
  });

  it("returns an empty id when both documents were soft-deleted", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    for (const id of [location.documentId, location.clusterDocumentId]) {
      setupValue.store.mutate(location.partitionKey, id, (document) => {
        document.deletionTimestamp = "2026-08-14T12:00:00Z";
      });
    }
    expect((await refreshed(setupValue, outs)).id).toBe("");
  });

  it("keeps a resource whose ServiceProviderCluster document is missing while the cluster document exists, with its status and a drift line", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    setupValue.store.remove(location.partitionKey, location.documentId);
    const result = await refreshed(setupValue, outs);
    expect(result.id).toBe(location.documentId);
    expect(result.props).toMatchObject({ status: outs.status });
    expect(result.props?.drift).toEqual([expect.stringMatching(new RegExp(`^ServiceProviderCluster document ${location.documentId} does not exist, but`))]);
    // The drift asks for an update, which waits for the document and fails naming it, writing nothing.
    expect(await setupValue.provider.diff(location.documentId, result.props as Outputs, inputs())).toEqual({ changes: true });
    await expect(setupValue.provider.update(location.documentId, result.props as Outputs, inputs())).rejects.toThrow(
      new RegExp(`ServiceProviderCluster document of cluster ${location.clusterName} \\(${location.documentId}\\) does not exist`),
    );
  });

  it("fails, keeping the resource, when nothing of the cluster's subscription is where the settings point (a wrong container)", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    for (const id of [location.documentId, location.clusterDocumentId, location.subscriptionDocumentId]) {
      setupValue.store.remove(location.partitionKey, id);
    }
    const error = await setupValue.provider.read(location.documentId, outs).then(
      () => undefined,
      (thrown: unknown) => thrown as Error & { configurationProblem?: string },
    );
    expect(error?.message).toMatch(
      new RegExp(
        `^none of the documents of cluster ${location.clusterName} is in the container \\(NotFound, HTTP 404\\): neither the ServiceProviderCluster document ` +
          `${location.documentId}, the HCPOpenShiftCluster document ${location.clusterDocumentId} nor the document of subscription /subscriptions/${location.partitionKey} ` +
          `\\(${location.subscriptionDocumentId}\\)\\. .*the refresh wrote nothing`,
      ),
    );
    for (const key of ["cosmosEndpoint", "cosmosDatabase", "cosmosContainer"]) expect(error?.message).toContain(`'aro-hcp-identity-status:${key}'`);
    expect(error?.configurationProblem).toBeDefined();
    expect(setupValue.store.patches()).toHaveLength(1);
  });

  it("echoes what it was given when there is no state to refresh (import or get)", async () => {
    const setupValue = setup();
    expect(await setupValue.provider.read("some-id", undefined)).toEqual({ id: "some-id", props: undefined });
    expect(setupValue.store.calls).toEqual([]);
  });
});

describe("delete (issue 44 item 1): relinquishes, writing and reading nothing", () => {
  /** Everything of the store after a delete: every document, etag and instanceVersion included. */
  const everything = (setupValue: Setup): unknown =>
    [location.documentId, location.clusterDocumentId].map((id) => setupValue.store.get(location.partitionKey, id));

  it("leaves the status as last written, the document's etag and instanceVersion included, and calls nothing", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const before = structuredClone(everything(setupValue));
    const calls = setupValue.store.calls.length;
    await setupValue.provider.delete(location.documentId, outs);
    expect(everything(setupValue)).toEqual(before);
    expect(subtreeOf(setupValue.store.get(location.partitionKey, location.documentId))).toMatchObject({
      identities: { [keyA]: { clientId: "c", principalId: "p" } },
    });
    expect(setupValue.store.calls).toHaveLength(calls);
    expect(setupValue.reader.calls).toHaveLength(1);
  });

  it("keeps the status a newer resource of the same cluster stands on (a rename, another stack or shard): the older one's delete writes nothing", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const older = await createdOutputs(setupValue);
    // Created while the older one still exists: the status is current, so nothing at all is written.
    const patches = setupValue.store.patches().length;
    const newer = await createdOutputs(setupValue);
    expect(setupValue.store.patches()).toHaveLength(patches);
    const before = structuredClone(everything(setupValue));
    await setupValue.provider.delete(location.documentId, older);
    expect(everything(setupValue)).toEqual(before);
    await setupValue.provider.delete(location.documentId, newer);
    expect(everything(setupValue)).toEqual(before);
  });

  it("writes nothing for outputs of any shape: another schema version, drift, no cluster, or a state written with claims", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const before = structuredClone(everything(setupValue));
    const calls = setupValue.store.calls.length;
    for (const props of [{ ...outs, schemaVersion: 2 }, { ...outs, drift: ["something changed"] }, { ...outs, claim: "0123456789abcdef" }, {} as Outputs]) {
      await expect(setupValue.provider.delete(location.documentId, props)).resolves.toBeUndefined();
    }
    expect(everything(setupValue)).toEqual(before);
    expect(setupValue.store.calls).toHaveLength(calls);
  });

  it("succeeds when the documents are gone or the settings point elsewhere: there is nothing it needs", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    for (const id of [location.documentId, location.clusterDocumentId, location.subscriptionDocumentId]) setupValue.store.remove(location.partitionKey, id);
    setupValue.store.failNext("read", Object.assign(new Error("Forbidden"), { code: 403 }));
    await expect(setupValue.provider.delete(location.documentId, outs)).resolves.toBeUndefined();
  });
});

describe("state written by a release that kept claims", () => {
  it("reads outputs holding a claim and drops the field at the next update, writing nothing to Cosmos", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("c", "p") } });
    const outs = await createdOutputs(setupValue);
    const patches = setupValue.store.patches().length;
    const updated = outsOf(await setupValue.provider.update(location.documentId, { ...outs, claim: "0123456789abcdef" } as Outputs, inputs()));
    expect(updated).not.toHaveProperty("claim");
    expect(setupValue.store.patches()).toHaveLength(patches);
  });
});

describe("configure", () => {
  it("feeds stack config into the settings used by later calls", async () => {
    // The subscription is known where the settings point: its cluster's document is only missing, and waited for.
    const store = new InMemoryDocumentStore([buildSubscriptionDocument()]);
    const clock = new FakeClock(fixedNow);
    const provider = createManagedIdentityStatusProvider({
      adapters: { documentStore: store, userAssignedIdentityReader: new ScriptedUserAssignedIdentityReader(), limiter: createConcurrencyLimiter(1) },
      now: clock.now,
      sleep: clock.sleep,
    }) as Provider;
    const config: Record<string, string> = { cosmosEndpoint: "https://aro-hcp.documents.azure.com", cosmosDatabase: "db", documentWaitSeconds: "2" };
    // Like the host's Config: full keys `<namespace>:<key>`; the provider reads its own namespace.
    const get = (key: string): string | undefined => config[key.replace(/^aro-hcp-identity-status:/, "")];
    await provider.configure({ config: { get, require: get } } as pulumi.dynamic.ConfigureRequest);
    const error = (await provider.create(inputs()).catch((caught: unknown) => caught)) as Error;
    expect(error.message).toContain("does not exist after 2 s");
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  it("reads the settings again after another configure or a change of a settings variable, and reports a bad one on every call", async () => {
    const variable = "ARO_HCP_DOCUMENT_WAIT_SECONDS";
    const before = process.env[variable];
    const clock = new FakeClock(fixedNow);
    const provider = createManagedIdentityStatusProvider({
      adapters: {
        documentStore: new InMemoryDocumentStore([buildSubscriptionDocument()]),
        userAssignedIdentityReader: new ScriptedUserAssignedIdentityReader(),
        limiter: createConcurrencyLimiter(1),
      },
      now: clock.now,
      sleep: clock.sleep,
    }) as Provider;
    const configure = async (config: Record<string, string>): Promise<void> => {
      const get = (key: string): string | undefined => config[key.replace(/^aro-hcp-identity-status:/, "")];
      await provider.configure({ config: { get, require: get } } as pulumi.dynamic.ConfigureRequest);
    };
    const failure = async (): Promise<string> => ((await provider.create(inputs()).catch((caught: unknown) => caught)) as Error).message;
    try {
      await configure({ cosmosEndpoint: "https://aro-hcp.documents.azure.com", cosmosDatabase: "db" });
      process.env[variable] = "3";
      expect(await failure()).toContain("does not exist after 3 s");
      process.env[variable] = "4";
      expect(await failure()).toContain("does not exist after 4 s");
      await configure({ cosmosEndpoint: "https://aro-hcp.documents.azure.com", cosmosDatabase: "db", documentWaitSeconds: "2" });
      expect(await failure()).toContain("does not exist after 2 s");
      await configure({ cosmosEndpoint: "https://aro-hcp.documents.azure.com", cosmosDatabase: "db" });
      process.env[variable] = "soon";
      for (let call = 0; call < 2; call += 1) {
        expect(await failure()).toMatch(/'aro-hcp-identity-status:documentWaitSeconds' \(or ARO_HCP_DOCUMENT_WAIT_SECONDS\)/);
      }
      process.env[variable] = "1";
      expect(await failure()).toContain("does not exist after 1 s");
    } finally {
      if (before === undefined) delete process.env[variable];
      else process.env[variable] = before;
    }
  });
});

describe("recheck now and the run's records (ARO_HCP_RECHECK, ARO_HCP_RUN_RECORDS)", () => {
  /** Runs `body` with the variables set, then puts them back. */
  async function withVariables(values: Record<string, string>, body: () => Promise<void>): Promise<void> {
    const before = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
    Object.assign(process.env, values);
    try {
      await body();
    } finally {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }

  it("asks Azure at once for a cluster the variable names, though no recheck is due, and records each operation", async () => {
    const setupValue = setup({ identities: { [identityA]: resolved("client-a", "principal-a") } });
    const { provider, reader } = setupValue;
    const outs = await createdOutputs(setupValue);
    const asked = reader.calls.length;
    expect(asked).toBe(1);
    expect((await provider.diff("id", outs, inputs())).changes).toBe(false);
    const records = join(mkdtempSync(join(tmpdir(), "run-records-")), "run.jsonl");
    await withVariables({ ARO_HCP_RECHECK: cluster.toUpperCase(), ARO_HCP_RUN_RECORDS: records }, async () => {
      expect((await provider.diff("id", outs, inputs())).changes).toBe(true);
      await provider.update("id", outs, inputs());
    });
    expect(reader.calls.length, "identity lookups").toBe(asked + 1);
    const written = readFileSync(records, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { operation: string; dataPlane: string; msi: string });
    expect(written.map(({ operation, dataPlane }) => [operation, dataPlane])).toEqual([
      ["diff", "wouldAsk"],
      // Asked, and the same answer at the same time: nothing to write.
      ["update", "current"],
    ]);
  });

  it("marks a diff of a cluster this provider read as the refresh's, and the update's diff, in a process that read nothing, not", async () => {
    const records = join(mkdtempSync(join(tmpdir(), "run-records-")), "run.jsonl");
    const setupValue = setup({ identities: { [identityA]: resolved("client-a", "principal-a") } });
    const outs = await createdOutputs(setupValue);
    // The update's process: a diff that follows no read.
    const update = setup({ identities: { [identityA]: resolved("client-a", "principal-a") } });
    await withVariables({ ARO_HCP_RUN_RECORDS: records }, async () => {
      // The refresh's process: the engine reads the cluster, then diffs what it read.
      const refreshed = (await setupValue.provider.read(location.documentId, outs)) as { props: Outputs };
      expect((await setupValue.provider.diff(location.documentId, refreshed.props, inputs())).changes).toBe(false);
      expect((await update.provider.diff(location.documentId, outs, inputs())).changes).toBe(false);
    });
    const written = readFileSync(records, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { operation: string; duringRefresh?: boolean });
    expect(written.map(({ operation, duringRefresh }) => [operation, duringRefresh])).toEqual([
      ["read", undefined],
      ["diff", true],
      ["diff", undefined],
    ]);
  });

  it("records a diff that fails (the cluster document unreadable) as failed in both halves, with its message, and throws it", async () => {
    const records = join(mkdtempSync(join(tmpdir(), "run-records-")), "run.jsonl");
    const setupValue = setup({
      documents: [buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA } }), buildServiceProviderClusterDocument()],
      identities: { [identityA]: resolved("client-a", "principal-a") },
    });
    const outs = await createdOutputs(setupValue, inputs(fromClusterDocument));
    const written = (): Array<{ operation: string; dataPlane: string; msi: string; message?: string; duringRefresh?: boolean }> =>
      readFileSync(records, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { operation: string; dataPlane: string; msi: string; message?: string; duringRefresh?: boolean });
    await withVariables({ ARO_HCP_RUN_RECORDS: records }, async () => {
      setupValue.store.failNext("read", cosmosError(503));
      await expect(setupValue.provider.diff(location.documentId, outs, inputs(fromClusterDocument))).rejects.toThrow("ServiceUnavailable (HTTP 503)");
    });
    expect(written()).toEqual([
      expect.objectContaining({
        operation: "diff",
        dataPlane: "failed",
        msi: "failed",
        message: expect.stringContaining("ServiceUnavailable (HTTP 503)") as string,
      }),
    ]);
    expect(written()[0]?.duringRefresh).toBeUndefined();
    // In a refresh's process (the cluster was read here), the failed diff is the refresh's.
    await withVariables({ ARO_HCP_RUN_RECORDS: records }, async () => {
      const refreshed = (await setupValue.provider.read(location.documentId, outs)) as { props: Outputs };
      setupValue.store.failNext("read", cosmosError(503));
      await expect(setupValue.provider.diff(location.documentId, refreshed.props, inputs(fromClusterDocument))).rejects.toThrow(
        "ServiceUnavailable (HTTP 503)",
      );
    });
    expect(written().map(({ operation, dataPlane, duringRefresh }) => [operation, dataPlane, duringRefresh])).toEqual([
      ["diff", "failed", undefined],
      ["read", "current", undefined],
      ["diff", "failed", true],
    ]);
  });

  it("refuses, in the first check, a value that names no cluster, recording the cluster as failed", async () => {
    const { provider } = setup();
    const records = join(mkdtempSync(join(tmpdir(), "run-records-")), "run.jsonl");
    await withVariables({ ARO_HCP_RECHECK: "not-a-cluster", ARO_HCP_RUN_RECORDS: records }, async () => {
      const checked = await provider.check({} as Inputs, inputs());
      expect(checked.failures?.[0]?.reason).toContain("ARO_HCP_RECHECK names 'not-a-cluster', which is not a cluster resource ID");
    });
    expect(JSON.parse(readFileSync(records, "utf8"))).toMatchObject({ operation: "check", dataPlane: "failed", msi: "failed" });
  });
});
