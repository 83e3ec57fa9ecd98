/**
 * Issue 11 item 3: the project as an npm package that someone else's Pulumi program installs.
 *
 * `npm pack` of the built project, installed into a fresh program directory under the system's
 * temporary directory (outside the repository, so no checkout is found by walking up). The program
 * is the consumer quick start of docs/using-the-package.md, its Pulumi.yaml, tsconfig.json, index.ts and index.test.ts
 * taken out of that page itself, so the two cannot drift; the page's `npx` commands type-check it
 * and run its mocked unit test (vitest, `identityStatusMockState`), and `index.ts` also compiles
 * with the Pulumi TypeScript template's settings alone (ES2020, strict, no skipLibCheck). It then
 * goes through `up`, `refresh` and `destroy` of the real engine against the sandbox with no
 * ARO_HCP_PROJECT_DIR anywhere: the provider host must find the implementation in the program's
 * own node_modules. Cosmos and the program's exports are read back after each.
 *
 * Issue 27 items 1 and 2: the program depends on another @pulumi/pulumi 3.x than the project's own
 * pin, the oldest the package's peer range admits, and npm installs one copy of the SDK for both;
 * the package's exports map resolves the documented entry points and refuses every other path.
 *
 * Reproduces: "cannot load the ServiceProviderClusterIdentityStatus provider … not found" without
 * ARO_HCP_PROJECT_DIR, TS2305/TS7016 on import, and `new Error(message, { cause })` under ES2020.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DataPlaneOperatorsManagedIdentities } from "../../resources/core/serviceProviderClusterDocument";
import { ownedStatusOf, readServiceProviderCluster } from "../fixtures/storedDocument";
import type * as automation from "@pulumi/pulumi/automation";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet } from "../../sandbox/seed";
import projectManifest from "../../package.json";
import { engineModule, literalCliEnvironment, outputCollector, runLiteralPulumi } from "./engineHelpers";
import { ancestorsOf, readSpanFile } from "./otlpSpans";

const projectDirectory = resolve(__dirname, "..", "..");
const projectRequire = createRequire(join(projectDirectory, "package.json"));
/** The oldest @pulumi/pulumi the package's peer range admits: what the consumer program installs. */
const consumerPulumiVersion = /^\^(\d+\.\d+\.\d+)$/.exec(projectManifest.peerDependencies["@pulumi/pulumi"])?.[1] ?? "";
/** The entry points package.json exports, each with the file it resolves to in the installed package. */
const exportedEntryPoints: Readonly<Record<string, string>> = {
  "aro-hcp-identity-status": "dist/resources/index.js",
  "aro-hcp-identity-status/provider": "dist/resources/providerEntry.js",
  "aro-hcp-identity-status/package.json": "package.json",
};
/** The runtime exports of `aro-hcp-identity-status`: the documented surface (docs/using-the-package.md). */
const documentedExports = [
  "ServiceProviderClusterIdentityStatus",
  "identityStatusMockState",
  "quietSdkRegistrationDebugLogs",
  "registerWithoutStackTraces",
  "resourceTypeToken",
];

/** The files of the consumer quick start (docs/using-the-package.md): each fenced block right under a line naming its file. */
const quickStartFileNames = ["Pulumi.yaml", "tsconfig.json", "index.ts", "index.test.ts"];

/**
 * The consumer quick start (docs/using-the-package.md): its files, the major versions of the development tools its
 * `npm install --save-dev` line names, and the `npx` commands it runs in the program's directory.
 */
