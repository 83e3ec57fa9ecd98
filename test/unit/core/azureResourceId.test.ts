import { describe, expect, it } from "vitest";
import {
  clusterResourceType,
  describeType,
  parseResourceId,
  parseResourceIdOfType,
  serviceProviderClusterIdFor,
  userAssignedIdentityResourceType,
} from "../../../resources/core/azureResourceId";

const subscription = "0465bc32-c654-41b8-8d87-9815d7abe8f6";
const identity = `/subscriptions/${subscription}/resourceGroups/Test-RG/providers/Microsoft.ManagedIdentity/userAssignedIdentities/Identity-A`;

describe("parseResourceId", () => {
  it("splits a user-assigned identity ID into its parts and keeps the given casing", () => {
    const result = parseResourceId(identity);
    expect(result).toEqual({
      ok: true,
      resourceId: {
        canonical: identity,
        key: identity.toLowerCase(),
        subscriptionId: subscription,
        resourceGroupName: "Test-RG",
        resourceType: "Microsoft.ManagedIdentity/userAssignedIdentities",
        name: "Identity-A",
      },
    });
  });

  it.each([
    [
      "all-lowercase segment names",
      identity.replace("/subscriptions/", "/subscriptions/").replace("/resourceGroups/", "/resourcegroups/").replace("/providers/", "/providers/"),
    ],
    [
      "all-uppercase segment names",
      identity.replace("/subscriptions/", "/SUBSCRIPTIONS/").replace("/resourceGroups/", "/RESOURCEGROUPS/").replace("/providers/", "/PROVIDERS/"),
    ],
    [
      "mixed-case segment names",
      identity.replace("/subscriptions/", "/SubScriptions/").replace("/resourceGroups/", "/ResourceGROUPS/").replace("/providers/", "/Providers/"),
    ],
  ])("prints %s back in the canonical casing", (_title, value) => {
    const result = parseResourceId(value);
    expect(result.ok && result.resourceId.canonical).toBe(identity);
  });

  it("gives IDs that differ only in casing the same key", () => {
    const upper = parseResourceId(identity.toUpperCase().replace(subscription.toUpperCase(), subscription.toUpperCase()));
    const lower = parseResourceId(identity.toLowerCase());
    expect(upper.ok && lower.ok).toBe(true);
    if (upper.ok && lower.ok) expect(upper.resourceId.key).toBe(lower.resourceId.key);
  });

  it("parses a child resource and reports its full type", () => {
    const child = `/subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1/serviceProviderClusters/default`;
    const result = parseResourceId(child);
    expect(result.ok && result.resourceId.resourceType).toBe("Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters");
    expect(result.ok && result.resourceId.name).toBe("default");
  });

  it.each([
    ["a number", 42, "must be a string, got a number"],
    ["null", null, "must be a string, got null"],
    ["an object", { id: identity }, "must be a string, got an object"],
    ["an array", [identity], "must be a string, got an array"],
    ["an empty string", "", "must not be empty"],
    ["leading whitespace", ` ${identity}`, "must not have leading or trailing whitespace"],
    ["trailing newline", `${identity}\n`, "must not have leading or trailing whitespace"],
    ["a missing leading slash", identity.slice(1), "must start with '/subscriptions/'"],
    ["a double slash", identity.replace("/resourceGroups/", "//resourceGroups/"), "has an empty segment"],
    ["a trailing slash", `${identity}/`, "has an empty segment"],
    ["a wrong first segment", identity.replace("/subscriptions/", "/tenants/"), "must start with '/subscriptions/<subscription ID>'"],
    ["a non-GUID subscription", identity.replace(subscription, "my-subscription"), "has subscription 'my-subscription', which is not a GUID"],
    ["no resource group", `/subscriptions/${subscription}`, "must continue with '/resourceGroups/<name>'"],
    ["an invalid resource group", identity.replace("Test-RG", "bad*rg"), "has resource group 'bad*rg', which is not a valid name"],
    ["a resource group ending in a period", identity.replace("Test-RG", "rg."), "has resource group 'rg.', which is not a valid name"],
    ["no providers segment", `/subscriptions/${subscription}/resourceGroups/rg`, "must continue with '/providers/<namespace>/<type>/<name>'"],
    [
      "a type without a name",
      `/subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities`,
      "must name a resource",
    ],
    ["a name with a space at the end encoded as %", identity.replace("Identity-A", "a%20b"), "has resource name 'a%20b', which is not a valid name"],
    ["an over-long ID", `${identity}${"x".repeat(1100)}`, "an ARM ID has at most 1024"],
  ])("refuses %s with a reason", (_title, value, reason) => {
    const result = parseResourceId(value);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toContain(reason);
  });

  it("never echoes a non-string value in the reason", () => {
    const result = parseResourceId({ secret: "hunter2" });
    expect(!result.ok && result.reason).not.toContain("hunter2");
  });
});

it("keeps the result of a string, frozen, so a caller cannot change what the next one reads", () => {
  const first = parseResourceId(identity);
  expect(parseResourceId(identity)).toBe(first);
  expect(Object.isFrozen(first)).toBe(true);
  expect(first.ok && Object.isFrozen(first.resourceId)).toBe(true);
  expect(() => {
    (first as { ok: boolean }).ok = false;
  }).toThrow(TypeError);
  const refused = parseResourceId(`${identity}/`);
  expect(parseResourceId(`${identity}/`)).toBe(refused);
  expect(Object.isFrozen(refused)).toBe(true);
  // Another casing is another string: parsed on its own, same key.
  const upper = parseResourceId(identity.toUpperCase());
  expect(upper).not.toBe(first);
  expect(upper.ok && first.ok && upper.resourceId.key).toBe(first.ok ? first.resourceId.key : "");
});

describe("parseResourceIdOfType", () => {
  it("accepts the expected type in any casing", () => {
    const result = parseResourceIdOfType(
      identity.replace("Microsoft.ManagedIdentity/userAssignedIdentities", "microsoft.managedidentity/USERASSIGNEDIDENTITIES"),
      userAssignedIdentityResourceType,
    );
    expect(result.ok).toBe(true);
  });

  it("refuses another resource type and names both types", () => {
    const cluster = `/subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1`;
    const result = parseResourceIdOfType(cluster, userAssignedIdentityResourceType);
    expect(!result.ok && result.reason).toBe(
      "must be a Microsoft.ManagedIdentity/userAssignedIdentities ID, but names a Microsoft.RedHatOpenShift/hcpOpenShiftClusters",
    );
  });

  it("refuses a child resource when the parent type is expected", () => {
    const child = `/subscriptions/${subscription}/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c1/serviceProviderClusters/default`;
    expect(parseResourceIdOfType(child, clusterResourceType).ok).toBe(false);
  });
});

describe("serviceProviderClusterIdFor", () => {
  it("appends the default ServiceProviderCluster singleton to the canonical cluster ID", () => {
    const parsed = parseResourceIdOfType(
      `/SUBSCRIPTIONS/${subscription}/resourcegroups/Some-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/My-Cluster`,
      clusterResourceType,
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(serviceProviderClusterIdFor(parsed.resourceId)).toBe(
      `/subscriptions/${subscription}/resourceGroups/Some-RG/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/My-Cluster/serviceProviderClusters/default`,
    );
  });
});

describe("describeType", () => {
  it.each([
    [null, "null"],
    [[], "an array"],
    [{}, "an object"],
    ["x", "a string"],
    [1, "a number"],
    [true, "a boolean"],
    [undefined, "a undefined"],
  ])("describes %j as %s", (value, description) => {
    expect(describeType(value)).toBe(description);
  });
});
