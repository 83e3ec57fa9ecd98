import { describe, expect, it } from "vitest";
import { checkInputs, containsUnknown, maxDataPlaneOperators, parseInputs, unknownValue } from "../../../resources/provider/providerInputs";
import { parseStoredOutputs } from "../../../resources/provider/providerOutputs";
import { clusterResourceIdFor, identityResourceId } from "../../fixtures/documents";
import { keyHashOf } from "../../../resources/core/outputsStatus";
import { outputsSchemaVersion } from "../../../resources/core/serviceProviderClusterDocument";

const cluster = clusterResourceIdFor();
const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");

function failuresOf(news: Record<string, unknown>): Array<{ property: string; reason: string }> {
  return checkInputs(news).failures;
}

describe("checkInputs", () => {
  it("accepts a cluster, operators and a service managed identity and returns them canonical", () => {
    const { inputs, failures } = checkInputs({
      clusterResourceId: cluster.replace("/subscriptions/", "/SUBSCRIPTIONS/").replace("/resourceGroups/", "/resourcegroups/"),
      dataPlaneOperators: { "zeta-operator": identityB.replace("/providers/", "/PROVIDERS/"), "alpha-operator": identityA },
      serviceManagedIdentity: identityResourceId("smi").replace("/resourceGroups/", "/RESOURCEGROUPS/"),
    });
    expect(failures).toEqual([]);
    expect(inputs).toEqual({
      clusterResourceId: cluster,
      dataPlaneOperators: { "alpha-operator": identityA, "zeta-operator": identityB },
      serviceManagedIdentity: identityResourceId("smi"),
    });
    expect(Object.keys(inputs.dataPlaneOperators as object)).toEqual(["alpha-operator", "zeta-operator"]);
  });

  it("keeps the casing of names, resource groups and types as given", () => {
    const mixed = identityResourceId("Identity-A", { resourceGroupName: "Test-RG" });
    const { inputs } = checkInputs({ clusterResourceId: cluster, dataPlaneOperators: { operator: mixed } });
    expect(inputs.dataPlaneOperators).toEqual({ operator: mixed });
  });

  it("accepts a cluster alone (the desired set is then read from the cluster document)", () => {
    expect(checkInputs({ clusterResourceId: cluster })).toEqual({ inputs: { clusterResourceId: cluster }, failures: [] });
  });

  it("treats null operators and identity as omitted", () => {
    expect(checkInputs({ clusterResourceId: cluster, dataPlaneOperators: null, serviceManagedIdentity: null })).toEqual({
      inputs: { clusterResourceId: cluster },
      failures: [],
    });
  });

  it("accepts an empty operator map", () => {
    expect(checkInputs({ clusterResourceId: cluster, dataPlaneOperators: {} })).toEqual({
      inputs: { clusterResourceId: cluster, dataPlaneOperators: {} },
      failures: [],
    });
  });

  it("ignores reserved __ properties such as __provider and does not copy them", () => {
    const { inputs, failures } = checkInputs({ clusterResourceId: cluster, __provider: "exports.handler = ..." });
    expect(failures).toEqual([]);
    expect(inputs).not.toHaveProperty("__provider");
  });

  it.each([
    ["a missing cluster", {}, "clusterResourceId", "is required: the ARM ID of the Microsoft.RedHatOpenShift/hcpOpenShiftClusters cluster"],
    ["a null cluster", { clusterResourceId: null }, "clusterResourceId", "is required"],
    ["a numeric cluster", { clusterResourceId: 7 }, "clusterResourceId", "must be a string, got a number"],
    ["a malformed cluster", { clusterResourceId: "my-cluster" }, "clusterResourceId", "must start with '/subscriptions/'"],
    [
      "a cluster with a non-GUID subscription",
      { clusterResourceId: cluster.replace("00000000-0000-0000-0000-000000000000", "prod") },
      "clusterResourceId",
      "has subscription 'prod', which is not a GUID",
    ],
    ["a cluster with surrounding whitespace", { clusterResourceId: ` ${cluster}` }, "clusterResourceId", "must not have leading or trailing whitespace"],
    ["an identity ID as the cluster", { clusterResourceId: identityA }, "clusterResourceId", "must be a Microsoft.RedHatOpenShift/hcpOpenShiftClusters ID"],
    [
      "operators that are a string",
      { clusterResourceId: cluster, dataPlaneOperators: identityA },
      "dataPlaneOperators",
      "must be a map of operator name to identity resource ID, got a string",
    ],
    ["operators that are an array", { clusterResourceId: cluster, dataPlaneOperators: [identityA] }, "dataPlaneOperators", "got an array"],
    ["operators that are a number", { clusterResourceId: cluster, dataPlaneOperators: 3 }, "dataPlaneOperators", "got a number"],
    [
      "an empty operator name",
      { clusterResourceId: cluster, dataPlaneOperators: { "": identityA } },
      "dataPlaneOperators.",
      "operator name must not be empty or whitespace",
    ],
    [
      "a whitespace operator name",
      { clusterResourceId: cluster, dataPlaneOperators: { " \t": identityA } },
      "dataPlaneOperators. \t",
      "operator name must not be empty or whitespace",
    ],
    [
      "a malformed identity",
      { clusterResourceId: cluster, dataPlaneOperators: { op: "identity-a" } },
      "dataPlaneOperators.op",
      "identity resource ID must start with '/subscriptions/'",
    ],
    [
      "a non-string identity",
      { clusterResourceId: cluster, dataPlaneOperators: { op: { id: identityA } } },
      "dataPlaneOperators.op",
      "identity resource ID must be a string, got an object",
    ],
    [
      "a null identity",
      { clusterResourceId: cluster, dataPlaneOperators: { op: null } },
      "dataPlaneOperators.op",
      "identity resource ID must be a string, got null",
    ],
    [
      "an identity with whitespace",
      { clusterResourceId: cluster, dataPlaneOperators: { op: `${identityA} ` } },
      "dataPlaneOperators.op",
      "must not have leading or trailing whitespace",
    ],
    [
      "an identity with a non-GUID subscription",
      { clusterResourceId: cluster, dataPlaneOperators: { op: identityA.replace("00000000-0000-0000-0000-000000000000", "sub") } },
      "dataPlaneOperators.op",
      "has subscription 'sub', which is not a GUID",
    ],
    [
      "a cluster ID as an identity",
      { clusterResourceId: cluster, dataPlaneOperators: { op: cluster } },
      "dataPlaneOperators.op",
      "must be a Microsoft.ManagedIdentity/userAssignedIdentities ID",
    ],
    [
      "a malformed service managed identity",
      { clusterResourceId: cluster, serviceManagedIdentity: "smi" },
      "serviceManagedIdentity",
      "must start with '/subscriptions/'",
    ],
    [
      "a numeric service managed identity",
      { clusterResourceId: cluster, serviceManagedIdentity: 1 },
      "serviceManagedIdentity",
      "must be a string, got a number",
    ],
    [
      "an unknown property",
      { clusterResourceId: cluster, clusterId: cluster },
      "clusterId",
      "is not a property of ServiceProviderClusterIdentityStatus; expected clusterResourceId, dataPlaneOperators, serviceManagedIdentity",
    ],
  ])("fails %s on the property it concerns", (_title, news, property, reason) => {
    const failures = failuresOf(news);
    expect(failures).toHaveLength(1);
    expect(failures[0].property).toBe(property);
    expect(failures[0].reason).toContain(reason);
  });

  it("refuses a map with more operators than supported, without listing them", () => {
    const operators = Object.fromEntries(
      Array.from({ length: maxDataPlaneOperators + 1 }, (_, index) => [`op-${index}`, identityResourceId(`identity-${index}`)]),
    );
    const failures = failuresOf({ clusterResourceId: cluster, dataPlaneOperators: operators });
    expect(failures).toEqual([
      { property: "dataPlaneOperators", reason: `has ${maxDataPlaneOperators + 1} operators; at most ${maxDataPlaneOperators} are supported` },
    ]);
  });

  it("accepts exactly the maximum number of operators", () => {
    const operators = Object.fromEntries(Array.from({ length: maxDataPlaneOperators }, (_, index) => [`op-${index}`, identityResourceId(`identity-${index}`)]));
    expect(failuresOf({ clusterResourceId: cluster, dataPlaneOperators: operators })).toEqual([]);
  });

  it("reports one failure per bad operator and keeps the good ones", () => {
    const { inputs, failures } = checkInputs({ clusterResourceId: cluster, dataPlaneOperators: { a: identityA, b: "bad", c: 5 } });
    expect(failures.map((failure) => failure.property)).toEqual(["dataPlaneOperators.b", "dataPlaneOperators.c"]);
    expect(inputs.dataPlaneOperators).toEqual({ a: identityA });
  });

  it.each([
    ["the cluster", { clusterResourceId: unknownValue }, { clusterResourceId: unknownValue }],
    [
      "the whole operator map",
      { clusterResourceId: cluster, dataPlaneOperators: unknownValue },
      { clusterResourceId: cluster, dataPlaneOperators: unknownValue },
    ],
    [
      "one operator's identity",
      { clusterResourceId: cluster, dataPlaneOperators: { b: unknownValue, a: identityA } },
      { clusterResourceId: cluster, dataPlaneOperators: { a: identityA, b: unknownValue } },
    ],
    [
      "the service managed identity",
      { clusterResourceId: cluster, serviceManagedIdentity: unknownValue },
      { clusterResourceId: cluster, serviceManagedIdentity: unknownValue },
    ],
  ])("passes an unknown value for %s through without failing", (_title, news, expected) => {
    expect(checkInputs(news)).toEqual({ inputs: expected, failures: [] });
  });
});

