/**
 * Guards the serialization-safe layout (conventions.md §3.1).
 *
 * Two objects are serialized:
 * - the PRODUCTION provider, the small loader from providerLoader.ts that every resource carries
 *   in `__provider` and that requires the installed implementation inside the provider host;
 * - the implementation itself (managedIdentityStatusProvider.ts), which must stay serializable
 *   whole (SDKs required inside functions, nothing captured from the environment).
 *
 * Each must serialize under vitest, stay under a size budget, capture no secrets or environment
 * values, and revive the way the Pulumi host revives it (a fresh Module compiled from the text, as
 * require-from-string does) with every method present and `check` working.
 *
 * The closures capture a LOCAL binding, as dynamic.Resource does (`() => provider`). Under vitest an
 * imported binding is rewritten to `__vite_ssr_import_N__.name`; a closure over it still serializes,
 * but drags vite's namespace shim (an object with getters) into the text, about 600 characters more
 * than the engine would ever store.
 */
import * as fs from "node:fs";
import * as nodeModule from "node:module";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managedIdentityStatusImplementation } from "../../../resources/provider/managedIdentityStatusProvider";
import { implementationPath, managedIdentityStatusProvider } from "../../../resources/provider/providerLoader";
import { clusterResourceIdFor, identityResourceId } from "../../fixtures/documents";

/**
 * Measured under vitest 4.1 with @pulumi/pulumi 3.248: loader 4,143 characters, implementation
 * 115,885 characters (the implementation is no longer what the engine stores). Budgets are ~1.5×.
 */
const loaderBudgetInCharacters = 6_200;
const implementationBudgetInCharacters = 175_000;

const methods = ["check", "diff", "create", "update", "read", "delete", "configure"] as const;

const planted: Record<string, string> = {
  COSMOS_KEY: "c2VyaWFsaXphdGlvbi1jYW5hcnkta2V5LTdmM2E5Yg==",
  ARO_HCP_COSMOS_ENDPOINT: "https://canary-cosmos-endpoint-5d1e.example.com",
  ARO_HCP_COSMOS_DATABASE: "canary-database-8c2f",
  ARO_HCP_MANAGED_IDENTITY_CLIENT_ID: "9b7d4c1e-0000-4000-8000-5e7ea1c0ffee",
};

interface Serialized {
  readonly text: string;
  readonly exportName: string;
  readonly containsSecrets: boolean;
}

let loader: Serialized;
let implementation: Serialized;
let scratchDirectory: string;
const savedEnvironment: Record<string, string | undefined> = {};

function setEnvironment(key: string, value: string): void {
  if (!(key in savedEnvironment)) savedEnvironment[key] = process.env[key];
  process.env[key] = value;
}

beforeAll(async () => {
  for (const [key, value] of Object.entries(planted)) setEnvironment(key, value);
  const loaderProvider = managedIdentityStatusProvider;
  loader = await pulumi.runtime.serializeFunction(() => loaderProvider, { allowSecrets: true });
  const implementationProvider = managedIdentityStatusImplementation;
  implementation = await pulumi.runtime.serializeFunction(() => implementationProvider, { allowSecrets: true });
  console.info(`serialized sizes: loader ${loader.text.length} characters, implementation ${implementation.text.length} characters`);
  fs.mkdirSync(path.join(process.cwd(), "node_modules", ".cache"), { recursive: true });
  scratchDirectory = fs.mkdtempSync(path.join(process.cwd(), "node_modules", ".cache", "provider-serialization-"));
}, 120_000);