function readmeQuickStart(): {
  readonly files: ReadonlyMap<string, string>;
  readonly devDependencyMajors: ReadonlyMap<string, string>;
  readonly commands: readonly string[];
} {
  const readme = readFileSync(join(projectDirectory, "docs", "using-the-package.md"), "utf8");
  const section = /^### Quick start: a program of your own\n([\s\S]*?)(?=^#{2,3} )/m.exec(readme)?.[1] ?? "";
  const files = new Map<string, string>();
  for (const match of section.matchAll(/^`([\w.-]+)`:\n\n```\w*\n([\s\S]*?)^```$/gm)) {
    files.set(match[1], match[2]);
  }
  const devDependencies = /^npm install --save-dev (.+)$/m.exec(section)?.[1].split(/\s+/) ?? [];
  const devDependencyMajors = new Map(devDependencies.map((specification) => [specification.replace(/@\d+$/, ""), /@(\d+)$/.exec(specification)?.[1] ?? ""]));
  const commands = [...section.matchAll(/^(npx [^#\n]*?)\s*(?:#.*)?$/gm)].map((match) => match[1]);
  return { files, devDependencyMajors, commands };
}

const quickStart = readmeQuickStart();
/** The quick start's project name, the namespace of its `clusters` config. */
const consumerProject = /^name: (\S+)$/m.exec(quickStart.files.get("Pulumi.yaml") ?? "")?.[1] ?? "";

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let consumerDirectory: string;

function run(command: string, args: readonly string[], directory: string): string {
  const result = spawnSync(command, args, { cwd: directory, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} in ${directory} exited ${String(result.status)}:\n${output}`);
  }
  return output;
}

beforeAll(async () => {
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-installed-package-")));
  // The CA beside the program too, so nothing the stack records points into the repository.
  // Production's credential mode: each cluster read as its own service managed identity, through the data plane.
  sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca"), perClusterCredentials: true });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 2 });

  // The e2e command builds first (`npm run build`); prepack would build again, so it is skipped here.
  expect(existsSync(join(projectDirectory, "dist", "resources", "index.d.ts")), "run `npm run build` first").toBe(true);
  const packDirectory = join(scratchDirectory, "pack");
  mkdirSync(packDirectory);
  execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", packDirectory], { cwd: projectDirectory, stdio: "pipe" });
  const tarball = readdirSync(packDirectory).find((file) => file.endsWith(".tgz"));
  expect(tarball).toBeDefined();

  consumerDirectory = join(scratchDirectory, "program");
  mkdirSync(consumerDirectory);
  expect([...quickStart.files.keys()], "the quick start names its files").toEqual(quickStartFileNames);
  expect(consumerProject).not.toBe("");
  for (const [file, text] of quickStart.files) {
    writeFileSync(join(consumerDirectory, file), text);
  }
  expect(consumerPulumiVersion, "the consumer's SDK differs from the project's own").not.toBe(projectManifest.devDependencies["@pulumi/pulumi"]);
  // What the quick start's `npm install` lines install: the development tools at the project's own
  // versions (the npm cache holds them), each of the major version the page names.
  const devDependencies = Object.fromEntries(
    [...quickStart.devDependencyMajors].map(([name]) => [name, projectManifest.devDependencies[name as keyof typeof projectManifest.devDependencies]]),
  );
  expect(Object.keys(devDependencies)).toEqual(["typescript", "vitest", "@types/node"]);
  for (const [name, major] of quickStart.devDependencyMajors) {
    expect(devDependencies[name], `the quick start's ${name}@${major}`).toMatch(new RegExp(`^${major}\\.`));
  }
  const consumerManifest = {
    name: consumerProject,
    private: true,
    dependencies: {
      "aro-hcp-identity-status": `file:${join(packDirectory, tarball ?? "")}`,
      "@pulumi/pulumi": consumerPulumiVersion,
    },
    devDependencies,
    overrides: projectManifest.overrides,
  };
  writeFileSync(join(consumerDirectory, "package.json"), `${JSON.stringify(consumerManifest, null, 2)}\n`);
  // From the npm cache when it has them; the registry for what is missing (the consumer's SDK, and
  // the newest Azure SDKs the package's caret ranges admit).
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], consumerDirectory);
  console.log(run("npm", ["ls", "@pulumi/pulumi", "@azure/arm-msi", "@azure/cosmos", "@azure/identity", "@azure/logger"], consumerDirectory));
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
  if (scratchDirectory !== undefined) {
    rmSync(scratchDirectory, { recursive: true, force: true });
  }
});

async function persistedIdentities(cluster: FleetClusterDescription): Promise<DataPlaneOperatorsManagedIdentities["identities"] | undefined> {
  const document = await readServiceProviderCluster(sandbox.cosmosContainer, cluster.serviceProviderClusterDocumentId, cluster.partitionKey);
  return (document === undefined ? undefined : ownedStatusOf(document))?.identities;
}

async function expectRecorded(cluster: FleetClusterDescription): Promise<void> {
  const identities = (await persistedIdentities(cluster)) ?? {};
  for (const identityId of Object.values(cluster.dataPlaneOperators)) {
    const expected = sandbox.identities.get(identityId);
    expect(expected?.clientId).toBeTruthy();
    expect(identities[identityId.toLowerCase()], identityId).toMatchObject({ clientId: expected?.clientId, principalId: expected?.principalId });
  }
}

/** `npm ls --json`'s tree, as far as {@link sdkVersions} reads it. */
interface NpmTree {
  readonly version?: string;
  readonly dependencies?: Readonly<Record<string, NpmTree>>;
}

/** The version of every @pulumi/pulumi listed in the tree, the program's and each dependent's. */
function sdkVersions(tree: NpmTree): (string | undefined)[] {
  return Object.entries(tree.dependencies ?? {}).flatMap(([name, child]) => [...(name === "@pulumi/pulumi" ? [child.version] : []), ...sdkVersions(child)]);
}

/**
 * `index.ts` alone under the Pulumi TypeScript template's settings: the quick start's tsconfig.json
 * without the test and without `skipLibCheck` (which only vitest's declarations need). Emits
 * bin/index.js, the module the Automation API runs.
 */
function compileConsumer(): string {
  const tsconfig = JSON.parse(quickStart.files.get("tsconfig.json") ?? "") as { compilerOptions: Record<string, unknown> };
  const { skipLibCheck: _skipLibCheck, ...compilerOptions } = tsconfig.compilerOptions;
  writeFileSync(join(consumerDirectory, "tsconfig.template.json"), JSON.stringify({ compilerOptions, files: ["index.ts"] }));
  return run("npx", ["tsc", "-p", "tsconfig.template.json"], consumerDirectory);
}

/** The quick start's clusters config for the seeded fleet. */
function clustersConfig(): string {
  return JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators })));
}

