/**
 * The SDK's own debug lines per registration of this resource (resources/sdkRegistrationDebugLogs.ts)
 * over the real @pulumi/pulumi under mocks: the SDK still formats them as the filter expects (with
 * mocks it calls `log.debug` as it does against an engine); a resource constructed without the
 * opt-in leaves them and the SDK's logger alone; once the program calls
 * `quietSdkRegistrationDebugLogs()` they are dropped, and ARO_HCP_SDK_DEBUG_LOGS=all keeps them.
 * What reaches a real engine: test/e2e/sdkDebugLogs.test.ts.
 */
import type { RegisteredResource } from "../fixtures/programMocks";
import { setProgramMocks } from "../fixtures/programMocks";
import * as pulumi from "@pulumi/pulumi";
import * as sdkLog from "@pulumi/pulumi/log";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ServiceProviderClusterIdentityStatus, quietSdkRegistrationDebugLogs } from "../../resources";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { quietSdkRegistrationLines } from "../../resources/sdkRegistrationDebugLogs";
import { TrivialClusterResource, trivialTypeToken } from "../../bench/performance/engineFloor";
import { clusterResourceIdFor } from "../fixtures/documents";

type Debug = (message: string, ...rest: unknown[]) => Promise<void>;

/** Every debug line that got past the filter (this recorder sits beneath it). */
const passed: string[] = [];
const registered: RegisteredResource[] = [];
const variable = "ARO_HCP_SDK_DEBUG_LOGS";
const variableBefore = process.env[variable];
/** The SDK's `log` module, as the filter sees it. */
const logModule = sdkLog as unknown as { debug: Debug };
/** The SDK's own `debug`, put back after the tests. */
const sdkDebug = logModule.debug;
/** The `debug` in place before any opt-in: this test's recorder. */
const recorder: Debug = (message, ...rest) => {
  passed.push(message);
  return sdkDebug(message, ...rest);
};

beforeAll(async () => {
  logModule.debug = recorder;
  await setProgramMocks({ registered });
});

afterAll(() => {
  logModule.debug = sdkDebug;
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
  it("all reach the logger, which stays as it was, when the program did not opt in", async () => {
    delete process.env[variable];
    const ours = new ServiceProviderClusterIdentityStatus("default-cluster", { clusterResourceId: cluster("default-cluster") });
    expect(logModule.debug).toBe(recorder);
    await registeredOutput(ours);
    expect(logModule.debug).toBe(recorder);
    expect(linesNaming(resourceTypeToken, "default-cluster")).toHaveLength(3);
  });

  it("an opt-in with a bad ARO_HCP_SDK_DEBUG_LOGS is refused before anything is wrapped", () => {
    process.env[variable] = "verbose";
    expect(() => quietSdkRegistrationDebugLogs()).toThrow(/ARO_HCP_SDK_DEBUG_LOGS must be one of "quiet", "all"; got "verbose"/);
    expect(logModule.debug).toBe(recorder);
  });

  it("are dropped for this resource once the program opts in, kept for any other type, and the logger is put back when undone", async () => {
    delete process.env[variable];
    const undo = quietSdkRegistrationDebugLogs();
    try {
      const ours = new ServiceProviderClusterIdentityStatus("quiet-cluster", { clusterResourceId: cluster("quiet-cluster") });
      const other = new Other("other-resource");
      await Promise.all([registeredOutput(ours), registeredOutput(other)]);
      expect(registered.map((resource) => resource.name)).toContain("quiet-cluster");
      expect(linesNaming(resourceTypeToken, "quiet-cluster")).toEqual([]);
      // The other type's three lines, as the SDK formats them: the formats the filter matches.
      expect(linesNaming("test:index:Other", "other-resource")).toEqual([
        "Registering resource: t=test:index:Other, name=other-resource, custom=true, remote=false",
        "RegisterResource RPC prepared: t=test:index:Other, name=other-resource",
        expect.stringMatching(/^RegisterResource RPC finished: resource:other-resource\[test:index:Other\]; err: null, resp: /),
      ]);
    } finally {
      undo();
    }
    expect(logModule.debug).toBe(recorder);
  });

  it("are kept with ARO_HCP_SDK_DEBUG_LOGS=all after the opt-in", async () => {
    process.env[variable] = "all";
    const undo = quietSdkRegistrationDebugLogs();
    try {
      const ours = new ServiceProviderClusterIdentityStatus("loud-cluster", { clusterResourceId: cluster("loud-cluster") });
      await registeredOutput(ours);
      expect(linesNaming(resourceTypeToken, "loud-cluster")).toEqual([
        `Registering resource: t=${resourceTypeToken}, name=loud-cluster, custom=true, remote=false`,
        `RegisterResource RPC prepared: t=${resourceTypeToken}, name=loud-cluster`,
        expect.stringMatching(
          /^RegisterResource RPC finished: resource:loud-cluster\[pulumi-nodejs:dynamic\/aroHcp:ServiceProviderClusterIdentityStatus\]; err: null, resp: /,
        ),
      ]);
    } finally {
      undo();
    }
  });

  it("are dropped alike for the engine floor's trivial resource (bench/performance/engineFloor.ts), whose token is its own", async () => {
    delete process.env[variable];
    const before = new TrivialClusterResource("trivial-before", { clusterResourceId: "before" });
    await registeredOutput(before);
    expect(registered.find((resource) => resource.name === "trivial-before")?.type).toBe(trivialTypeToken);
    expect(linesNaming(trivialTypeToken, "trivial-before")).toHaveLength(3);
    const undo = quietSdkRegistrationLines(trivialTypeToken);
    try {
      const after = new TrivialClusterResource("trivial-after", { clusterResourceId: "after" });
      await registeredOutput(after);
      expect(linesNaming(trivialTypeToken, "trivial-after")).toEqual([]);
    } finally {
      undo();
    }
  });
});
