/**
 * Program tests under `pulumi.runtime.setMocks`: no provider method runs, but the resource graph,
 * the type token, the inputs and the closure serialization of `__provider` do. Outputs are awaited
 * with a timeout, so a serialization failure (which leaves outputs unresolved) fails loudly.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import program from "../../index";
import { clusterKeys, clusterSummary, declareFleet, declareInBatches, failureLines, hashedResourceNameFor } from "../../program/declareFleet";
import { refusePlainCosmosKey } from "../../program/cosmosKeyConfig";
import type { ClusterDeclaration } from "../../program/fleet";
import { parseClusterList } from "../../program/fleet";
import { ServiceProviderClusterIdentityStatus } from "../../resources";
import { providerText } from "../../resources/provider/providerLoader";
import { clusterResourceIdFor, identityResourceId } from "../fixtures/documents";

const projectName = "aro-hcp-identity-status";
const typeToken = "pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus";

interface Registration {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, unknown>;
  readonly custom: boolean | undefined;
}

const registrations: Registration[] = [];

/** The status every mocked resource records: one identity, resolved. */
const mockedStatus = {
  earliestRecheckTime: "2026-08-15T00:00:00Z",
  identities: {
    "/subscriptions/x/resourcegroups/rg/providers/microsoft.managedidentity/userassignedidentities/i": {
      resourceID: "/subscriptions/x/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/i",
      clientId: "c",
      principalId: "p",
    },
  },
};

/**
 * What a created resource reports, as the provider's create would: `status` as JSON text. A
 * resource named `*-object-status` reports it as an object instead, as a user's own mock may.
 */
function mockState(name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  return {
    ...inputs,
    inputsDigest: "digest-of-the-declared-inputs",
    status: name.endsWith("-object-status") ? mockedStatus : JSON.stringify(mockedStatus),
  };
}

beforeAll(async () => {
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registrations.push({ type: args.type, name: args.name, inputs: args.inputs as Record<string, unknown>, custom: args.custom });
        return { id: `${args.name}-id`, state: mockState(args.name, args.inputs as Record<string, unknown>) };
      },
      call: (args) => {
        // An empty fleet makes the program ask the engine what its stack holds (program/emptyFleet.ts): nothing here.
        if (args.token === "pulumi:pulumi:readStackResourceOutputs") {
          return { name: (args.inputs as { stackName: string }).stackName, outputs: {} };
        }
        throw new Error(`unexpected invoke ${args.token}`);
      },
    },
    projectName,
    "unit",
    false,
    "organization",
  );
});

beforeEach(() => {
  registrations.length = 0;
});

/** Resolves an output, or fails after `timeoutInMs` (a serialization failure never resolves). */
function valueOf<T>(output: pulumi.Output<T>, timeoutInMs = 10_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`output did not resolve within ${timeoutInMs} ms (did __provider fail to serialize?)`)), timeoutInMs);
    output.apply((value) => {
      clearTimeout(timer);
      resolve(value);
      return value;
    });
  });
}

const clusterA = clusterResourceIdFor({ subscriptionId: "00000000-0000-0000-0000-000000000000", resourceGroupName: "rg-a", clusterName: "cluster-a" });
const clusterB = clusterResourceIdFor({ subscriptionId: "00000000-0000-0000-0000-000000000000", resourceGroupName: "rg-b", clusterName: "Cluster-B" });
const identityA = identityResourceId("identity-a");

