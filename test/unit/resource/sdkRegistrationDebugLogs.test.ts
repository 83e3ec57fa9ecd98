/**
 * The filter over the SDK's per-registration debug lines (resources/sdkRegistrationDebugLogs.ts),
 * on a stand-in `log` module. test/program/sdkDebugLogs.test.ts runs it over the real SDK under
 * mocks, and test/e2e/sdkDebugLogs.test.ts reads what reached the real engine.
 */
import { describe, expect, it } from "vitest";
import type { DebugLogModule } from "../../../resources/sdkRegistrationDebugLogs";
import { isSdkRegistrationLine, quietSdkRegistrationLines, sdkDebugLogsFrom } from "../../../resources/sdkRegistrationDebugLogs";
import { resourceTypeToken } from "../../../resources/serviceProviderClusterIdentityStatus";

const ours = "pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus";
const theirs = "azure-native:storage:StorageAccount";

/** The three lines @pulumi/pulumi 3.248's registerResource sends for a resource `name` of type `t`. */
function registrationLines(t: string, name: string): string[] {
  return [
    `Registering resource: t=${t}, name=${name}, custom=true, remote=false`,
    `RegisterResource RPC prepared: t=${t}, name=${name}`,
    `RegisterResource RPC finished: resource:${name}[${t}]; err: null, resp: [object Object]`,
  ];
}

function recordingModule(): { module: DebugLogModule; passed: string[] } {
  const passed: string[] = [];
  return {
    passed,
    module: {
      debug: (message: string) => {
        passed.push(message);
        return Promise.resolve();
      },
    },
  };
}

describe("isSdkRegistrationLine", () => {
  it("matches the three successful-registration lines of this type only", () => {
    expect(resourceTypeToken).toBe(ours);
    for (const line of registrationLines(ours, "cluster-a")) {
      expect(isSdkRegistrationLine(line, ours)).toBe(true);
    }
    for (const line of registrationLines(theirs, "cluster-a")) {
      expect(isSdkRegistrationLine(line, ours)).toBe(false);
    }
  });

  it("keeps a failed registration, other SDK lines, a prefix of the type and non-strings", () => {
    expect(isSdkRegistrationLine(`RegisterResource RPC finished: resource:a[${ours}]; err: Error: boom, resp: undefined`, ours)).toBe(false);
    expect(isSdkRegistrationLine(`RegisterResource RPC failed: t=${ours}, name=a, err=Error: boom`, ours)).toBe(false);
    expect(isSdkRegistrationLine(`Reading resource: t=${ours}, name=a`, ours)).toBe(false);
    expect(isSdkRegistrationLine(`Registering resource: t=${ours}Extra, name=a, custom=true, remote=false`, ours)).toBe(false);
    expect(isSdkRegistrationLine(`cluster ${ours} registered`, ours)).toBe(false);
    expect(isSdkRegistrationLine(undefined, ours)).toBe(false);
  });
});

describe("sdkDebugLogsFrom", () => {
  it("defaults to quiet and reads quiet or all in any case", () => {
    expect(sdkDebugLogsFrom({})).toBe("quiet");
    expect(sdkDebugLogsFrom({ ARO_HCP_SDK_DEBUG_LOGS: "" })).toBe("quiet");
    expect(sdkDebugLogsFrom({ ARO_HCP_SDK_DEBUG_LOGS: " All " })).toBe("all");
    expect(sdkDebugLogsFrom({ ARO_HCP_SDK_DEBUG_LOGS: "QUIET" })).toBe("quiet");
  });

  it("refuses anything else, naming the variable and its values", () => {
    expect(() => sdkDebugLogsFrom({ ARO_HCP_SDK_DEBUG_LOGS: "true" })).toThrow(/ARO_HCP_SDK_DEBUG_LOGS must be one of "quiet", "all"; got "true"/);
  });
});

describe("quietSdkRegistrationLines", () => {
  it("drops this type's registration lines while quiet, passes everything else, and follows the variable", async () => {
    const { module, passed } = recordingModule();
    const environment: NodeJS.ProcessEnv = {};
    quietSdkRegistrationLines(ours, module, environment);
    for (const line of [...registrationLines(ours, "a"), ...registrationLines(theirs, "b"), "the program's own line"]) {
      await module.debug(line);
    }
    expect(passed).toEqual([...registrationLines(theirs, "b"), "the program's own line"]);

    passed.length = 0;
    environment.ARO_HCP_SDK_DEBUG_LOGS = "all";
    for (const line of registrationLines(ours, "a")) {
      await module.debug(line);
    }
    expect(passed).toEqual(registrationLines(ours, "a"));

    // An unreadable value keeps every line (quietSdkRegistrationDebugLogs refuses it when called).
    passed.length = 0;
    environment.ARO_HCP_SDK_DEBUG_LOGS = "yes";
    await module.debug(registrationLines(ours, "a")[0]);
    expect(passed).toHaveLength(1);
  });

  it("wraps once per type, so opting in twice does not stack wrappers", async () => {
    const { module, passed } = recordingModule();
    const undo = quietSdkRegistrationLines(ours, module, {});
    const once = module.debug;
    expect(quietSdkRegistrationLines(ours, module, {})).toBe(undo);
    expect(module.debug).toBe(once);
    // Another type gets a wrapper of its own.
    quietSdkRegistrationLines(theirs, module, {});
    for (const line of [...registrationLines(ours, "a"), ...registrationLines(theirs, "b")]) {
      await module.debug(line);
    }
    expect(passed).toEqual([]);
  });

  it("puts `debug` back as it found it when undone, and can be turned on again", async () => {
    const { module, passed } = recordingModule();
    const original = module.debug;
    const undo = quietSdkRegistrationLines(ours, module, {});
    expect(module.debug).not.toBe(original);
    undo();
    expect(module.debug).toBe(original);
    expect(Object.getOwnPropertySymbols(module)).toEqual([]);
    await module.debug(registrationLines(ours, "a")[0]);
    expect(passed).toEqual([registrationLines(ours, "a")[0]]);
    // Undone, it is no longer installed: turning it on again wraps anew.
    const again = quietSdkRegistrationLines(ours, module, {});
    expect(again).not.toBe(undo);
    await module.debug(registrationLines(ours, "a")[0]);
    expect(passed).toHaveLength(1);
    again();
    expect(module.debug).toBe(original);
  });

  it("passes every line once undone, also when something wrapped `debug` after it", async () => {
    const { module, passed } = recordingModule();
    const undo = quietSdkRegistrationLines(ours, module, {});
    const ourWrapper = module.debug;
    const theirWrapper = (message: string): Promise<void> => ourWrapper(message);
    module.debug = theirWrapper;
    undo();
    // Theirs stays in place (putting the original back would drop it); ours now passes everything.
    expect(module.debug).toBe(theirWrapper);
    for (const line of registrationLines(ours, "a")) {
      await module.debug(line);
    }
    expect(passed).toEqual(registrationLines(ours, "a"));
  });
});
