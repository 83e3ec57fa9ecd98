/**
 * What the program (index.ts) loads: the language host runs it through ts-node, which transpiles each
 * TypeScript module it loads, at every engine command. The program declares resources and reads the
 * stack's state; the provider's pass (resources/sync, azure, cosmos, telemetry) runs in the provider
 * host, so the program must not load it, nor the Azure SDKs. Loading them made a small stack's
 * no-op `up` about 0.3 s slower here (the program's CPU 2.0 s against 1.5 s). Checked in a separate
 * Node process, as the language host loads it: ts-node registered, index.ts required, not run.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const projectDirectory = resolve(__dirname, "..", "..");

const script = `
require("ts-node").register({ transpileOnly: true, compilerOptions: { module: "commonjs" } });
require(process.cwd() + "/index.ts");
const root = process.cwd() + "/";
const modules = Object.keys(require.cache);
console.log(JSON.stringify({
  own: modules.filter((file) => file.startsWith(root) && !file.includes("/node_modules/")).map((file) => file.slice(root.length)).sort(),
  packages: [...new Set(modules.map((file) => /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(file)?.[1]).filter((name) => name !== undefined))].sort(),
}));
`;

describe("the modules the program loads", () => {
  it("loads none of the provider's pass (sync, azure, cosmos, telemetry) and no Azure SDK or node-forge", () => {
    const output = execFileSync(process.execPath, ["-e", script], { cwd: projectDirectory, encoding: "utf8", timeout: 60_000 });
    const { own, packages } = JSON.parse(output.trim().split("\n").pop()!) as { own: string[]; packages: string[] };
    // What it does load, so that the check cannot pass by loading nothing.
    expect(own).toEqual(
      expect.arrayContaining(["index.ts", "program/declareFleet.ts", "resources/serviceProviderClusterIdentityStatus.ts", "resources/index.ts"]),
    );
    expect(packages).toContain("@pulumi/pulumi");
    expect(own.filter((file) => /^resources\/(?:sync|azure|cosmos|telemetry)\//.test(file))).toEqual([]);
    expect(packages.filter((name) => name.startsWith("@azure/") || name === "node-forge" || name.startsWith("@opentelemetry/sdk"))).toEqual([]);
  });
});
