/**
 * program/stackStateWire.ts against the SDK's own encoding and decoding: the request must be the
 * bytes the SDK's `invoke` sends, and the walk of an answer must find what the SDK's decoding
 * (google-protobuf, then `deserializeProperties`) finds, for answers google-protobuf encodes.
 */
import { InvokeResponse, CheckFailure } from "@pulumi/pulumi/proto/provider_pb";
import { ResourceInvokeRequest } from "@pulumi/pulumi/proto/resource_pb";
import { deserializeProperties, unwrapRpcSecret } from "@pulumi/pulumi/runtime/rpc";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { describe, expect, it } from "vitest";
import { resourcesOfStackAnswer, stackOutputsRequest } from "../../../program/stackStateWire";
import { resourceTypeToken } from "../../../resources/serviceProviderClusterIdentityStatus";

const token = "pulumi:pulumi:readStackResourceOutputs";
const stackUrn = "urn:pulumi:dev::aro-hcp-identity-status::pulumi:pulumi:Stack::aro-hcp-identity-status-dev";
const clusterUrn = (name: string): string => `urn:pulumi:dev::aro-hcp-identity-status::${resourceTypeToken}::${name}`;
const clusterId = (name: string): string =>
  `/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;
/** The Pulumi secret signature (sdk/go/common/resource/sig). */
const secret = (value: unknown): Record<string, unknown> => ({ "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value });

/** An answer as the engine shapes it, encoded by google-protobuf. */
function answerBytes(outputs: Record<string, unknown>, failures: Array<[string, string]> = []): Uint8Array {
  const response = new InvokeResponse();
  response.setReturn(Struct.fromJavaScript({ name: "organization/aro-hcp-identity-status/dev", outputs }));
  response.setFailuresList(
    failures.map(([property, reason]) => {
      const failure = new CheckFailure();
      failure.setProperty(property);
      failure.setReason(reason);
      return failure;
    }),
  );
  return response.serializeBinary();
}

const byUrn = (left: { urn: string }, right: { urn: string }): number => left.urn.localeCompare(right.urn);

/**
 * What the SDK's invoke gives for the same bytes (its decoding, then each top-level value's secret
 * unwrapped), reduced as program/stackState.ts reduces it, by URN.
 */
function throughTheSdk(bytes: Uint8Array): Array<{ urn: string; clusterResourceId: string | undefined }> {
  const properties = deserializeProperties(InvokeResponse.deserializeBinary(bytes).getReturn()!) as Record<string, unknown>;
  const decoded = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, unwrapRpcSecret(value)])) as {
    outputs?: Record<string, { type?: unknown; outputs?: { clusterResourceId?: unknown } }>;
  };
  return Object.entries(decoded.outputs ?? {})
    .filter(([, resource]) => resource.type === resourceTypeToken)
    .map(([urn, resource]) => ({
      urn,
      clusterResourceId: typeof resource.outputs?.clusterResourceId === "string" ? resource.outputs.clusterResourceId : undefined,
    }))
    .sort(byUrn);
}

const status = JSON.stringify({ earliestRecheckTime: "2026-12-08T13:36:42Z", identities: { a: { resourceID: "a", clientId: "c", principalId: "p" } } });

describe("the readStackResourceOutputs request", () => {
  it("is byte for byte what the SDK's invoke builds for { stackName } with no provider", () => {
    const sdk = new ResourceInvokeRequest();
    sdk.setTok(token);
    sdk.setArgs(Struct.fromJavaScript({ stackName: "organization/aro-hcp-identity-status/dev" }));
    sdk.setProvider("");
    sdk.setVersion("");
    sdk.setAcceptresources(true);
    sdk.setPlugindownloadurl("");
    sdk.setPackageref("");
    const ours = stackOutputsRequest(token, "organization/aro-hcp-identity-status/dev");
    expect(Buffer.from(ours).toString("hex")).toBe(Buffer.from(sdk.serializeBinary()).toString("hex"));
    expect(ResourceInvokeRequest.deserializeBinary(ours).getArgs()!.toJavaScript()).toEqual({ stackName: "organization/aro-hcp-identity-status/dev" });
  });
});

describe("the walk of a readStackResourceOutputs answer", () => {
  it("finds what the SDK's decoding finds: cluster resources only, each ID when it is a plain string (order aside: the program sorts)", () => {
    const outputs = {
      [stackUrn]: { type: "pulumi:pulumi:Stack", outputs: { clusters: [{ clusterResourceId: clusterId("not-a-resource") }] } },
      "urn:pulumi:dev::aro-hcp-identity-status::pulumi:providers:pulumi-nodejs::default": { type: "pulumi:providers:pulumi-nodejs", outputs: {} },
      [clusterUrn("sub/rg/one")]: {
        id: "one",
        type: resourceTypeToken,
        outputs: { __provider: "exports.handler=()=>{}", clusterResourceId: clusterId("one"), status, schemaVersion: 1, drift: ["a", null, 2], failure: null },
      },
      [clusterUrn("sub/rg/two")]: { type: resourceTypeToken, outputs: { status, clusterResourceId: clusterId("two") } },
      [clusterUrn("secret")]: { type: resourceTypeToken, outputs: { clusterResourceId: secret(clusterId("secret")) } },
      [clusterUrn("number")]: { type: resourceTypeToken, outputs: { clusterResourceId: 7 } },
      [clusterUrn("no-outputs")]: { type: resourceTypeToken },
      [clusterUrn("other::name::with::colons")]: { type: resourceTypeToken, outputs: { clusterResourceId: clusterId("colons") } },
    };
    const bytes = answerBytes(outputs);
    const walked = resourcesOfStackAnswer(bytes, token, resourceTypeToken).sort(byUrn);
    expect(walked).toEqual(throughTheSdk(bytes));
    // What the SDK's decoding agrees on, spelled out, so that the comparison cannot pass on two empty lists.
    expect(walked).toEqual(
      [
        { urn: clusterUrn("sub/rg/one"), clusterResourceId: clusterId("one") },
        { urn: clusterUrn("sub/rg/two"), clusterResourceId: clusterId("two") },
        { urn: clusterUrn("secret"), clusterResourceId: clusterId("secret") },
        { urn: clusterUrn("number"), clusterResourceId: undefined },
        { urn: clusterUrn("no-outputs"), clusterResourceId: undefined },
        { urn: clusterUrn("other::name::with::colons"), clusterResourceId: clusterId("colons") },
      ].sort(byUrn),
    );
  });

  it("reads a stack with no resources, and an answer with no return, as none", () => {
    expect(resourcesOfStackAnswer(answerBytes({}), token, resourceTypeToken)).toEqual([]);
    expect(resourcesOfStackAnswer(new InvokeResponse().serializeBinary(), token, resourceTypeToken)).toEqual([]);
  });

  it("reads 2,000 clusters", () => {
    const outputs = Object.fromEntries(
      Array.from({ length: 2000 }, (_, index) => [
        clusterUrn(`c${index}`),
        { type: resourceTypeToken, outputs: { clusterResourceId: clusterId(`c${index}`), status } },
      ]),
    );
    const bytes = answerBytes(outputs);
    const walked = resourcesOfStackAnswer(bytes, token, resourceTypeToken).sort(byUrn);
    expect(walked).toHaveLength(2000);
    expect(walked).toEqual(throughTheSdk(bytes));
  });

  it("fails with the engine's reasons, worded as the SDK's invoke words them", () => {
    const bytes = answerBytes({}, [
      ["stackName", "missing required property"],
      ["", "stack not found"],
    ]);
    expect(() => resourcesOfStackAnswer(bytes, token, resourceTypeToken)).toThrow(
      `Invoke of '${token}' failed: missing required property (stackName); stack not found ()`,
    );
  });

  it("fails on an answer cut short, rather than reading part of it", () => {
    const bytes = answerBytes({ [clusterUrn("one")]: { type: resourceTypeToken, outputs: { clusterResourceId: clusterId("one"), status } } });
    expect(() => resourcesOfStackAnswer(bytes.subarray(0, bytes.length - 40), token, resourceTypeToken)).toThrow(RangeError);
  });
});
