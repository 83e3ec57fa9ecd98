/**
 * The mock state a user's `pulumi.runtime.setMocks` test returns for the resource
 * (`identityStatusMockState`, exported from the package's `.` entry): the resource's outputs under
 * the SDK's real mock monitor are the given status and the counts that follow from it; a mock given
 * no status yields `{}`, never `undefined`; the state is what the provider's own reader of stored
 * outputs accepts; and a status that could not come from the inputs is refused naming the field.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { ServiceProviderClusterIdentityStatus, identityStatusMockState, resourceTypeToken } from "../../../resources";
import type { IdentityStatusMock, OutputsStatus } from "../../../resources";
import { parseStoredOutputs } from "../../../resources/provider/providerOutputs";
import { keyHashOf } from "../../../resources/core/outputsStatus";
import { statusCounts, statusFromOutputs } from "../../../resources/core/outputsStatus";
import { clusterResourceIdFor, identityKey, identityResourceId } from "../../fixtures/documents";

const clusterResourceId = clusterResourceIdFor();
const disk = identityResourceId("disk-csi-driver");
const file = identityResourceId("file-csi-driver");
const cloud = identityResourceId("cloud-controller-manager");
const notFound = "ResourceNotFound (HTTP 404): The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/file-csi-driver' was not found.";
const throttled = "TooManyRequests (HTTP 429): too many requests";

/** The status each resource's mock records, by resource name; a name absent here gets no status. */
const mockedStatus = new Map<string, IdentityStatusMock>();
/** Resources whose mock echoes the inputs, as a hand-written mock does: no `status` in the state. */
const echoInputs = new Set<string>(["echo-inputs", "echo-inputs-msi"]);

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({
        id: `${args.name}-document-id`,
        state:
          args.type === resourceTypeToken && !echoInputs.has(args.name)
            ? identityStatusMockState(args.inputs, mockedStatus.get(args.name))
            : (args.inputs as Record<string, unknown>),
      }),
      call: (args) => args.inputs as Record<string, unknown>,
    },
    "consumer",
    "unit",
  );
});

function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply(resolve));
}

async function outputsOf(resource: ServiceProviderClusterIdentityStatus): Promise<Record<string, unknown>> {
  const [status, identityCount, resolvedCount, notFoundCount, failedCount, desiredSource, skippedReason, drift] = await Promise.all([
    valueOf(resource.status),
    valueOf(resource.identityCount),
    valueOf(resource.resolvedCount),
    valueOf(resource.notFoundCount),
    valueOf(resource.failedCount),
    valueOf(resource.desiredSource),
    valueOf(resource.skippedReason),
    valueOf(resource.drift),
  ]);
  return { status, identityCount, resolvedCount, notFoundCount, failedCount, desiredSource, skippedReason, drift };
}

