/**
 * program/stackState.ts against the engine's monitor as the SDK connects to it (a @grpc/grpc-js
 * client): one `readStackResourceOutputs` request in the SDK's encoding, its answer read on the wire,
 * and the engine's errors worded as the SDK's invoke words them. The monitor here is a stand-in
 * that answers with bytes google-protobuf encodes; the real engine answers in
 * test/e2e/literalCli.test.ts (a refused update naming the clusters it would delete, aliases).
 */
import * as pulumi from "@pulumi/pulumi";
import { InvokeResponse } from "@pulumi/pulumi/proto/provider_pb";
import { ResourceInvokeRequest } from "@pulumi/pulumi/proto/resource_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { clustersInStack } from "../../program/stackState";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { setProgramMocks } from "../fixtures/programMocks";

const stackName = "monitor";
const urn = (name: string): string => `urn:pulumi:${stackName}::aro-hcp-identity-status::${resourceTypeToken}::${name}`;
const clusterId = (name: string): string => `/subscriptions/s/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;

type Callback = (error: { code: number; details: string; message: string } | null, answer?: Buffer) => void;

/** What the stand-in monitor received: the method and the request as the SDK's classes decode it. */
const requests: Array<{ method: string; token: string; args: unknown; acceptResources: boolean }> = [];

/** A monitor with the grpc-js client's `makeUnaryRequest`, answering with `answer`. */
function monitorAnswering(answer: (callback: Callback) => void): unknown {
  return {
    makeUnaryRequest(
      method: string,
      serialize: (request: Uint8Array) => Buffer,
      deserialize: (bytes: Buffer) => Buffer,
      request: Uint8Array,
      callback: Callback,
    ) {
      const decoded = ResourceInvokeRequest.deserializeBinary(serialize(request));
      requests.push({ method, token: decoded.getTok(), args: decoded.getArgs()?.toJavaScript(), acceptResources: decoded.getAcceptresources() });
      answer((error, bytes) => callback(error, bytes === undefined ? undefined : deserialize(bytes)));
    },
  };
}

function answerBytes(outputs: Record<string, unknown>): Buffer {
  const response = new InvokeResponse();
  response.setReturn(Struct.fromJavaScript({ name: `organization/aro-hcp-identity-status/${stackName}`, outputs }));
  return Buffer.from(response.serializeBinary());
}

const read = (): Promise<unknown> => clustersInStack("to check what this update would delete", "set allowClusterRemovals to go ahead without");

beforeAll(async () => {
  await setProgramMocks({ registered: [], stack: stackName });
});

afterEach(() => {
  vi.restoreAllMocks();
  requests.length = 0;
});

describe("the stack's state read through the engine's monitor", () => {
  it("sends one readStackResourceOutputs for the full stack name and reads the cluster resources, sorted by name", async () => {
    const answer = answerBytes({
      [urn("sub/rg/b-10")]: { type: resourceTypeToken, outputs: { clusterResourceId: clusterId("b-10"), status: "{}" } },
      [urn("sub/rg/b-9")]: { type: resourceTypeToken, outputs: { clusterResourceId: clusterId("b-9") } },
      [`urn:pulumi:${stackName}::aro-hcp-identity-status::pulumi:pulumi:Stack::x`]: { type: "pulumi:pulumi:Stack", outputs: {} },
      [urn("sub/rg/a")]: { type: resourceTypeToken, outputs: {} },
    });
    vi.spyOn(pulumi.runtime, "getMonitor").mockReturnValue(monitorAnswering((callback) => callback(null, answer)) as never);
    await expect(read()).resolves.toEqual([
      { name: "sub/rg/a", clusterResourceId: undefined },
      { name: "sub/rg/b-9", clusterResourceId: clusterId("b-9") },
      { name: "sub/rg/b-10", clusterResourceId: clusterId("b-10") },
    ]);
    expect(requests).toEqual([
      {
        method: "/pulumirpc.ResourceMonitor/Invoke",
        token: "pulumi:pulumi:readStackResourceOutputs",
        args: { stackName: `organization/aro-hcp-identity-status/${stackName}` },
        acceptResources: true,
      },
    ]);
  });

  it("fails with the engine's words, the stack, the purpose and the advice", async () => {
    vi.spyOn(pulumi.runtime, "getMonitor").mockReturnValue(
      monitorAnswering((callback) => callback({ code: 2, details: "failed to load checkpoint: blob not found", message: "2 UNKNOWN: failed" })) as never,
    );
    await expect(read()).rejects.toThrow(
      `could not read the state of stack organization/aro-hcp-identity-status/${stackName} to check what this update would delete: failed to load checkpoint: blob not found; set allowClusterRemovals to go ahead without`,
    );
  });

  it("ends the program's RPCs when the engine goes away, as the SDK's invoke does", async () => {
    const terminate = vi.spyOn(pulumi.runtime, "terminateRpcs").mockImplementation(() => undefined);
    vi.spyOn(pulumi.runtime, "getMonitor").mockReturnValue(
      monitorAnswering((callback) => callback({ code: 14, details: "Connection dropped", message: "14 UNAVAILABLE: Connection dropped" })) as never,
    );
    await expect(read()).rejects.toThrow(": Resource monitor is terminating; ");
    expect(terminate).toHaveBeenCalledTimes(1);
  });

  it("fails on an answer that is not a well-formed message, rather than reading part of it", async () => {
    const answer = answerBytes({ [urn("sub/rg/a")]: { type: resourceTypeToken, outputs: { clusterResourceId: clusterId("a") } } });
    vi.spyOn(pulumi.runtime, "getMonitor").mockReturnValue(monitorAnswering((callback) => callback(null, answer.subarray(0, answer.length - 20))) as never);
    await expect(read()).rejects.toThrow(/could not read the state of stack .*: .*; set allowClusterRemovals/);
  });
});