describe("ServiceProviderClusterIdentityStatus", () => {
  it("registers a dynamic resource with the aroHcp type token, its inputs and the provider text", async () => {
    const resource = new ServiceProviderClusterIdentityStatus("cluster-a", {
      clusterResourceId: clusterA,
      dataPlaneOperators: { "operator-a": identityA },
      serviceManagedIdentity: identityResourceId("smi"),
    });
    expect(await valueOf(resource.urn)).toContain(`::${typeToken}::cluster-a`);
    expect(await valueOf(resource.id)).toBe("cluster-a-id");
    expect(registrations).toHaveLength(1);
    const [registration] = registrations;
    expect(registration.type).toBe(typeToken);
    expect(registration.custom).toBe(true);
    expect(registration.inputs).toMatchObject({
      clusterResourceId: clusterA,
      dataPlaneOperators: { "operator-a": identityA },
      serviceManagedIdentity: identityResourceId("smi"),
    });
    expect(registration.inputs.__provider).toBe(providerText);
  });

  it("resolves its declared outputs from the provider's state", async () => {
    const resource = new ServiceProviderClusterIdentityStatus("cluster-b", { clusterResourceId: clusterB });
    expect(await valueOf(resource.id)).toBe("cluster-b-id");
    expect(await valueOf(resource.inputsDigest)).toBe("digest-of-the-declared-inputs");
    expect(await valueOf(resource.clusterResourceId)).toBe(clusterB);
    expect(await valueOf(resource.desiredSource)).toBe("clusterDocument");
    // The provider's JSON text, given to the program as the object.
    expect(await valueOf(resource.status)).toEqual(mockedStatus);
    expect(await valueOf(resource.identityCount), "derived from the status").toBe(1);
    expect(await valueOf(resource.drift)).toBeUndefined();
    expect(await valueOf(resource.skippedReason)).toBeUndefined();
  });

  it("gives the status object also when the state holds an object (a user's own mock)", async () => {
    const resource = new ServiceProviderClusterIdentityStatus("cluster-object-status", { clusterResourceId: clusterB });
    expect(await valueOf(resource.status)).toEqual(mockedStatus);
  });

  it("passes Output-valued inputs through once they resolve", async () => {
    const resource = new ServiceProviderClusterIdentityStatus("cluster-c", {
      clusterResourceId: pulumi.output(clusterA),
      dataPlaneOperators: { "operator-a": pulumi.output(identityA) },
    });
    await valueOf(resource.id);
    expect(registrations).toHaveLength(1);
    expect(registrations[0].inputs).toMatchObject({ clusterResourceId: clusterA, dataPlaneOperators: { "operator-a": identityA } });
  });

  it("serializes the provider once for every resource (the same text)", async () => {
    const first = new ServiceProviderClusterIdentityStatus("one", { clusterResourceId: clusterA });
    const second = new ServiceProviderClusterIdentityStatus("two", { clusterResourceId: clusterB });
    await Promise.all([valueOf(first.id), valueOf(second.id)]);
    expect(registrations).toHaveLength(2);
    expect(registrations[0].inputs.__provider).toBe(registrations[1].inputs.__provider);
    expect((registrations[0].inputs.__provider as string).length).toBeLessThan(10_000);
  });
});

