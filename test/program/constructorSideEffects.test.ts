/**
 * Issue 27 item 3: constructing a ServiceProviderClusterIdentityStatus leaves the process as it
 * was. Under `pulumi.runtime.setMocks` (the SDK registers the resource as it does against an
 * engine), `Error.stackTraceLimit`, `Error.prepareStackTrace` and the SDK's `log.debug` are the same
 * before the constructor, while the SDK registers the resource (seen from a resource transformation,
 * which the SDK calls from inside the constructor) and after the registration has been answered; the
 * SDK's three debug lines about the registration all reach its logger. The two opt-ins change that
 * only once a program calls them, and only back to the same state when undone.
 */
import type { RegisteredResource } from "../fixtures/programMocks";
import { setProgramMocks } from "../fixtures/programMocks";
import { createRequire } from "node:module";
import type * as pulumi from "@pulumi/pulumi";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ServiceProviderClusterIdentityStatus, quietSdkRegistrationDebugLogs, registerWithoutStackTraces, resourceTypeToken } from "../../resources";
import { clusterResourceIdFor } from "../fixtures/documents";

type Debug = (message: string, ...rest: unknown[]) => Promise<void>;
type PrepareStackTrace = typeof Error.prepareStackTrace;

/** The SDK's `log` module as the SDK itself requires it: the CommonJS exports object. */
const sdkLog = createRequire(__filename)("@pulumi/pulumi/log") as { debug: Debug };

/** What the process holds, as far as these tests look. */
interface ProcessState {
  readonly stackTraceLimit: number;
  readonly prepareStackTrace: PrepareStackTrace;
  readonly debug: Debug;
  readonly debugDescriptor: PropertyDescriptor | undefined;
  readonly logModuleKeys: readonly (string | symbol)[];
}

function processState(): ProcessState {
  return {
    stackTraceLimit: Error.stackTraceLimit,
    // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
    prepareStackTrace: Error.prepareStackTrace,
    debug: sdkLog.debug,
    debugDescriptor: Object.getOwnPropertyDescriptor(sdkLog, "debug"),
    logModuleKeys: Reflect.ownKeys(sdkLog),
  };
}

const registered: RegisteredResource[] = [];
const debugLines: string[] = [];
let before: ProcessState;
let sdkDebug: Debug;
let originalLimit: number;
let originalPrepare: PrepareStackTrace;

beforeAll(async () => {
  await setProgramMocks({ registered });
});

beforeEach(() => {
  // A state no default would produce, so a reset to a default shows too: a program's own limit,
  // formatter (source-map-support and ts-node install one) and logger.
  originalLimit = Error.stackTraceLimit;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back after the test; never called here
  originalPrepare = Error.prepareStackTrace;
  Error.stackTraceLimit = 37;
  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]) => `${error.message} (${frames.length} frames, the program's formatter)`;
  sdkDebug = sdkLog.debug;
  sdkLog.debug = (message, ...rest) => {
    debugLines.push(message);
    return sdkDebug(message, ...rest);
  };
  debugLines.length = 0;
  before = processState();
});

afterEach(() => {
  sdkLog.debug = sdkDebug;
  Error.stackTraceLimit = originalLimit;
  Error.prepareStackTrace = originalPrepare;
});

const cluster = (name: string): string =>
  clusterResourceIdFor({ subscriptionId: "00000000-0000-0000-0000-000000000000", resourceGroupName: "rg", clusterName: name });

/** Constructs a resource whose transformation records the process state from inside the constructor. */
function construct(name: string): { resource: ServiceProviderClusterIdentityStatus; during: ProcessState[] } {
  const during: ProcessState[] = [];
  const resource = new ServiceProviderClusterIdentityStatus(
    name,
    { clusterResourceId: cluster(name) },
    {
      transformations: [
        () => {
          during.push(processState());
          return undefined;
        },
      ],
    },
  );
  return { resource, during };
}

/** Resolves when the mock monitor has answered the registration (its `id` is set then). */
function registeredOutput(resource: pulumi.CustomResource): Promise<unknown> {
  return new Promise((resolve) => resource.id.apply(resolve));
}

function linesAbout(name: string): string[] {
  return debugLines.filter((line) => line.includes(resourceTypeToken) && line.includes(name));
}

describe("constructing a ServiceProviderClusterIdentityStatus", () => {
  it("leaves Error.stackTraceLimit, Error.prepareStackTrace and the SDK's log.debug exactly as they were, during and after", async () => {
    const { resource, during } = construct("untouched-cluster");
    expect(during).toEqual([before]);
    expect(processState()).toEqual(before);
    await registeredOutput(resource);
    expect(registered.map((resource) => resource.name)).toContain("untouched-cluster");
    expect(processState()).toEqual(before);
    // Nothing filtered: the SDK's three lines about the registration reached its logger.
    expect(linesAbout("untouched-cluster")).toHaveLength(3);
  });

  it("leaves them so also when the constructor throws", () => {
    expect(() => new ServiceProviderClusterIdentityStatus("", { clusterResourceId: cluster("nameless") })).toThrow(/Missing resource name/);
    expect(processState()).toEqual(before);
  });

  it("turns stack traces off only while registering, once the program opts in, and not after it is undone", async () => {
    const undo = registerWithoutStackTraces();
    let during: ProcessState[];
    try {
      const constructed = construct("quiet-stack-cluster");
      during = constructed.during;
      expect(processState()).toEqual(before);
      await registeredOutput(constructed.resource);
    } finally {
      undo();
    }
    expect(during).toHaveLength(1);
    expect(during[0].stackTraceLimit).toBe(0);
    expect(during[0].prepareStackTrace).not.toBe(before.prepareStackTrace);
    expect(processState()).toEqual(before);
    const { during: afterUndo } = construct("stack-again-cluster");
    expect(afterUndo).toEqual([before]);
  });

  it("wraps the SDK's log.debug only once the program opts in, and puts it back when undone", async () => {
    const undo = quietSdkRegistrationDebugLogs();
    try {
      expect(sdkLog.debug).not.toBe(before.debug);
      const { resource } = construct("quiet-log-cluster");
      await registeredOutput(resource);
      expect(linesAbout("quiet-log-cluster")).toEqual([]);
    } finally {
      undo();
    }
    expect(processState()).toEqual(before);
  });
});
