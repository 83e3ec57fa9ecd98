import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../../../resources/core/json";
import { isJsonObject } from "../../../resources/core/json";
import { identityStatusPatchOperations, serviceProviderClusterDocumentProblems } from "../../../resources/core/serviceProviderClusterDocument";
import { applyPatchOperation } from "../../fakes/inMemoryDocumentStore";
import {
  buildServiceProviderClusterDocument,
  identityResourceId,
  instanceVersionOf,
  storedEntry,
  storedStatus,
  subtreeOf,
  withoutOwnedFields,
} from "../../fixtures/documents";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";

const identityA = identityResourceId("identity-a");
const keyA = identityA.toLowerCase();
const identityB = identityResourceId("identity-b");
const keyB = identityB.toLowerCase();

/** `"absent"` leaves the subtree out. */
function documentWithSubtree(subtree: JsonValue): JsonObject {
  return buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: subtree });
}

describe("isJsonObject", () => {
  it.each([
    [{}, true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    ["x", false],
    [undefined, false],
  ])("says %j is an object: %s", (value, expected) => {
    expect(isJsonObject(value)).toBe(expected);
  });
});

describe("readStoredStatus", () => {
  it("reads a well-formed subtree", () => {
    const subtree = storedStatus(
      [storedEntry(identityA, { clientId: "c", principalId: "p" }), storedEntry(identityB, { retrievalError: "X: y" })],
      "2026-08-15T00:00:00Z",
    );
    expect(dataPlaneHalf.read(documentWithSubtree(subtree))).toEqual({
      status: {
        identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" }, [keyB]: { resourceID: identityB, retrievalError: "X: y" } },
        earliestRecheckTime: "2026-08-15T00:00:00Z",
      },
      present: true,
      problems: [],
    });
  });

  it.each([
    ["an absent subtree", "absent" as const, { status: {}, present: false, problems: [] }],
    ["a null subtree", null, { status: {}, present: false, problems: [] }],
    ["an empty subtree, as Go emits it", {}, { status: {}, present: true, problems: [] }],
    ["null identities and recheck time", { identities: null, earliestRecheckTime: null }, { status: {}, present: true, problems: [] }],
    ["an empty identities map", { identities: {} }, { status: {}, present: true, problems: [] }],
    [
      "an entry with null clientId and principalId (Go nil pointers)",
      { identities: { [keyA]: { resourceID: identityA, clientId: null, principalId: null } } },
      { status: { identities: { [keyA]: { resourceID: identityA } } }, present: true, problems: [] },
    ],
  ])("tolerates %s", (_title, subtree, expected) => {
    expect(dataPlaneHalf.read(documentWithSubtree(subtree))).toEqual(expected);
  });

  it.each([
    ["a subtree that is a string", "oops", "the status subtree is a string, expected an object"],
    ["a subtree that is an array", [], "the status subtree is an array, expected an object"],
    ["identities that is an array", { identities: [] }, "identities is an array, expected an object"],
    ["an entry without resourceID", { identities: { [keyA]: { clientId: "c" } } }, `identities['${keyA}'] is not a valid entry`],
    ["an entry with a numeric clientId", { identities: { [keyA]: { resourceID: identityA, clientId: 5 } } }, `identities['${keyA}'] is not a valid entry`],
    [
      "an entry keyed in mixed case",
      { identities: { [identityA]: { resourceID: identityA } } },
      `identities['${identityA}'] is not keyed by the lowercased resource ID`,
    ],
    ["an unparseable recheck time", { earliestRecheckTime: "soon" }, "earliestRecheckTime is not an RFC 3339 timestamp"],
    ["a numeric recheck time", { earliestRecheckTime: 5 }, "earliestRecheckTime is not an RFC 3339 timestamp"],
  ])("drops and reports %s", (_title, subtree, problem) => {
    const result = dataPlaneHalf.read(documentWithSubtree(subtree));
    expect(result.present).toBe(true);
    expect(result.problems).toEqual([problem]);
    expect(result.status.identities).toBeUndefined();
  });

  it("keeps the good entries next to a malformed one", () => {
    const result = dataPlaneHalf.read(documentWithSubtree({ identities: { [keyA]: { resourceID: identityA, clientId: "c" }, [keyB]: "bad" } }));
    expect(result.status.identities).toEqual({ [keyA]: { resourceID: identityA, clientId: "c" } });
    expect(result.problems).toHaveLength(1);
  });

  it.each([
    ["no properties", { id: "x" }],
    ["a null status", { properties: { status: null } }],
    ["a status that is a string", { properties: { status: "x" } }],
  ])("reads a document with %s as absent", (_title, document) => {
    expect(dataPlaneHalf.read(document as JsonObject)).toEqual({ status: {}, present: false, problems: [] });
  });
});

describe("serviceProviderClusterDocumentProblems", () => {
  it("accepts the upstream layout", () => {
    expect(serviceProviderClusterDocumentProblems(buildServiceProviderClusterDocument())).toEqual([]);
  });

  it("accepts the resource type in another casing and a missing status", () => {
    const document = buildServiceProviderClusterDocument({
      overrides: { resourceType: "microsoft.redhatopenshift/HCPOPENSHIFTCLUSTERS/serviceproviderclusters", properties: { status: undefined } },
    });
    expect(serviceProviderClusterDocumentProblems(document)).toEqual([]);
  });

  it.each([
    [
      "a cluster document",
      { resourceType: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters" },
      "resourceType is 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters', expected 'Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters'",
    ],
    ["a missing resource type", { resourceType: undefined }, "resourceType is a undefined, expected"],
    ["properties that are an array", { properties: [] }, "properties is an array, expected an object"],
    ["cosmosMetadata that is a string", { properties: { cosmosMetadata: "x" } }, "properties.cosmosMetadata is a string, expected an object"],
    ["a status that is a number", { properties: { status: 3 } }, "properties.status is a number, expected an object"],
  ])("refuses %s and names the field", (_title, overrides, problem) => {
    const problems = serviceProviderClusterDocumentProblems(buildServiceProviderClusterDocument({ overrides: overrides }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });
});

describe("statusToJson", () => {
  it("writes upstream's field order, sorted keys, and omits empty optional fields", () => {
    const json = dataPlaneHalf.toJson({
      earliestRecheckTime: "2026-08-15T00:00:00Z",
      identities: { [keyB]: { resourceID: identityB, retrievalError: "e" }, [keyA]: { principalId: "", clientId: "c", resourceID: identityA } },
    });
    expect(JSON.stringify(json)).toBe(
      JSON.stringify({
        identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "" }, [keyB]: { resourceID: identityB, retrievalError: "e" } },
        earliestRecheckTime: "2026-08-15T00:00:00Z",
      }),
    );
  });

  it("writes an empty status as an empty object", () => {
    expect(dataPlaneHalf.toJson({})).toEqual({});
    expect(dataPlaneHalf.toJson({ identities: {} })).toEqual({});
  });
});

describe("identityStatusPatchOperations for the data plane half", () => {
  const status = { identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } }, earliestRecheckTime: "2026-08-15T00:00:00Z" };

  it("sets only the owned subtree and upstream's bookkeeping", () => {
    const document = buildServiceProviderClusterDocument({ instanceVersion: 7 });
    expect(identityStatusPatchOperations(document, { dataPlane: status }, '"etag-1"')).toEqual([
      { op: "set", path: "/properties/status/dataPlaneOperatorsManagedIdentities", value: dataPlaneHalf.toJson(status) },
      { op: "set", path: "/properties/cosmosMetadata/instanceVersion", value: 8 },
      { op: "set", path: "/properties/cosmosMetadata/etag", value: '"etag-1"' },
    ]);
  });

  it.each([
    ["a missing instanceVersion", undefined, 2],
    ["an instanceVersion of 0", 0, 2],
    ["a fractional instanceVersion", 2.5, 2],
    ["a string instanceVersion", "5", 2],
    ["instanceVersion 1", 1, 2],
  ])("treats %s as upstream does (missing counts as 1)", (_title, instanceVersion, expected) => {
    const document = buildServiceProviderClusterDocument({
      overrides: { properties: { cosmosMetadata: { instanceVersion: instanceVersion as JsonValue | undefined } } },
    });
    const operations = identityStatusPatchOperations(document, { dataPlane: {} }, "e");
    expect(operations.find((operation) => operation.path.endsWith("instanceVersion"))).toEqual({
      op: "set",
      path: "/properties/cosmosMetadata/instanceVersion",
      value: expected,
    });
  });

  it("creates the status object when the document has none, keeping foreign status fields out of harm's way", () => {
    const document = buildServiceProviderClusterDocument({ overrides: { properties: { status: undefined } } });
    const operations = identityStatusPatchOperations(document, { dataPlane: status }, "e");
    expect(operations[0]).toEqual({ op: "set", path: "/properties/status", value: { dataPlaneOperatorsManagedIdentities: dataPlaneHalf.toJson(status) } });
  });

  it("creates cosmosMetadata in a legacy document as upstream's Replace would (instanceVersion read as 1, written as 2)", () => {
    const document = buildServiceProviderClusterDocument({ overrides: { properties: { cosmosMetadata: undefined } } });
    const patched = structuredClone(document);
    for (const operation of identityStatusPatchOperations(document, { dataPlane: status }, '"e"')) applyPatchOperation(patched, operation);
    const metadata = (patched.properties as JsonObject).cosmosMetadata as JsonObject;
    expect(Object.keys(metadata)).toEqual(["resourceID", "etag", "instanceVersion", "partitionKey"]);
    expect(metadata).toEqual({ resourceID: document.resourceID, etag: '"e"', instanceVersion: 2, partitionKey: document.partitionKey });
    expect(subtreeOf(patched)).toEqual(dataPlaneHalf.toJson(status));
  });

  it.each([
    ["a document with the subtree", buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: storedStatus([storedEntry(identityB)]) })],
    ["a document without the subtree", buildServiceProviderClusterDocument({ dataPlaneOperatorsManagedIdentities: "absent" })],
    ["a document without status", buildServiceProviderClusterDocument({ overrides: { properties: { status: undefined } } })],
    ["a document with a null status", buildServiceProviderClusterDocument({ overrides: { properties: { status: null } } })],
  ])("applies cleanly to %s and changes nothing else", (_title, document) => {
    const patched = structuredClone(document);
    for (const operation of identityStatusPatchOperations(document, { dataPlane: status }, '"e"')) applyPatchOperation(patched, operation);
    expect(subtreeOf(patched)).toEqual(dataPlaneHalf.toJson(status));
    expect(instanceVersionOf(patched)).toBe(4);
    const before = withoutOwnedFields(document) as JsonObject;
    const after = withoutOwnedFields(patched) as JsonObject;
    // A missing or null status is created as an object; otherwise nothing foreign moves.
    if (!isJsonObject((document.properties as JsonObject).status)) {
      (before.properties as JsonObject).status = {};
    }
    expect(after).toEqual(before);
  });
});