describe("identityStatusMockState under pulumi.runtime.setMocks", () => {
  it("gives the resource the mocked status by operator name, and the counts that follow from it", async () => {
    mockedStatus.set("three-operators", {
      operators: {
        "disk-csi-driver": { clientId: "client-disk", principalId: "principal-disk" },
        "file-csi-driver": { retrievalError: notFound },
        "cloud-controller-manager": { clientId: "client-cloud", principalId: "principal-cloud", retrievalError: throttled },
      },
      earliestRecheckTime: "2026-08-15T00:00:00Z",
    });
    const resource = new ServiceProviderClusterIdentityStatus("three-operators", {
      clusterResourceId,
      dataPlaneOperators: { "disk-csi-driver": disk, "file-csi-driver": file, "cloud-controller-manager": cloud },
    });
    const outputs = await outputsOf(resource);
    const status = outputs.status as OutputsStatus;
    expect(status.operators?.["disk-csi-driver"]).toMatchObject({ clientId: "client-disk", principalId: "principal-disk" });
    expect(status.operators?.["file-csi-driver"]).toMatchObject({ retrievalError: notFound });
    expect(status.operators?.["file-csi-driver"]?.clientId).toBeUndefined();
    expect(status.operators?.["cloud-controller-manager"]).toMatchObject({ clientId: "client-cloud", retrievalError: throttled });
    // The hash the provider records for the declared identity, which the test never had to name.
    expect(status.operators?.["disk-csi-driver"]?.keyHash).toBe(keyHashOf(identityKey(disk)));
    expect(status.earliestRecheckTime).toBe("2026-08-15T00:00:00Z");
    expect(status.identities).toBeUndefined();
    expect(outputs).toMatchObject({ identityCount: 3, resolvedCount: 1, notFoundCount: 1, failedCount: 1, desiredSource: "inputs" });
    expect(outputs.skippedReason).toBeUndefined();
    expect(outputs.drift).toBeUndefined();
    expect(await valueOf(resource.clusterResourceId)).toBe(clusterResourceId);
  });

  it("gives the resource the mocked MSI half's recheck time and identity count as its msiStatus output, and a count of 0 when the mock names none", async () => {
    const smi = identityResourceId("service-managed-identity");
    const controlPlane = identityResourceId("control-plane");
    mockedStatus.set("with-msi", {
      msi: {
        controlPlaneOperators: { [controlPlane]: { clientId: "client-cp", principalId: "principal-cp" } },
        serviceManagedIdentity: { resourceId: smi, clientId: "client-smi", principalId: "principal-smi" },
        earliestRecheckTime: "2026-08-15T00:00:00Z",
      },
    });
    const resource = new ServiceProviderClusterIdentityStatus("with-msi", { clusterResourceId });
    expect(await valueOf(resource.msiStatus)).toEqual({ earliestRecheckTime: "2026-08-15T00:00:00Z", identityCount: 2 });
    const plain = new ServiceProviderClusterIdentityStatus("echo-inputs-msi", { clusterResourceId });
    expect(await valueOf(plain.msiStatus)).toEqual({ identityCount: 0 });
  });

  it("gives the resource a mocked failure as its failure output, both halves unless it names them, and refuses a malformed one", async () => {
    mockedStatus.set("failed", { failure: { cause: "invalid_client: revoked (tenant T)" } });
    const resource = new ServiceProviderClusterIdentityStatus("failed", { clusterResourceId });
    expect(await valueOf(resource.failure)).toEqual({ cause: "invalid_client: revoked (tenant T)", halves: ["dataPlaneOperators", "msiIdentities"] });
    const state = identityStatusMockState({ clusterResourceId }, { failure: { cause: "x", halves: ["msiIdentities"] } });
    expect(state.failure).toEqual({ cause: "x", halves: ["msiIdentities"] });
    // What the provider's reader of stored outputs accepts, as after a failed pass.
    expect(parseStoredOutputs(state)).toMatchObject({ ok: true, value: { failure: { cause: "x", halves: ["msiIdentities"] } } });
    expect(() => identityStatusMockState({ clusterResourceId }, { failure: { cause: "" } })).toThrow("status.failure must be { cause: a non-empty string");
    expect(() => identityStatusMockState({ clusterResourceId }, { failure: { cause: "x", halves: ["both" as never] } })).toThrow(
      "status.failure.halves names 'both'; expected dataPlaneOperators, msiIdentities",
    );
    const plain = new ServiceProviderClusterIdentityStatus("echo-inputs", { clusterResourceId });
    expect(await valueOf(plain.failure)).toBeUndefined();
  });

  it("gives a resource mocked without a status `{}` and zero counts, never undefined", async () => {
    const resource = new ServiceProviderClusterIdentityStatus("no-status", { clusterResourceId, dataPlaneOperators: { "disk-csi-driver": disk } });
    expect(await outputsOf(resource)).toMatchObject({ status: {}, identityCount: 0, resolvedCount: 0, notFoundCount: 0, failedCount: 0 });
  });

  it("gives a resource whose mock returns no status at all `{}`", async () => {
    const resource = new ServiceProviderClusterIdentityStatus("echo-inputs", { clusterResourceId });
    expect(await valueOf(resource.status)).toEqual({});
  });

  it("records identities no declared operator names under `identities`, keyed as in Cosmos", async () => {
    mockedStatus.set("from-document", { identities: { [disk]: { clientId: "client-disk", principalId: "principal-disk" } } });
    const resource = new ServiceProviderClusterIdentityStatus("from-document", { clusterResourceId });
    const outputs = await outputsOf(resource);
    expect((outputs.status as OutputsStatus).identities).toEqual({
      [identityKey(disk)]: { resourceID: disk, clientId: "client-disk", principalId: "principal-disk" },
    });
    expect(outputs).toMatchObject({ identityCount: 1, resolvedCount: 1, desiredSource: "clusterDocument" });
  });
});

