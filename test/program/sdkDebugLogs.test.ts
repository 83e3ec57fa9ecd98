/**
 * The SDK's own debug lines per registration of this resource (resources/sdkRegistrationDebugLogs.ts)
 * over the real @pulumi/pulumi under mocks: the SDK still formats them as the filter expects (with
 * mocks it calls `log.debug` as it does against an engine), they are dropped by default, and
 * ARO_HCP_SDK_DEBUG_LOGS=all keeps them. What reaches a real engine: test/e2e/sdkDebugLogs.test.ts.
 */
import * as pulumi from "@pulumi/pulumi";
import * as sdkLog from "@pulumi/pulumi/log";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ServiceProviderClusterIdentityStatus } from "../../resources";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { quietSdkRegistrationLines } from "../../resources/sdkRegistrationDebugLogs";
import { TrivialClusterResource, trivialTypeToken } from "../../bench/performance/engineFloor";
import { clusterResourceIdFor } from "../fixtures/documents";

/** Every debug line that got past the filter (this recorder sits beneath it). */
const passed: string[] = [];
const registered: string[] = [];
const typesByName = new Map<string, string>();
const variable = "ARO_HCP_SDK_DEBUG_LOGS";
const variableBefore = process.env[variable];

beforeAll(async () => {
  // Beneath the filter: it wraps whatever `debug` is there when the first resource is constructed.
  expect(Object.getOwnPropertySymbols(sdkLog), "the filter was installed before this test's recorder").toEqual([]);
  const logModule = sdkLog as unknown as { debug: (message: string, ...rest: unknown[]) => Promise<void> };
  const sdkDebug = logModule.debug;
  logModule.debug = (message: string, ...rest: unknown[]) => {
    passed.push(message);
    return sdkDebug(message, ...rest);
  };
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => {
        registered.push(args.name);
        typesByName.set(args.name, args.type);
        return { id: `${args.name}-id`, state: args.inputs as Record<string, unknown> };
      },
      call: (args) => {
        throw new Error(`unexpected invoke ${args.token}`);
      },
    },
    "aro-hcp-identity-status",
    "unit",
    false,
  );
});

afterEach(() => {
  if (variableBefore === undefined) {
    delete process.env[variable];
  } else {
    process.env[variable] = variableBefore;
  }
});

/** Resolves when the mock monitor has answered the registration (its `id` is set then). */
function registeredOutput(resource: pulumi.CustomResource): Promise<unknown> {
  return new Promise((resolve) => resource.id.apply(resolve));
}

function linesNaming(type: string, name: string): string[] {
  return passed.filter((line) => line.includes(type) && line.includes(name));
}

/** A resource of another type, registered by the same SDK. */
class Other extends pulumi.CustomResource {
  constructor(name: string) {
    super("test:index:Other", name, {});
  }
}

const cluster = (name: string): string =>
  clusterResourceIdFor({ subscriptionId: "00000000-0000-0000-0000-000000000000", resourceGroupName: "rg", clusterName: name });

describe("the SDK's registration debug lines", () => {
  it("are dropped for this resource by default, and kept for any other type", async () => {
    delete process.env[variable];
    const ours = new ServiceProviderClusterIdentityStatus("quiet-cluster", { clusterResourceId: cluster("quiet-cluster") });
    const other = new Other("other-resource");
    await Promise.all([registeredOutput(ours), registeredOutput(other)]);
    expect(registered).toContain("quiet-cluster");
    expect(linesNaming(resourceTypeToken, "quiet-cluster")).toEqual([]);
    // The other type's three lines, as the SDK formats them: the formats the filter matches.
    expect(linesNaming("test:index:Other", "other-resource")).toEqual([
      "Registering resource: t=test:index:Other, name=other-resource, custom=true, remote=false",
      "RegisterResource RPC prepared: t=test:index:Other, name=other-resource",
      expect.stringMatching(/^RegisterResource RPC finished: resource:other-resource\[test:index:Other\]; err: null, resp: /),
    ]);
  });

  it("are kept with ARO_HCP_SDK_DEBUG_LOGS=all", async () => {
    process.env[variable] = "all";
    const ours = new ServiceProviderClusterIdentityStatus("loud-cluster", { clusterResourceId: cluster("loud-cluster") });
    await registeredOutput(ours);
    expect(linesNaming(resourceTypeToken, "loud-cluster")).toEqual([
      `Registering resource: t=${resourceTypeToken}, name=loud-cluster, custom=true, remote=false`,
      `RegisterResource RPC prepared: t=${resourceTypeToken}, name=loud-cluster`,
      expect.stringMatching(
        /^RegisterResource RPC finished: resource:loud-cluster\[pulumi-nodejs:dynamic\/aroHcp:ServiceProviderClusterIdentityStatus\]; err: null, resp: /,
      ),
    ]);
  });

  it("a bad value is refused before the resource is registered", () => {
    process.env[variable] = "verbose";
    expect(() => new ServiceProviderClusterIdentityStatus("refused-cluster", { clusterResourceId: cluster("refused-cluster") })).toThrow(
      /ARO_HCP_SDK_DEBUG_LOGS must be one of "quiet", "all"; got "verbose"/,
    );
    expect(registered).not.toContain("refused-cluster");
    expect(passed.filter((line) => line.includes("refused-cluster"))).toEqual([]);
  });

  it("are dropped alike for the engine floor's trivial resource (bench/performance/engineFloor.ts), whose token is its own", async () => {
    delete process.env[variable];
    const before = new TrivialClusterResource("trivial-before", { clusterResourceId: "before" });
    await registeredOutput(before);
    expect(typesByName.get("trivial-before")).toBe(trivialTypeToken);
    expect(linesNaming(trivialTypeToken, "trivial-before")).toHaveLength(3);
    quietSdkRegistrationLines(trivialTypeToken);
    const after = new TrivialClusterResource("trivial-after", { clusterResourceId: "after" });
    await registeredOutput(after);
    expect(linesNaming(trivialTypeToken, "trivial-after")).toEqual([]);
  });
});
