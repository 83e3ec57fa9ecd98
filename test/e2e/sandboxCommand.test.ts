/**
 * `npm run sandbox` prints a complete configuration: applying its printed commands with the real
 * CLI (`pulumi stack init`, `pulumi config set …`, in a directory holding the project's
 * Pulumi.yaml) and the final `pulumi up` (with `--yes`: no terminal here) records the whole demo
 * fleet, through the CLI's Node.js language host.
 * Reproduces issue 11 item 2 (five keys printed, no clusters: `up` recorded nothing, silently),
 * and checks that an `up` declaring no clusters says so.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asServiceProviderClusterJson, ownedStatusOf } from "../fixtures/storedDocument";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { e2eScratchDirectory, engineModule, outputCollector, runLiteralPulumi } from "./engineHelpers";

const projectDirectory = join(__dirname, "..", "..");
let child: ChildProcess;
let printed = "";
let root: string;

interface EndpointsFile {
  endpoints: { admin: string };
  adminToken: string;
  environment: Record<string, string>;
  demoFleet: Array<{
    clusterResourceId: string;
    partitionKey: string;
    serviceProviderClusterDocumentId: string;
    dataPlaneOperators: Record<string, string>;
    missingIdentities: string[];
  }>;
}

beforeAll(async () => {
  root = e2eScratchDirectory("sandbox-command");
  child = spawn(process.execPath, [join(projectDirectory, "dist", "sandbox", "main.js"), `--directory=${join(root, "sandbox")}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      printed += chunk.toString("utf8");
      if (printed.includes("Press Ctrl-C to stop.")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}: ${printed}`)));
  });
}, 120_000);

afterAll(() => {
  child?.kill("SIGTERM");
});

/** The commands printed under "With the pulumi CLI", as a user would paste them. */
function printedCliCommands(): string[] {
  const lines = printed.split("\n");
  const start = lines.findIndex((line) => line.startsWith("With the pulumi CLI"));
  const block: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim().length === 0) break;
    block.push(line.trim());
  }
  return block;
}

describe("npm run sandbox", () => {
  it("prints a configuration with which `pulumi up` records the whole demo fleet", async () => {
    const commands = printedCliCommands();
    expect(commands[0]).toMatch(/^source /);
    expect(commands).toContain("pulumi stack init sandbox");
    expect(commands.some((command) => command.startsWith("pulumi config set aro-hcp-identity-status:clustersFile "))).toBe(true);
    expect(commands.at(-1)).toBe("pulumi up");

    const engine = engineModule();
    const command = await engine.engineCommand();
    const workDirectory = join(root, "work");
    mkdirSync(workDirectory, { recursive: true });
    // What the project directory gives the language host: the project file, the program and the
    // TypeScript settings it is compiled with (without tsconfig.json, ts-node's defaults reject
    // `new Error(message, { cause })`).
    for (const file of ["Pulumi.yaml", "index.ts", "tsconfig.json"]) symlinkSync(join(projectDirectory, file), join(workDirectory, file));
    const cliEnvironment = {
      ...process.env,
      PATH: `${join(command.root, "bin")}:${process.env.PATH ?? ""}`,
      PULUMI_BACKEND_URL: `file://${join(root, "state")}`,
      PULUMI_HOME: join(root, "home"),
      PULUMI_CONFIG_PASSPHRASE: "the-user's-own-passphrase",
      PULUMI_SKIP_UPDATE_CHECK: "true",
    };
    mkdirSync(join(root, "state"), { recursive: true });
    // Everything but the final `pulumi up`, literally, through bash and the real CLI.
    execFileSync("bash", ["-euc", commands.slice(0, -1).join("\n")], { cwd: workDirectory, env: cliEnvironment, stdio: "pipe" });

    const description = JSON.parse(readFileSync(join(root, "sandbox", "endpoints.json"), "utf8")) as EndpointsFile;
    // The last printed command, literally, in the shell the printed `source` line set up.
    const environment = { ...cliEnvironment, ...description.environment };
    const up = await runLiteralPulumi(workDirectory, environment, "sandbox", "up", "--yes", "--skip-preview");
    expect(up).toContain(`+ ${description.demoFleet.length + 1} created`);
    expect(up).not.toContain("no clusters declared");

    const admin = new SandboxAdminClient(description.endpoints.admin, description.adminToken);
    for (const cluster of description.demoFleet) {
      const document = asServiceProviderClusterJson(await admin.readDocument(cluster.partitionKey, cluster.serviceProviderClusterDocumentId));
      const identities = ownedStatusOf(document)?.identities ?? {};
      for (const identityId of Object.values(cluster.dataPlaneOperators)) {
        const entry = identities[identityId.toLowerCase()];
        if (cluster.missingIdentities.includes(identityId)) {
          expect(entry?.clientId, identityId).toBeUndefined();
        } else {
          expect(entry?.clientId, identityId).toBe((await admin.getIdentity(identityId)).clientId);
        }
      }
    }
    // Outputs a person can read: keyed by cluster name, the ARM ID inside.
    const outputs = JSON.parse(await runLiteralPulumi(workDirectory, environment, "sandbox", "stack", "output", "--json")) as {
      clusters: Record<string, { id: string }>;
    };
    const clusters = outputs.clusters;
    expect(Object.keys(clusters).sort()).toEqual(description.demoFleet.map((cluster) => cluster.clusterResourceId.split("/").pop()).sort());
  });

  it("an `up` that declares no clusters says so", async () => {
    const engine = engineModule();
    const command = await engine.engineCommand();
    const stack = await engine.openStack({
      engine: command,
      stackName: "no-clusters",
      paths: { state: join(root, "state-2"), home: join(root, "home-2"), workDirectory: join(root, "work-2") },
    });
    const output = outputCollector();
    const result = await stack.up({ onOutput: output.onOutput });
    expect(result.summary.result).toBe("succeeded");
    expect(output.text()).toContain(
      "no clusters declared: set aro-hcp-identity-status:clustersFile (a JSON list) or aro-hcp-identity-status:clusters; this update records nothing",
    );
  });
});
