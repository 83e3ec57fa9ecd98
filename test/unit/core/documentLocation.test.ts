import { describe, expect, it } from "vitest";
import { cosmosItemIdFor, resourceIdNamespace, uuidVersion5 } from "../../../resources/core/documentLocation";

// Item ids of upstream's layout (docs/cosmos-data-flow.md); test/fixtures/goVectors.json holds more, printed by Go.
const spcId =
  "/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster/serviceProviderClusters/default";
const monstrousPrecinct =
  "/subscriptions/a433a095-1277-44f1-8453-8d61a4d848c2/resourceGroups/unimportantPostponement/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/monstrousPrecinct";

describe("cosmosItemIdFor", () => {
  it.each([
    ["the ServiceProviderCluster of the pause-unpause-backup-schedule fixture", spcId, "7de6e0ae-f384-51a8-97e2-1177ac229b7c"],
    [
      "the cluster of the same fixture",
      "/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster",
      "68bc6026-a8a9-5706-92c5-25d3313bcabb",
    ],
    ["a cluster with mixed-case names", monstrousPrecinct, "f7583c84-ae03-56f3-b91d-55bbb849164d"],
    ["a subscription", "/subscriptions/a433a095-1277-44f1-8453-8d61a4d848c2", "718f75e1-6967-5ce1-ab3c-4f991504b7eb"],
    [
      "a child controller resource",
      "/subscriptions/a433a095-1277-44f1-8453-8d61a4d848c2/resourceGroups/unimportantpostponement/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/monstrousprecinct/hcpOpenShiftControllers/clustercontroller",
      "464bdca5-4108-5ef3-ab4a-15c13eddcf8e",
    ],
  ])("derives upstream's id for %s", (_title, armId, expected) => {
    expect(cosmosItemIdFor(armId)).toBe(expected);
  });

  it.each([
    ["the ServiceProviderCluster", spcId, "33637741-58bf-5a77-848e-f0dbd244f247"],
    ["the monstrousPrecinct cluster", monstrousPrecinct, "5a67c0d6-6072-5efd-89c4-da34c980bdc8"],
  ])("lowercases before hashing, so %s never gets the un-lowercased id", (_title, armId, wrong) => {
    expect(cosmosItemIdFor(armId)).not.toBe(wrong);
    // The negative vector is what hashing the ID as written gives: proves the vector and the lowercasing.
    expect(uuidVersion5(resourceIdNamespace, armId)).toBe(wrong);
  });

  it("gives the same id whatever the casing of the ARM ID", () => {
    expect(cosmosItemIdFor(spcId.toUpperCase())).toBe("7de6e0ae-f384-51a8-97e2-1177ac229b7c");
  });
});

describe("uuidVersion5", () => {
  it("matches the RFC 4122 example for the DNS namespace", () => {
    // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org") == 886313e1-3b8a-5372-9b90-0c9aee199e5d
    expect(uuidVersion5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org")).toBe("886313e1-3b8a-5372-9b90-0c9aee199e5d");
  });

  it("sets the version 5 and RFC 4122 variant bits", () => {
    expect(uuidVersion5(resourceIdNamespace, "anything")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("hashes the name as UTF-8", () => {
    expect(uuidVersion5(resourceIdNamespace, "é")).not.toBe(uuidVersion5(resourceIdNamespace, "e\u0301"));
  });

  it("refuses a namespace that is not a UUID with a RangeError", () => {
    expect(() => uuidVersion5("not-a-uuid", "x")).toThrow(RangeError);
  });
});