/** The quick start's `clientIds` output for the seeded fleet: each operator's client ID, by cluster name. */
function expectedClientIds(): Record<string, Record<string, string | undefined>> {
  return Object.fromEntries(
    fleet.map((cluster): [string, Record<string, string | undefined>] => [
      cluster.clusterResourceId.split("/").pop() ?? "",
      Object.fromEntries(Object.entries(cluster.dataPlaneOperators).map(([operator, identityId]) => [operator, sandbox.identities.get(identityId)?.clientId])),
    ]),
  );
}

describe("the packed package installed into a separate program", () => {
  it("installs only the library: declarations and the provider entry the loader requires", () => {
    const installed = join(consumerDirectory, "node_modules", "aro-hcp-identity-status");
    for (const file of ["dist/resources/index.js", "dist/resources/index.d.ts", "dist/resources/providerEntry.js", "package.json"]) {
      expect(existsSync(join(installed, file)), file).toBe(true);
    }
    for (const absent of ["dist/sandbox", "dist/bench", "dist/cli", "dist/index.js", "resources", "test"]) {
      expect(existsSync(join(installed, absent)), absent).toBe(false);
    }
    // Sandbox-only packages are not runtime dependencies any more.
    expect(existsSync(join(consumerDirectory, "node_modules", "@vercel", "cosmosdb-server"))).toBe(false);
    expect(existsSync(join(consumerDirectory, "node_modules", "selfsigned"))).toBe(false);
  });

  it("shares the program's @pulumi/pulumi, another 3.x than the project's: one copy, deduped", () => {
    // npm's own account: every @pulumi/pulumi in the tree is the program's version, in one directory,
    // and the package's is listed as deduped.
    const tree = JSON.parse(run("npm", ["ls", "@pulumi/pulumi", "--all", "--json"], consumerDirectory)) as NpmTree;
    expect(sdkVersions(tree)).toEqual([consumerPulumiVersion, consumerPulumiVersion]);
    const directories = run("npm", ["ls", "@pulumi/pulumi", "--all", "--parseable"], consumerDirectory).trim().split("\n");
    expect(directories).toEqual([join(consumerDirectory, "node_modules", "@pulumi", "pulumi")]);
    const listing = run("npm", ["ls", "@pulumi/pulumi", "--all"], consumerDirectory);
    console.log(listing);
    expect(listing).toMatch(new RegExp(`aro-hcp-identity-status@\\S+\\n\\s+└── @pulumi/pulumi@${consumerPulumiVersion.replaceAll(".", "\\.")} deduped`));
    // So the package and the program load the same module, and its resources register with the program's runtime.
    const consumerRequire = createRequire(join(consumerDirectory, "package.json"));
    const fromPackage = createRequire(consumerRequire.resolve("aro-hcp-identity-status"));
    expect(fromPackage.resolve("@pulumi/pulumi")).toBe(consumerRequire.resolve("@pulumi/pulumi"));
  });

  it("exports the documented entry points only: the resource's module, the provider host's entry and package.json", () => {
    const installed = join(consumerDirectory, "node_modules", "aro-hcp-identity-status");
    const consumerRequire = createRequire(join(consumerDirectory, "package.json"));
    const manifest = consumerRequire("aro-hcp-identity-status/package.json") as { exports: Record<string, unknown> };
    expect(Object.keys(manifest.exports)).toEqual([".", "./provider", "./package.json"]);
    for (const [specifier, file] of Object.entries(exportedEntryPoints)) {
      expect(consumerRequire.resolve(specifier), specifier).toBe(join(installed, file));
    }
    // Every other path is refused, as Node refuses it, the path earlier loaders required included.
    for (const internal of [
      "aro-hcp-identity-status/dist/resources/providerEntry.js",
      "aro-hcp-identity-status/dist/resources/index.js",
      "aro-hcp-identity-status/dist/resources/provider/managedIdentityStatusProvider.js",
      "aro-hcp-identity-status/dist/resources/core/settings",
      "aro-hcp-identity-status/provider/managedIdentityStatusProvider",
    ]) {
      expect(() => consumerRequire.resolve(internal), internal).toThrow(expect.objectContaining({ code: "ERR_PACKAGE_PATH_NOT_EXPORTED" }));
    }
    // What each entry holds: the documented surface, and the implementation the provider text requires.
    expect(Object.keys(consumerRequire("aro-hcp-identity-status") as object).sort()).toEqual(documentedExports);
    expect(Object.keys(consumerRequire("aro-hcp-identity-status/provider") as object)).toEqual(["implementation"]);
  });

  it("type-checks the quick start of docs/using-the-package.md and runs its mocked unit test with its own commands (tsc, vitest, setMocks)", () => {
    expect(quickStart.commands.filter((command) => /^npx (tsc|vitest) /.test(command)).length, quickStart.commands.join("; ")).toBe(2);
    for (const command of quickStart.commands) {
      const [program, ...args] = command.split(/\s+/);
      // eslint-disable-next-line no-control-regex
      const output = run(program, args, consumerDirectory).replace(/\u001b\[[0-9;]*m/g, "");
      if (args[0] === "vitest") {
        console.log(output);
        expect(output).toMatch(/Tests\s+1 passed \(1\)/);
        expect(output).toContain("index.test.ts");
      }
    }
  }, 180_000);

  it('compiles `import { ServiceProviderClusterIdentityStatus } from "aro-hcp-identity-status"` with the template\'s settings alone (ES2020, strict, no skipLibCheck)', () => {
    compileConsumer();
    expect(existsSync(join(consumerDirectory, "bin", "index.js"))).toBe(true);
  }, 180_000);

  it("goes through up, refresh and destroy of the real engine with no ARO_HCP_PROJECT_DIR, Cosmos read back after each", async () => {
    if (!existsSync(join(consumerDirectory, "bin", "index.js"))) {
      compileConsumer();
    }
    // Everything Pulumi comes from the program's own node_modules, as in the user's program.
    const consumerRequire = createRequire(join(consumerDirectory, "package.json"));
    const consumerAutomation = consumerRequire("@pulumi/pulumi/automation") as typeof automation;
    // The inline program runs the module's top level inside the engine's context, as the Node.js
    // language host does, and returns its exports as the stack outputs. It lives in the program's
    // directory, so the resources' recorded stack traces do not point into this repository.
    writeFileSync(join(consumerDirectory, "inline.js"), 'module.exports = async () => require("./bin/index.js");\n');
    const program = consumerRequire("./inline.js") as automation.PulumiFn;

    const engine = engineModule();
    const { settingsForRunningSandbox } = projectRequire(
      join(projectDirectory, "dist", "cli", "sandboxSettings.js"),
    ) as typeof import("../../cli/sandboxSettings");
    const { config, environment } = settingsForRunningSandbox(sandbox);
    const command = await engine.engineCommand();
    const paths = { state: join(scratchDirectory, "state"), home: join(scratchDirectory, "home") };
    mkdirSync(paths.state);
    mkdirSync(paths.home);
    const envVars = engine.engineEnvironment({
      PULUMI_BACKEND_URL: `file://${paths.state}`,
      PULUMI_HOME: paths.home,
      PULUMI_CONFIG_PASSPHRASE: engine.sandboxPassphrase,
      ...environment,
    });
    delete envVars.ARO_HCP_PROJECT_DIR;
    const inherited = process.env.ARO_HCP_PROJECT_DIR;
    delete process.env.ARO_HCP_PROJECT_DIR;
    try {
      const stack = await consumerAutomation.LocalWorkspace.createOrSelectStack(
        { stackName: "installed", projectName: consumerProject, program },
        { workDir: consumerDirectory, pulumiHome: paths.home, pulumiCommand: await consumerAutomation.PulumiCommand.get({ root: command.root }), envVars },
      );
      await stack.setAllConfig({
        ...Object.fromEntries(Object.entries(config).map(([key, value]) => [`aro-hcp-identity-status:${key}`, { value }])),
        "aro-hcp-identity-status:documentWaitSeconds": { value: "2" },
        [`${consumerProject}:clusters`]: { value: clustersConfig() },
      });

      const up = outputCollector();
      const upResult = await stack.up({ onOutput: up.onOutput });
      expect(upResult.summary.result, up.text()).toBe("succeeded");
      for (const cluster of fleet) {
        await expectRecorded(cluster);
      }
      // The quick start's outputs: the `status` output as the object, read through the real engine.
      expect(upResult.outputs.clientIds?.value).toEqual(expectedClientIds());
      expect(Object.values(upResult.outputs.failedCounts?.value as Record<string, number>)).toEqual(fleet.map(() => 0));
      const deployment = JSON.stringify((await stack.exportStack()).deployment);
      // The serialized provider requires the installed package instead of carrying its code.
      expect(deployment.includes('\\"aro-hcp-identity-status/provider\\"'), "the provider requires the package by path").toBe(true);
      expect(deployment.includes(projectDirectory), "state names the repository").toBe(false);
      console.log(
        `installed-package state: ${deployment.length} bytes for ${fleet.length} clusters (${Math.round(deployment.length / fleet.length)} per cluster)`,
      );

      const refresh = outputCollector();
      const refreshResult = await stack.refresh({ onOutput: refresh.onOutput });
      expect(refreshResult.summary.result, refresh.text()).toBe("succeeded");
      for (const cluster of fleet) {
        await expectRecorded(cluster);
      }

      // A delete relinquishes: the status stays in Cosmos as the stack recorded it.
      const destroy = outputCollector();
      const destroyResult = await stack.destroy({ onOutput: destroy.onOutput });
      expect(destroyResult.summary.result, destroy.text()).toBe("succeeded");
      for (const cluster of fleet) {
        await expectRecorded(cluster);
      }
    } finally {
      if (inherited !== undefined) {
        process.env.ARO_HCP_PROJECT_DIR = inherited;
      }
    }
  }, 600_000);

  it("goes through the literal `pulumi up` and `destroy` in the program's directory (Node.js language host, its index.ts)", async () => {
    const command = await engineModule().engineCommand();
    const { settingsForRunningSandbox } = projectRequire(
      join(projectDirectory, "dist", "cli", "sandboxSettings.js"),
    ) as typeof import("../../cli/sandboxSettings");
    const { config, environment } = settingsForRunningSandbox(sandbox);
    const paths = { state: join(scratchDirectory, "literal-state"), home: join(scratchDirectory, "literal-home") };
    mkdirSync(paths.state);
    mkdirSync(paths.home);
    const records = join(scratchDirectory, "consumer-run-records.jsonl");
    const shell = literalCliEnvironment(command.root, {
      PULUMI_BACKEND_URL: `file://${paths.state}`,
      PULUMI_HOME: paths.home,
      PULUMI_CONFIG_PASSPHRASE: "literal-cli-consumer-passphrase",
      ARO_HCP_RUN_RECORDS: records,
      ...environment,
    });
    const pulumi = (...args: string[]): Promise<string> => runLiteralPulumi(consumerDirectory, shell, "literal", ...args);
    await pulumi("stack", "init");
    for (const [key, value] of Object.entries({ ...config, documentWaitSeconds: "2" })) {
      await pulumi("config", "set", `aro-hcp-identity-status:${key}`, value);
    }
    await pulumi("config", "set", "clusters", clustersConfig());

    // With Pulumi's trace flag: the installed package exports its spans to the engine's receiver.
    const traceFile = join(scratchDirectory, "consumer-traces.json");
    const up = await pulumi("up", "--yes", "--skip-preview", `--otel-traces=file://${traceFile}`);
    expect(up).toMatch(new RegExp(`\\+ ${fleet.length + 1} created`));
    for (const cluster of fleet) {
      await expectRecorded(cluster);
    }
    const spans = readSpanFile(traceFile);
    for (const cluster of fleet) {
      const pass = spans.find((span) => span.name === "cluster sync pass" && span.attributes["aro_hcp.cluster.resource_id"] === cluster.clusterResourceId);
      // The Automation API's stack above recorded these clusters already: the passes find them current.
      expect(pass?.attributes["aro_hcp.outcome"], cluster.clusterResourceId).toBe("current");
      expect(pass?.service).toBe("aro-hcp-identity-status");
    }
    // Current: the passes read the documents and ask Azure nothing (test/e2e/tracing.test.ts has the SDK's spans).
    const documentReadBeneathPass = spans.some(
      (span) => span.name === "cosmos read document" && ancestorsOf(span, spans).some((ancestor) => ancestor.name === "cluster sync pass"),
    );
    expect(documentReadBeneathPass, "a document read beneath a pass").toBe(true);
    expect(readFileSync(traceFile, "utf8").includes(sandbox.cosmosKey), "the Cosmos key in the exported spans").toBe(false);
    // The run report, with the installed package's own command: every cluster of the `up`, current.
    const reportFile = join(scratchDirectory, "consumer-run-report.json");
    const printed = run("npx", ["--no-install", "aro-hcp-run-report", records, "--json", reportFile], consumerDirectory);
    expect(printed).toContain(`Run report: OK; ${fleet.length} clusters: ${fleet.length} current`);
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as { verdict?: string; clusters?: Record<string, { clusterResourceId?: string }> };
    expect(report.verdict).toBe("ok");
    expect(
      Object.values(report.clusters ?? {})
        .map((cluster) => cluster.clusterResourceId)
        .sort(),
    ).toEqual(fleet.map((cluster) => cluster.clusterResourceId).sort());
    // The shard plan, with the installed package's own command: the fleet's clusters file split in two.
    const planDirectory = join(scratchDirectory, "consumer-shards");
    writeFileSync(join(scratchDirectory, "consumer-region.json"), JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId }))));
    expect(
      run(
        "npx",
        ["--no-install", "aro-hcp-shard-plan", join(scratchDirectory, "consumer-region.json"), "--shards", "2", "--out", planDirectory],
        consumerDirectory,
      ),
    ).toMatch(new RegExp(`^Shard plan [0-9a-f]{16}: ${fleet.length} clusters in 2 shards`));
    const plan = JSON.parse(readFileSync(join(planDirectory, "shard-plan.json"), "utf8")) as { shards: { clustersFile: string }[] };
    expect(plan.shards.flatMap((shard) => JSON.parse(readFileSync(join(planDirectory, shard.clustersFile), "utf8")) as unknown[])).toHaveLength(fleet.length);
    // The program's exports are the stack's outputs, as the user sees them.
    const outputs = JSON.parse(await pulumi("stack", "output", "--json")) as { clientIds?: unknown };
    expect(outputs.clientIds).toEqual(expectedClientIds());
    expect(await pulumi("destroy", "--yes")).toMatch(/\[retain\]/);
    for (const cluster of fleet) {
      await expectRecorded(cluster);
    }
  }, 600_000);
});