describe("containsUnknown", () => {
  it.each([
    [unknownValue, true],
    [{ a: { b: [1, unknownValue] } }, true],
    [[unknownValue], true],
    ["04da6b54", false],
    [{ a: "x", b: [null, 1] }, false],
    [null, false],
  ])("finds the unknown sentinel in %j: %s", (value, expected) => {
    expect(containsUnknown(value)).toBe(expected);
  });
});

describe("parseInputs", () => {
  it("returns the checked inputs, typed, when every property passes", () => {
    expect(parseInputs({ clusterResourceId: cluster, dataPlaneOperators: { op: identityA }, __provider: "x" })).toEqual({
      ok: true,
      value: { clusterResourceId: cluster, dataPlaneOperators: { op: identityA } },
    });
  });

  it.each([
    ["a bag that is not an object", "nope", "clusterResourceId"],
    ["a missing cluster", {}, "clusterResourceId"],
    ["a bad identity", { clusterResourceId: cluster, dataPlaneOperators: { op: "bad" } }, "dataPlaneOperators.op"],
  ])("fails %s, naming the field", (_title, news, property) => {
    const parsed = parseInputs(news);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.failures.map((failure) => failure.property)).toEqual([property]);
  });
});

describe("parseStoredOutputs", () => {
  const current = { schemaVersion: outputsSchemaVersion, clusterResourceId: cluster, inputsDigest: "digest", status: "{}" };

  it("accepts outputs of the current schema, version 1", () => {
    expect(outputsSchemaVersion).toBe(1);
    expect(parseStoredOutputs(current).ok).toBe(true);
  });

  it("returns the fields the provider reads, typed, with the absent ones filled in", () => {
    const status = { operators: { op: { keyHash: keyHashOf(identityA.toLowerCase()), clientId: "c" } }, earliestRecheckTime: "2026-08-15T00:00:00Z" };
    expect(parseStoredOutputs({ ...current, status: JSON.stringify(status), identityCount: 1 })).toEqual({
      ok: true,
      value: {
        clusterResourceId: cluster,
        status,
        drift: [],
        inputsDigest: "digest",
        serviceManagedIdentity: null,
        skippedReason: null,
        msiStatus: {},
        msiSkippedReason: null,
        failure: null,
      },
    });
    expect(parseStoredOutputs({ ...current, drift: ["x"], skippedReason: "clusterDeleting", serviceManagedIdentity: identityB })).toMatchObject({
      ok: true,
      value: { drift: ["x"], skippedReason: "clusterDeleting", serviceManagedIdentity: identityB },
    });
  });

  it.each([
    ["no schemaVersion", { ...current, schemaVersion: undefined }, "schemaVersion"],
    ["a later release's schemaVersion", { ...current, schemaVersion: 2 }, "schemaVersion"],
    ["a schemaVersion as text", { ...current, schemaVersion: "1" }, "schemaVersion"],
    ["a null status", { ...current, status: null }, "status"],
    ["a status that is not JSON text", { ...current, status: "{" }, "status"],
    ["a status as an object (the outputs store its text)", { ...current, status: {} }, "status"],
    ["a status text holding a list", { ...current, status: "[]" }, "status"],
    ["a status with a malformed entry", { ...current, status: JSON.stringify({ identities: { a: 5 } }) }, "status"],
    ["a status with an operator without key hash", { ...current, status: JSON.stringify({ operators: { a: { clientId: "c" } } }) }, "status"],
    ["no inputs digest", { ...current, inputsDigest: undefined }, "inputsDigest"],
    ["a numeric inputs digest", { ...current, inputsDigest: 5 }, "inputsDigest"],
    ["a drift list of numbers", { ...current, drift: [1] }, "drift"],
    ["a drift that is not a list", { ...current, drift: "none" }, "drift"],
    ["a numeric skippedReason", { ...current, skippedReason: 1 }, "skippedReason"],
    ["an empty object", {}, "schemaVersion"],
    ["no object at all", undefined, "outputs"],
  ])("refuses outputs with %s, naming the field", (_title, outputs, property) => {
    const parsed = parseStoredOutputs(outputs);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.failures.map((failure) => failure.property)).toContain(property);
  });
});