describe("identityStatusMockState's state", () => {
  it("is what the provider's reader of stored outputs accepts, with the status given", () => {
    const state = identityStatusMockState(
      { clusterResourceId, dataPlaneOperators: { "disk-csi-driver": disk } },
      { operators: { "disk-csi-driver": { clientId: "c", principalId: "p" } } },
    );
    const parsed = parseStoredOutputs(state);
    expect(parsed.ok).toBe(true);
    expect(parsed.ok && parsed.value.status).toEqual({
      operators: { "disk-csi-driver": { keyHash: keyHashOf(identityKey(disk)), clientId: "c", principalId: "p" } },
    });
  });

  it("records nothing for no status, null included", () => {
    for (const status of [undefined, null]) {
      const state = identityStatusMockState({ clusterResourceId }, status);
      expect(JSON.parse(state.status as string)).toEqual({});
      expect(statusCounts(statusFromOutputs(state.status) ?? {}).identityCount).toBe(0);
    }
  });

  it("accepts a status as the resource outputs it (keyHash included) and gives it back", () => {
    const status: OutputsStatus = {
      operators: { "disk-csi-driver": { keyHash: keyHashOf(identityKey(disk)), clientId: "c", principalId: "p" } },
      earliestRecheckTime: "2026-08-15T00:00:00Z",
    };
    const state = identityStatusMockState({ clusterResourceId, dataPlaneOperators: { "disk-csi-driver": disk } }, status);
    expect(statusFromOutputs(state.status)).toEqual(status);
  });

  it.each([
    [
      "an operator the inputs do not declare",
      { operators: { "file-csi-driver": { clientId: "c" } } },
      "status.operators['file-csi-driver']: the inputs' dataPlaneOperators declare 'disk-csi-driver', not 'file-csi-driver'",
    ],
    ["a misspelt field", { operators: { "disk-csi-driver": { clientID: "c" } } }, "status.operators['disk-csi-driver'].clientID is not a field of an entry"],
    ["a field that is not a string", { operators: { "disk-csi-driver": { clientId: 7 } } }, "status.operators['disk-csi-driver'].clientId is not a string"],
    ["a keyHash of another identity", { operators: { "disk-csi-driver": { keyHash: "000000000000" } } }, "keyHash is not the hash of the declared identity"],
    ["an identity keyed by something else than an ARM ID", { identities: { "disk-csi-driver": {} } }, "status.identities['disk-csi-driver']: the key"],
    ["a declared operator's identity under identities", { identities: { [disk]: {} } }, "put its entry under status.operators['disk-csi-driver']"],
    ["a recheck time that is not a time", { earliestRecheckTime: "tomorrow" }, "status.earliestRecheckTime is not an RFC 3339 timestamp"],
  ])("refuses %s, naming the field", (_case, status, message) => {
    expect(() => identityStatusMockState({ clusterResourceId, dataPlaneOperators: { "disk-csi-driver": disk } }, status as IdentityStatusMock)).toThrow(
      message,
    );
  });

  it("refuses inputs the provider's check refuses, naming the input", () => {
    expect(() => identityStatusMockState({ clusterResourceId: "cluster-one" })).toThrow(/^identityStatusMockState: inputs\.clusterResourceId /);
    expect(() => identityStatusMockState({ clusterResourceId, dataPlaneOperators: { disk: "disk" } })).toThrow(
      "inputs.dataPlaneOperators.disk identity resource ID",
    );
  });
});