describe("declareFleet", () => {
  it("names each resource by its cluster's subscription, group and name, lowercased, and summarises the fleet by cluster name, the ARM ID inside", async () => {
    const { resources, outputs } = await declareFleet([
      { clusterResourceId: clusterA, dataPlaneOperators: { "operator-a": identityA } },
      { clusterResourceId: clusterB },
    ]);
    expect(resources).toHaveLength(2);
    const summary = await valueOf(outputs);
    expect(registrations.map((registration) => registration.name).sort()).toEqual([
      "00000000-0000-0000-0000-000000000000/rg-a/cluster-a",
      "00000000-0000-0000-0000-000000000000/rg-b/cluster-b",
    ]);
    expect(registrations.every((registration) => registration.type === typeToken)).toBe(true);
    expect(Object.keys(summary).sort()).toEqual(["Cluster-B", clusterA.split("/").pop()].sort());
    expect(summary["Cluster-B"]).toEqual({
      id: clusterB,
      dataPlaneOperators: { state: "ok", identities: 1, resolved: 1, notFound: 0, failed: 0, nextRecheck: "2026-08-15T00:00:00Z" },
      msiIdentities: { state: "ok", identities: 0, nextRecheck: null },
    });
  });

  it("says failed, for both halves, with the cause, for a cluster whose last pass failed; its kept IDs still counted", () => {
    const status = { earliestRecheckTime: "2026-08-15T00:00:00Z", operators: { a: { keyHash: "0123456789ab", clientId: "c", principalId: "p" } } };
    const msiStatus = { identityCount: 2, earliestRecheckTime: "2026-08-16T00:00:00Z" };
    const failure = {
      cause: "invalid_client: the certificate was revoked (tenant 4b6d8f0a-0000-4000-8000-000000000000)",
      halves: ["dataPlaneOperators", "msiIdentities"] as const,
    };
    const base = { status, msiStatus, skippedReason: undefined, msiSkippedReason: undefined, drift: undefined };
    expect(clusterSummary(clusterB, { ...base, failure: { ...failure, halves: [...failure.halves] } })).toEqual({
      id: clusterB,
      dataPlaneOperators: { state: "failed", identities: 1, resolved: 1, notFound: 0, failed: 0, nextRecheck: "2026-08-15T00:00:00Z" },
      msiIdentities: { state: "failed", identities: 2, nextRecheck: "2026-08-16T00:00:00Z" },
      failure: failure.cause,
    });
    // One half failed; a failed lookup fails its half; a half not looked at is skipped.
    const msiOnly = clusterSummary(clusterB, { ...base, msiSkippedReason: undefined, failure: { cause: "x", halves: ["msiIdentities"] } });
    expect([msiOnly.dataPlaneOperators.state, msiOnly.msiIdentities.state]).toEqual(["ok", "failed"]);
    const lookupFailed = clusterSummary(clusterB, {
      ...base,
      status: { operators: { a: { keyHash: "0123456789ab", retrievalError: "InternalServerError (HTTP 500): boom" } } },
      msiSkippedReason: "identityUrlNotSet",
      failure: undefined,
    });
    expect(lookupFailed).toMatchObject({ dataPlaneOperators: { state: "failed", failed: 1 }, msiIdentities: { state: "skipped" } });
    expect(lookupFailed.failure).toBeUndefined();
  });

  it("says each cause of the clusters whose last pass failed once, naming their resources and pointing at the first's error, not repeating the cause", () => {
    const ok = clusterSummary(clusterA, {
      status: {},
      msiStatus: { identityCount: 0 },
      skippedReason: undefined,
      msiSkippedReason: undefined,
      drift: undefined,
      failure: undefined,
    });
    const cluster = (name: string) =>
      clusterResourceIdFor({ subscriptionId: "00000000-0000-0000-0000-000000000000", resourceGroupName: "RG", clusterName: name });
    const failed = (name: string, cause: string) => ({ ...ok, id: cluster(name), failure: cause });
    const summary = {
      one: failed("One", "revoked in tenant T"),
      two: failed("two", "revoked in tenant T"),
      three: failed("three", "throttled"),
      four: ok,
    };
    expect(failureLines(summary)).toEqual([
      "2 clusters failed with one cause, stated in the error of 00000000-0000-0000-0000-000000000000/rg/one: 00000000-0000-0000-0000-000000000000/rg/one, 00000000-0000-0000-0000-000000000000/rg/two",
      "1 cluster failed, its cause stated in its error: 00000000-0000-0000-0000-000000000000/rg/three",
    ]);
    expect(failureLines(summary, 1)[0]).toBe(
      "2 clusters failed with one cause, stated in the error of 00000000-0000-0000-0000-000000000000/rg/one: 00000000-0000-0000-0000-000000000000/rg/one and 1 more",
    );
    expect(failureLines(summary).join("\n")).not.toMatch(/revoked|throttled/);
    expect(failureLines({ four: ok })).toEqual([]);
  });

  it("declares nothing for an empty fleet", async () => {
    const { resources, outputs } = await declareFleet([]);
    expect(resources).toEqual([]);
    expect(await valueOf(outputs)).toEqual({});
  });

  it("refuses a cluster listed twice, whatever its casing, before it declares anything", async () => {
    await expect(declareFleet([{ clusterResourceId: clusterA }, { clusterResourceId: clusterA.toUpperCase() }])).rejects.toThrow(
      `is listed twice in the clusters config`,
    );
    // Let any registration that was queued reach the mock monitor.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(registrations).toEqual([]);
  });

  /**
   * Clusters whose operators record, as the resource's constructor reads them, how many
   * registrations had reached the engine (the mock monitor) by then.
   */
  function clustersRecordingDeclarations(count: number): { clusters: ClusterDeclaration[]; registeredWhenDeclared: number[] } {
    const registeredWhenDeclared: number[] = [];
    const clusters = Array.from({ length: count }, (_, index): ClusterDeclaration => {
      const cluster = {
        clusterResourceId: clusterResourceIdFor({
          subscriptionId: "00000000-0000-0000-0000-000000000000",
          resourceGroupName: "rg",
          clusterName: `batch-${index}`,
        }),
      };
      Object.defineProperty(cluster, "dataPlaneOperators", {
        enumerable: true,
        get: () => {
          registeredWhenDeclared.push(registrations.length);
          return { "operator-a": identityA };
        },
      });
      return cluster;
    });
    return { clusters, registeredWhenDeclared };
  }

  it("sends the first batch to the engine before it declares the next, in the order listed", async () => {
    const { clusters, registeredWhenDeclared } = clustersRecordingDeclarations(7);
    const { resources, outputs } = await declareFleet(clusters, 3);
    await valueOf(outputs);
    expect(resources).toHaveLength(7);
    // Batches 0-2, 3-5, 6: nothing was registered during the first; the first batch's three by the
    // second; the first two batches' six by the last.
    expect(registeredWhenDeclared).toEqual([0, 0, 0, 3, 3, 3, 6]);
    expect(registrations.map((registration) => registration.name)).toEqual(
      clusters.map((_, index) => `00000000-0000-0000-0000-000000000000/rg/batch-${index}`),
    );
  });

  it("declares everything before the first registration when the batch holds the whole fleet (the old behaviour)", async () => {
    const { clusters, registeredWhenDeclared } = clustersRecordingDeclarations(7);
    await valueOf((await declareFleet(clusters, 7)).outputs);
    expect(registeredWhenDeclared).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(registrations).toHaveLength(7);
  });

  it("refuses a batch size that is not a whole number of at least 1", async () => {
    await expect(declareInBatches([1, 2], (item) => item, 0)).rejects.toThrow("batchSize must be a whole number of at least 1, got 0");
    expect(await declareInBatches([1, 2, 3], (item, index) => `${index}:${item}`, 2)).toEqual(["0:1", "1:2", "2:3"]);
  });
});

