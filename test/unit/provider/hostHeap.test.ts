/**
 * The provider host's heap growth (resources/provider/hostHeap.ts): set once in the engine's
 * dynamic-provider host from ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT (default 25), followed by one full collection, never in another
 * process, and a value out of range changes nothing and is named by the settings check.
 */
import { PerformanceObserver, constants } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { boundHostHeapGrowth, collectGarbage, heapGrowthPercent, isDynamicProviderHost } from "../../../resources/provider/hostHeap";
import { fleetSettingsProblem } from "../../../resources/provider/settingsCheck";

const host = ["/usr/bin/node", "/stack/node_modules/@pulumi/pulumi/cmd/dynamic-provider/index.js", "127.0.0.1:40123"];

function flagsSet(argv: readonly string[], environment: Record<string, string>): string[] {
  const flags: string[] = [];
  boundHostHeapGrowth(
    argv,
    environment,
    (text) => flags.push(text),
    () => flags.push("(collected)"),
  );
  return flags;
}

describe("provider host heap growth", () => {
  it("tells the dynamic-provider host from other processes", () => {
    expect(isDynamicProviderHost(host)).toBe(true);
    expect(isDynamicProviderHost(["node", "C:\\stack\\node_modules\\@pulumi\\pulumi\\cmd\\dynamic-provider"])).toBe(true);
    expect(isDynamicProviderHost(["node", "/stack/node_modules/vitest/vitest.mjs"])).toBe(false);
    expect(isDynamicProviderHost(["node", "/stack/node_modules/@pulumi/pulumi/cmd/run/index.js"])).toBe(false);
    expect(isDynamicProviderHost(["node"])).toBe(false);
    // What the SDK's pulumi-resource-pulumi-nodejs script runs: node "$(require.resolve('@pulumi/pulumi/cmd/dynamic-provider'))".
    expect(isDynamicProviderHost(["node", require.resolve("@pulumi/pulumi/cmd/dynamic-provider")])).toBe(true);
  });

  it("sets V8's growing percent once in the host: the default, or the operator's", () => {
    expect(flagsSet(host, {})).toEqual(["--heap-growing-percent=25", "(collected)"]);
    expect(flagsSet(host, { ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: " 120 " })).toEqual(["--heap-growing-percent=120", "(collected)"]);
  });

  it("collects once with a full (mark-compact) collection, and leaves gc unexposed", async () => {
    const kinds: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) kinds.push((entry as unknown as { detail: { kind: number } }).detail.kind);
    });
    observer.observe({ entryTypes: ["gc"] });
    try {
      collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      observer.disconnect();
    }
    expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MAJOR);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  it("leaves V8's own heuristic with 0, in other processes, and on a value that fails the check", () => {
    expect(flagsSet(host, { ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: "0" })).toEqual([]);
    expect(flagsSet(["node", "/stack/index.js"], {})).toEqual([]);
    for (const bad of ["5", "301", "1.5", "-20", "fifty"]) {
      expect(flagsSet(host, { ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: bad })).toEqual([]);
      expect(heapGrowthPercent({ ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: bad })).toEqual({ problem: expect.stringContaining(`"${bad}"`) as unknown });
    }
  });

  it("fails the fleet-wide check once, naming the variable and its range, beside other wrong settings", () => {
    const valid = { ARO_HCP_COSMOS_ENDPOINT: "https://aro-hcp.documents.azure.com:443/", ARO_HCP_COSMOS_DATABASE: "aro-hcp" };
    expect(fleetSettingsProblem(undefined, valid)).toBeUndefined();
    const alone = fleetSettingsProblem(undefined, { ...valid, ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: "1.5" }) ?? "";
    expect(alone).toMatch(
      /^ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT is "1\.5": expected a whole number of percent from 10 to 300 .*or 0 to leave V8's own heuristic\n/,
    );
    expect(alone).toContain("Nothing was read or written for any cluster");
    const both = fleetSettingsProblem(undefined, { ARO_HCP_COSMOS_DATABASE: "aro-hcp", ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: "900" }) ?? "";
    expect(both).toMatch(/^2 settings are wrong:/);
    expect(both).toContain('ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT is "900"');
  });
});
