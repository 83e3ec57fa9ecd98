/**
 * The provider text every resource stores in state (`__provider`, in inputs and outputs): the
 * hand-written loader of providerLoader.ts. It must stay small, carry no secret, environment value
 * or machine path, be what the resource registers, and, revived the way the provider host
 * revives it (require-from-string in a Node process whose working directory is the program's),
 * find the package from each place a program runs:
 * - the program's node_modules (a consumer program, test/e2e/installedPackage.test.ts);
 * - a directory inside a checkout of the package (Node's package self-reference by name);
 * - ARO_HCP_PROJECT_DIR (what the project's engine wrapper sets), from any directory.
 * Each case installs a stub implementation, so the test does not depend on dist/ being built; the
 * real implementation behind the loader runs in the e2e tests.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServiceProviderClusterIdentityStatus } from "../../../resources/serviceProviderClusterIdentityStatus";
import { implementationSpecifier, providerText } from "../../../resources/provider/providerLoader";

/** The text is 365 characters (written out with comments: 734; serialized by Pulumi's closure serializer: 4,590). */
const maxProviderTextCharacters = 400;

const planted: Record<string, string> = {
  COSMOS_KEY: "c2VyaWFsaXphdGlvbi1jYW5hcnkta2V5LTdmM2E5Yg==",
  ARO_HCP_COSMOS_ENDPOINT: "https://canary-cosmos-endpoint-5d1e.example.com",
  ARO_HCP_MANAGED_IDENTITY_CLIENT_ID: "9b7d4c1e-0000-4000-8000-5e7ea1c0ffee",
};

const projectDirectory = path.resolve(__dirname, "..", "..", "..");
const text = providerText;
let scratch: string;
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [key, value] of Object.entries(planted)) {
    saved[key] = process.env[key];
    process.env[key] = value;
  }
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "provider-loader-")));
});

afterAll(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true });
});

/** A package named aro-hcp-identity-status at `directory` whose implementation reports its own file. */
function installStubPackage(directory: string): void {
  const implementation = path.join(directory, "dist", "resources", "providerEntry.js");
  fs.mkdirSync(path.dirname(implementation), { recursive: true });
  const manifest = {
    name: "aro-hcp-identity-status",
    exports: { "./provider": "./dist/resources/providerEntry.js" },
  };
  fs.writeFileSync(path.join(directory, "package.json"), JSON.stringify(manifest));
  fs.writeFileSync(
    implementation,
    "globalThis.stubLoads = (globalThis.stubLoads ?? 0) + 1;\n" +
      "exports.implementation = { check: async (olds, news) => ({ inputs: { ...news, servedBy: __filename }, failures: [] }) };\n",
  );
}

/**
 * Revives the text as the provider host does (cmd/dynamic-provider: require-from-string, no file
 * name) in a fresh Node process with this working directory, calls `check` twice (deleting the
 * stub in between, so the second call proves nothing is resolved again) and returns what it saw.
 */
function reviveAndCheck(workingDirectory: string, environment: Record<string, string>): { servedBy?: string; loads?: number; error?: string } {
  const textFile = path.join(scratch, "provider.js.txt");
  fs.writeFileSync(textFile, text);
  const script = `
    const { createRequire } = require("node:module");
    const requireFromString = createRequire(require.resolve("@pulumi/pulumi", { paths: [process.argv[1]] }))("require-from-string");
    (async () => {
      try {
        const provider = requireFromString(require("node:fs").readFileSync(process.argv[2], "utf8")).handler();
        const first = await provider.check({}, { clusterResourceId: "x" });
        require("node:fs").rmSync(first.inputs.servedBy);
        const second = await provider.check({}, { clusterResourceId: "x" });
        console.log(JSON.stringify({ servedBy: second.inputs.servedBy, loads: globalThis.stubLoads }));
      } catch (error) {
        console.log(JSON.stringify({ error: error.message }));
      }
    })();`;
  const environmentWithout = { ...process.env };
  delete environmentWithout.ARO_HCP_PROJECT_DIR;
  const result = spawnSync(process.execPath, ["-e", script, projectDirectory, textFile], {
    cwd: workingDirectory,
    env: { ...environmentWithout, ...environment },
    encoding: "utf8",
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split("\n").pop() ?? "{}") as { servedBy?: string; loads?: number; error?: string };
}

describe("the serialized provider", () => {
  it("is a module exporting a handler, under its size budget", () => {
    expect(text.startsWith("exports.handler=()=>{")).toBe(true);
    expect(text.length).toBeLessThan(maxProviderTextCharacters);
  });

  it("requires the implementation by package path and carries none of it", () => {
    expect(text).toContain(`"${implementationSpecifier}"`);
    expect(text).not.toContain('require("@azure/');
    expect(text).not.toContain("CosmosClient");
  });

  it("is what the resource registers as its __provider input", async () => {
    const registered: Record<string, unknown>[] = [];
    await pulumi.runtime.setMocks({
      newResource: (resource) => {
        registered.push(resource.inputs as Record<string, unknown>);
        return { id: `${resource.name}-id`, state: resource.inputs as Record<string, unknown> };
      },
      call: (call) => call.inputs as Record<string, unknown>,
    });
    const resource = new ServiceProviderClusterIdentityStatus("mocked", { clusterResourceId: "/subscriptions/x" });
    await new Promise((resolve) => resource.id.apply(resolve));
    expect(registered.map((inputs) => inputs.__provider)).toEqual([text]);
  });

  it("carries no secret, environment value or path of this machine", () => {
    for (const value of Object.values(planted)) expect(text).not.toContain(value);
    expect(text).not.toContain(projectDirectory);
    expect(text).not.toContain(os.homedir());
  });

  it("finds the package in the program's node_modules", () => {
    const program = path.join(scratch, "consumer");
    installStubPackage(path.join(program, "node_modules", "aro-hcp-identity-status"));
    fs.writeFileSync(path.join(program, "package.json"), JSON.stringify({ name: "consumer" }));
    const seen = reviveAndCheck(program, {});
    expect(seen).toEqual({
      servedBy: path.join(program, "node_modules", "aro-hcp-identity-status", "dist", "resources", "providerEntry.js"),
      loads: 1,
    });
  });

  it("finds the package itself from a directory inside a checkout of it (self-reference)", () => {
    const checkout = path.join(scratch, "checkout");
    installStubPackage(checkout);
    const workDirectory = path.join(checkout, ".pulumi", "test-stack", "work");
    fs.mkdirSync(workDirectory, { recursive: true });
    expect(reviveAndCheck(workDirectory, {})).toEqual({ servedBy: path.join(checkout, "dist", "resources", "providerEntry.js"), loads: 1 });
  });

  it("finds the checkout ARO_HCP_PROJECT_DIR names, from any directory", () => {
    const checkout = path.join(scratch, "named-checkout");
    installStubPackage(checkout);
    const elsewhere = fs.mkdtempSync(path.join(scratch, "elsewhere-"));
    expect(reviveAndCheck(elsewhere, { ARO_HCP_PROJECT_DIR: checkout })).toEqual({
      servedBy: path.join(checkout, "dist", "resources", "providerEntry.js"),
      loads: 1,
    });
  });

  it("fails with a message naming what it looked for and what to do", () => {
    const nowhere = fs.mkdtempSync(path.join(scratch, "nowhere-"));
    const missing = path.join(scratch, "missing-checkout");
    const { error } = reviveAndCheck(nowhere, { ARO_HCP_PROJECT_DIR: missing });
    expect(error).toBe(`${implementationSpecifier} not found: npm install it in the program, or set ARO_HCP_PROJECT_DIR`);
  });
});