describe("clusterKeys", () => {
  const id = (subscription: string, resourceGroup: string, name: string): string =>
    clusterResourceIdFor({ subscriptionId: subscription, resourceGroupName: resourceGroup, clusterName: name });
  const subscriptionOne = "11111111-1111-1111-1111-111111111111";
  const subscriptionTwo = "22222222-2222-2222-2222-222222222222";

  it("is the cluster name when unique, the resource group when names collide, the subscription when both do", () => {
    const ids = [
      id(subscriptionOne, "rg-a", "alpha"),
      id(subscriptionOne, "rg-a", "beta"),
      id(subscriptionOne, "rg-b", "Beta"),
      id(subscriptionOne, "rg-c", "gamma"),
      id(subscriptionTwo, "rg-c", "gamma"),
    ];
    expect([...clusterKeys(ids).values()]).toEqual(["alpha", "rg-a/beta", "rg-b/Beta", `${subscriptionOne}/rg-c/gamma`, `${subscriptionTwo}/rg-c/gamma`]);
  });

  it("gives a hashed name that is stable whatever the case of the cluster ID (what examples/azure-native names identities with)", () => {
    expect(hashedResourceNameFor(clusterB)).toMatch(/^cluster-b-[0-9a-f]{8}$/);
    expect(hashedResourceNameFor(clusterB)).toBe(hashedResourceNameFor(clusterB.toLowerCase()));
  });
});

describe("refusePlainCosmosKey", () => {
  const configWith = (values: Record<string, string>): pulumi.Config => {
    pulumi.runtime.setAllConfig(Object.fromEntries(Object.entries(values).map(([key, value]) => [`${projectName}:${key}`, value])));
    return new pulumi.Config(projectName);
  };

  it("refuses a plain, non-empty key, naming it and how to set it", () => {
    try {
      expect(() => refusePlainCosmosKey(configWith({ cosmosKey: "plain-text-key" }), () => false)).toThrow(
        "aro-hcp-identity-status:cosmosKey is stored in plain text in the stack config; set it as a secret (`pulumi config set --secret cosmosKey`)",
      );
    } finally {
      pulumi.runtime.setAllConfig({});
    }
  });

  it("accepts the empty default, no key, and a secret key", () => {
    try {
      expect(() => refusePlainCosmosKey(configWith({ cosmosKey: "" }), () => false)).not.toThrow();
      expect(() => refusePlainCosmosKey(configWith({}), () => false)).not.toThrow();
      expect(() => refusePlainCosmosKey(configWith({ cosmosKey: "secret-key" }), (key) => key === `${projectName}:cosmosKey`)).not.toThrow();
    } finally {
      pulumi.runtime.setAllConfig({});
    }
  });
});

describe("parseClusterList", () => {
  it("accepts clusters with and without operators", () => {
    expect(parseClusterList([{ clusterResourceId: clusterA, dataPlaneOperators: { a: identityA } }, { clusterResourceId: clusterB }], "p:clusters")).toEqual([
      { clusterResourceId: clusterA, dataPlaneOperators: { a: identityA } },
      { clusterResourceId: clusterB },
    ]);
  });

  it.each([
    ["a non-list", { clusterResourceId: clusterA }, "p:clusters must be a list of clusters"],
    ["a non-object item", ["x"], "p:clusters[0] must be an object with clusterResourceId"],
    ["an unknown field", [{ clusterResourceId: clusterA, cluster: "x" }], "p:clusters[0].cluster is not a known field"],
    ["a missing cluster ID", [{ dataPlaneOperators: {} }], "p:clusters[0].clusterResourceId must be a string"],
  ])("refuses %s and names the place", (_title, value, message) => {
    expect(() => parseClusterList(value, "p:clusters")).toThrow(message);
  });
});