afterAll(() => {
  for (const [key, value] of Object.entries(savedEnvironment)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  if (scratchDirectory !== undefined) fs.rmSync(scratchDirectory, { recursive: true, force: true });
});

/**
 * Loads module text the way the host's require-from-string does: `new Module(filename)` with the
 * node_modules paths of a file inside the project, then `_compile(text, filename)`. Node's real
 * Module class is taken from `node:module`: under vitest the `module` global is vite's stand-in,
 * so `module.constructor` is not the CommonJS Module.
 */
function loadAsHostDoes(text: string): { handler: () => pulumi.dynamic.ResourceProvider } {
  const ModuleClass = nodeModule.Module as unknown as {
    new (id: string): { _compile(code: string, filename: string): void; paths: string[]; filename: string; exports: unknown };
    _nodeModulePaths(directory: string): string[];
  };
  const filename = path.join(process.cwd(), "__serializedProvider.js");
  const revived = new ModuleClass(filename);
  revived.filename = filename;
  revived.paths = ModuleClass._nodeModulePaths(path.dirname(filename));
  revived._compile(text, filename);
  return revived.exports as { handler: () => pulumi.dynamic.ResourceProvider };
}

const cluster = clusterResourceIdFor();
const identity = identityResourceId("identity-a");

async function expectCheckWorks(provider: pulumi.dynamic.ResourceProvider): Promise<void> {
  const result = await provider.check?.(
    {},
    { clusterResourceId: cluster.replace("/resourceGroups/", "/resourcegroups/"), dataPlaneOperators: { b: identity, a: identity } },
  );
  expect(result).toEqual({ inputs: { clusterResourceId: cluster, dataPlaneOperators: { a: identity, b: identity } }, failures: [] });
  const failing = await provider.check?.({}, { clusterResourceId: "nope" });
  expect(failing?.failures).toEqual([{ property: "clusterResourceId", reason: "must start with '/subscriptions/'" }]);
}

async function expectConfigureFeedsSettings(provider: pulumi.dynamic.ResourceProvider): Promise<void> {
  const values: Record<string, string> = { cosmosEndpoint: "http://not-https.example.com", cosmosDatabase: "db" };
  // Like the host's Config: full keys `<namespace>:<key>`; the provider reads its own namespace.
  const get = (key: string): string | undefined => values[key.replace(/^aro-hcp-identity-status:/, "")];
  await provider.configure?.({ config: { get, require: get } } as pulumi.dynamic.ConfigureRequest);
  const error = (await provider.create({ clusterResourceId: cluster, dataPlaneOperators: {} }).catch((caught: unknown) => caught)) as Error;
  // The engine shows `error.message`: it must survive the class-to-function rewrite of the serializer.
  expect(error).toBeInstanceOf(Error);
  expect(error.name).toBe("SettingsError");
  expect(error.message).toMatch(/cosmosEndpoint.*must use https:\/\//);
  expect(typeof error.stack).toBe("string");
}

describe.each([
  ["the production provider (loader)", () => loader, () => loaderBudgetInCharacters],
  ["the implementation", () => implementation, () => implementationBudgetInCharacters],
])("serializing %s", (_title, serialized, budget) => {
  it("succeeds and exports a handler", () => {
    expect(serialized().exportName).toBe("handler");
    expect(serialized().text.startsWith("exports.handler = ")).toBe(true);
  });

  it("stays under its size budget", () => {
    expect(serialized().text.length).toBeLessThan(budget());
  });

  it("reports no captured secrets", () => {
    expect(serialized().containsSecrets).toBe(false);
  });

  it("contains none of the environment values set before serializing", () => {
    for (const value of Object.values(planted)) expect(serialized().text).not.toContain(value);
  });

  it("carries no SDK code, only require calls by package name", () => {
    expect(serialized().text).not.toMatch(/node_modules[\\/]@azure/);
    expect(serialized().text).not.toContain("CosmosClient.prototype");
  });
});

describe("the serialized implementation", () => {
  it("loads every Azure SDK through a require call by package name", () => {
    for (const sdk of ["@azure/cosmos", "@azure/arm-msi", "@azure/identity"]) expect(implementation.text).toContain(`require("${sdk}")`);
  });

  it("revives as the host does with every method, and check works", async () => {
    const provider = loadAsHostDoes(implementation.text).handler();
    for (const method of methods) expect(typeof provider[method]).toBe("function");
    await expectCheckWorks(provider);
  });

  it("revives with configure feeding the settings used by later calls", async () => {
    await expectConfigureFeedsSettings(loadAsHostDoes(implementation.text).handler());
  });
});

describe("the serialized production provider (loader)", () => {
  it("refers to the implementation only by path, never by content", () => {
    expect(loader.text).toContain(implementationPath);
    expect(loader.text).not.toContain('require("@azure/');
  });

  describe("revived as the host does, with ARO_HCP_PROJECT_DIR pointing at an installed implementation", () => {
    let provider: pulumi.dynamic.ResourceProvider;

    beforeAll(() => {
      // Install the serialized implementation where the loader looks first, so the test does not
      // depend on whether `npm run build` has refreshed dist/.
      const file = path.join(scratchDirectory, implementationPath);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${implementation.text}\nexports.managedIdentityStatusImplementation = exports.handler();\n`);
      setEnvironment("ARO_HCP_PROJECT_DIR", scratchDirectory);
      provider = loadAsHostDoes(loader.text).handler();
    });

    it("has every provider method", () => {
      for (const method of methods) expect(typeof provider[method]).toBe("function");
    });

    it("forwards check to the implementation", async () => {
      await expectCheckWorks(provider);
    });

    it("forwards configure, so stack config reaches the implementation", async () => {
      await expectConfigureFeedsSettings(provider);
    });
  });
});
