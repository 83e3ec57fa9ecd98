/**
 * The provider text Pulumi stores in every resource's state (`__provider`, in inputs and outputs):
 * the loader of providerLoader.ts, serialized by the SDK's closure serializer. It must stay small,
 * carry no secret, environment value or machine path, and, revived the way the provider host
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
import { implementationSpecifier, managedIdentityStatusProvider } from "../../../resources/provider/providerLoader";

/** Measured with @pulumi/pulumi 3.248: 3,050 characters (the previous loader: 4,590). */
const maxProviderTextCharacters = 3_200;

const planted: Record<string, string> = {
  COSMOS_KEY: "c2VyaWFsaXphdGlvbi1jYW5hcnkta2V5LTdmM2E5Yg==",
  ARO_HCP_COSMOS_ENDPOINT: "https://canary-cosmos-endpoint-5d1e.example.com",
  ARO_HCP_MANAGED_IDENTITY_CLIENT_ID: "9b7d4c1e-0000-4000-8000-5e7ea1c0ffee",
};

const projectDirectory = path.resolve(__dirname, "..", "..", "..");
let text: string;
let containsSecrets: boolean;
let scratch: string;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const [key, value] of Object.entries(planted)) {
    saved[key] = process.env[key];
    process.env[key] = value;
  }
  // A local binding, as dynamic.Resource captures it (`() => provider`).
  const provider = managedIdentityStatusProvider;
  ({ text, containsSecrets } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true }));
  // eslint-disable-next-line no-console
  console.info(`serialized provider: ${text.length} characters`);
  scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "provider-loader-")));
}, 120_000);

afterAll(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true });
});

/** A package named aro-hcp-identity-status at `directory` whose implementation reports its own file. */
function installStubPackage(directory: string): void {
  const implementation = path.join(directory, "dist", "resources", "managedIdentityStatusProvider.js");
  fs.mkdirSync(path.dirname(implementation), { recursive: true });
  const manifest = { name: "aro-hcp-identity-status", exports: { "./dist/resources/*": "./dist/resources/*" } };
  fs.writeFileSync(path.join(directory, "package.json"), JSON.stringify(manifest));
  fs.writeFileSync(
    implementation,
    "globalThis.stubLoads = (globalThis.stubLoads ?? 0) + 1;\n" +
      "exports.managedIdentityStatusImplementation = { check: async (olds, news) => ({ inputs: { ...news, servedBy: __filename }, failures: [] }) };\n",
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
    const provider = requireFromString(require("node:fs").readFileSync(process.argv[2], "utf8")).handler();
    (async () => {
      try {
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
  const result = spawnSync(process.execPath, ["-e", script, projectDirectory, textFile], { cwd: workingDirectory, env: { ...environmentWithout, ...environment }, encoding: "utf8" });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split("\n").pop() ?? "{}") as { servedBy?: string; loads?: number; error?: string };
}

describe("the serialized provider", () => {
  it("is a handler returning the loader, under its size budget", () => {
    expect(text.startsWith("exports.handler = ")).toBe(true);
    expect(text.length).toBeLessThan(maxProviderTextCharacters);
  });

  it("requires the implementation by package path and carries none of it", () => {
    expect(text).toContain(`"${implementationSpecifier}"`);
    expect(text).not.toContain("require(\"@azure/");
    expect(text).not.toContain("CosmosClient");
  });

  it("carries no secret, environment value or path of this machine", () => {
    expect(containsSecrets).toBe(false);
    for (const value of Object.values(planted)) expect(text).not.toContain(value);
    expect(text).not.toContain(projectDirectory);
    expect(text).not.toContain(os.homedir());
  });

  it("finds the package in the program's node_modules", () => {
    const program = path.join(scratch, "consumer");
    installStubPackage(path.join(program, "node_modules", "aro-hcp-identity-status"));
    fs.writeFileSync(path.join(program, "package.json"), JSON.stringify({ name: "consumer" }));
    const seen = reviveAndCheck(program, {});
    expect(seen).toEqual({ servedBy: path.join(program, "node_modules", "aro-hcp-identity-status", "dist", "resources", "managedIdentityStatusProvider.js"), loads: 1 });
  });

  it("finds the package itself from a directory inside a checkout of it (self-reference)", () => {
    const checkout = path.join(scratch, "checkout");
    installStubPackage(checkout);
    const workDirectory = path.join(checkout, ".pulumi", "test-stack", "work");
    fs.mkdirSync(workDirectory, { recursive: true });
    expect(reviveAndCheck(workDirectory, {})).toEqual({ servedBy: path.join(checkout, "dist", "resources", "managedIdentityStatusProvider.js"), loads: 1 });
  });

  it("finds the checkout ARO_HCP_PROJECT_DIR names, from any directory", () => {
    const checkout = path.join(scratch, "named-checkout");
    installStubPackage(checkout);
    const elsewhere = fs.mkdtempSync(path.join(scratch, "elsewhere-"));
    expect(reviveAndCheck(elsewhere, { ARO_HCP_PROJECT_DIR: checkout })).toEqual({ servedBy: path.join(checkout, "dist", "resources", "managedIdentityStatusProvider.js"), loads: 1 });
  });

  it("fails with a message naming where it looked and what to do", () => {
    const nowhere = fs.mkdtempSync(path.join(scratch, "nowhere-"));
    const missing = path.join(scratch, "missing-checkout");
    const { error } = reviveAndCheck(nowhere, { ARO_HCP_PROJECT_DIR: missing });
    expect(error).toBe(
      `cannot find ${implementationSpecifier} from ${missing} or ${nowhere}: npm install it in the program, or set ARO_HCP_PROJECT_DIR to a built checkout`,
    );
  });
});