describe("the program (index.ts)", () => {
  it("declares one resource per cluster in the stack config's clusters list", async () => {
    pulumi.runtime.setAllConfig({
      [`${projectName}:clusters`]: JSON.stringify([
        { clusterResourceId: clusterA, dataPlaneOperators: { "operator-a": identityA } },
        { clusterResourceId: clusterB },
        {
          clusterResourceId: clusterResourceIdFor({
            subscriptionId: "11111111-2222-3333-4444-555555555555",
            resourceGroupName: "rg-c",
            clusterName: "cluster-c",
          }),
        },
      ]),
    });
    try {
      const exported = await program();
      const clusters = await valueOf(exported.clusters as pulumi.Output<Record<string, unknown>>);
      expect(registrations).toHaveLength(3);
      expect(registrations.every((registration) => registration.type === typeToken && typeof registration.inputs.__provider === "string")).toBe(true);
      const byCluster = (id: string): Registration | undefined => registrations.find((registration) => registration.inputs.clusterResourceId === id);
      expect(byCluster(clusterA)?.inputs).toMatchObject({ dataPlaneOperators: { "operator-a": identityA } });
      expect(byCluster(clusterB)?.inputs).not.toHaveProperty("dataPlaneOperators");
      expect(Object.keys(clusters)).toHaveLength(3);
    } finally {
      pulumi.runtime.setAllConfig({});
    }
  });

  it("declares nothing when neither clusters nor clustersFile is set, as with Pulumi.yaml's default empty list", async () => {
    pulumi.runtime.setAllConfig({});
    try {
      const exported = await program();
      await valueOf(exported.clusters as pulumi.Output<Record<string, unknown>>);
      expect(registrations).toHaveLength(0);
    } finally {
      pulumi.runtime.setAllConfig({});
    }
  });

  it("reads the cluster list from clustersFile, ahead of the clusters key", async () => {
    const directory = mkdtempSync(join(tmpdir(), "clusters-file-"));
    const file = join(directory, "clusters.json");
    writeFileSync(file, JSON.stringify([{ clusterResourceId: clusterA }, { clusterResourceId: clusterB }]));
    pulumi.runtime.setAllConfig({ [`${projectName}:clustersFile`]: file, [`${projectName}:clusters`]: JSON.stringify([]) });
    try {
      const exported = await program();
      await valueOf(exported.clusters as pulumi.Output<Record<string, unknown>>);
      expect(registrations.map((registration) => registration.inputs.clusterResourceId).sort()).toEqual([clusterA, clusterB].sort());
    } finally {
      pulumi.runtime.setAllConfig({});
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("names clustersFile and the problem when the file is missing or not JSON", async () => {
    const directory = mkdtempSync(join(tmpdir(), "clusters-file-"));
    writeFileSync(join(directory, "broken.json"), "[{");
    for (const [file, expected] of [
      [join(directory, "missing.json"), "which does not exist"],
      [join(directory, "broken.json"), "which is not valid JSON"],
    ]) {
      pulumi.runtime.setAllConfig({ [`${projectName}:clustersFile`]: file });
      try {
        await expect(program()).rejects.toThrow(new RegExp(`${projectName}:clustersFile names .* ${expected}`));
        expect(registrations).toHaveLength(0);
      } finally {
        pulumi.runtime.setAllConfig({});
      }
    }
    rmSync(directory, { recursive: true, force: true });
  });

  it("names the config key when the clusters list is malformed", async () => {
    pulumi.runtime.setAllConfig({ [`${projectName}:clusters`]: JSON.stringify([{ clusterResourceId: 5 }]) });
    try {
      await expect(program()).rejects.toThrow(`${projectName}:clusters[0].clusterResourceId must be a string`);
      // As the SDK's RunError, whose message the engine prints alone, and with no stack for the
      // language host to map through source maps (30 s of CPU per refused run).
      const refused = (await program().catch((error: unknown) => error)) as Error;
      expect(pulumi.RunError.isInstance(refused)).toBe(true);
      expect(refused.stack).not.toMatch(/\n\s+at /);
      // Nor its cause: the host formats that too (20 s more per refused run).
      const cause = (refused as { cause?: unknown }).cause as Error;
      expect(cause).toBeInstanceOf(Error);
      expect(cause.stack).not.toMatch(/\n\s+at /);
    } finally {
      pulumi.runtime.setAllConfig({});
    }
  });
});
