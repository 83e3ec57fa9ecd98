/**
 * The README's "Getting started", as a newcomer follows it: its bash blocks, read from README.md
 * (never copied), run in order in one shell in the project directory, against the sandbox started
 * with the flags its first block gives. `npm run sandbox --` and `npm run pulumi --` are run as
 * what they run after the setup step (`node dist/sandbox/main.js`, `node dist/cli/pulumi.js`), the
 * sandbox's files sit in a scratch directory instead of `.sandbox/`, and the stack's backend and
 * home are the test's own. Each step's run report is checked against what the README says, and
 * Cosmos is read back.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { e2eScratchDirectory } from "./engineHelpers";

const projectDirectory = resolve(__dirname, "..", "..");
/** The wrapper's stack of the sandbox writes its settings beside Pulumi.yaml: a developer's own is kept aside and put back. */
const stackFile = join(projectDirectory, "Pulumi.sandbox.yaml");
const runsFile = join(projectDirectory, ".pulumi", "runs", "sandbox.jsonl");

/** The bash blocks of the README's "Getting started", in order. */
function gettingStartedBlocks(): string[] {
  const readme = readFileSync(join(projectDirectory, "README.md"), "utf8");
  const section = /^## Getting started\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? "";
  return [...section.matchAll(/^ *```bash\n([\s\S]*?)^ *```$/gm)].map((match) => match[1].replace(/^ {3}/gm, ""));
}

let root: string;
let sandbox: ChildProcess | undefined;
let printed = "";
let savedStackFile: string | undefined;

beforeAll(() => {
  root = e2eScratchDirectory("getting-started");
  if (existsSync(stackFile)) {
    savedStackFile = join(root, "Pulumi.sandbox.yaml.saved");
    copyFileSync(stackFile, savedStackFile);
  }
});

afterAll(() => {
  sandbox?.kill("SIGTERM");
  rmSync(stackFile, { force: true });
  if (savedStackFile !== undefined) copyFileSync(savedStackFile, stackFile);
});

describe("the README's Getting started", () => {
  it("goes from a sandbox with upstream's documents to an adopted fleet, a recheck, a refused tenant in the run report, and a fleet rechecked after the clock moved", async () => {
    const [start, ...steps] = gettingStartedBlocks();
    expect(steps.length).toBeGreaterThanOrEqual(5);
    const sandboxArguments =
      /^npm run sandbox -- (.*)$/m
        .exec(start ?? "")?.[1]
        ?.trim()
        .split(/\s+/) ?? [];
    expect(sandboxArguments).toContain("upstream");
    const sandboxDirectory = join(root, "sandbox");
    sandbox = spawn(process.execPath, [join(projectDirectory, "dist", "sandbox", "main.js"), ...sandboxArguments, `--directory=${sandboxDirectory}`], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolveStart, reject) => {
      sandbox?.stdout?.on("data", (chunk: Buffer) => {
        printed += chunk.toString("utf8");
        if (printed.includes("Press Ctrl-C to stop.")) resolveStart();
      });
      sandbox?.once("exit", (code) => reject(new Error(`sandbox exited with ${code}: ${printed}`)));
    });
    const endpointsFile = join(sandboxDirectory, "endpoints.json");
    const description = JSON.parse(readFileSync(endpointsFile, "utf8")) as {
      endpoints: { admin: string };
      adminToken: string;
      demoFleet: Array<{
        clusterResourceId: string;
        dataPlaneOperators: Record<string, string>;
        partitionKey: string;
        serviceProviderClusterDocumentId: string;
      }>;
    };
    const admin = new SandboxAdminClient(description.endpoints.admin, description.adminToken);

    // One shell for every step, as a terminal keeps its variables; a marker after each step's commands.
    const script = steps
      .map(
        (block, index) =>
          `${block.replace(/npm run pulumi --/g, "node dist/cli/pulumi.js").replace(/\.sandbox\/endpoints\.json/g, endpointsFile)}\necho "::step ${index + 2}::"`,
      )
      .join("\n");
    mkdirSync(join(root, "state"), { recursive: true });
    // Both streams in one, in order, as a terminal shows them.
    const shell = spawnSync("bash", ["-c", `exec 2>&1\n${script}`], {
      cwd: projectDirectory,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      timeout: 540_000,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("PULUMI_") && !name.startsWith("ARO_HCP_"))),
        ARO_HCP_SANDBOX_FILE: endpointsFile,
        PULUMI_BACKEND_URL: `file://${join(root, "state")}`,
        PULUMI_HOME: join(root, "home"),
      },
    });
    const output = `${shell.stdout}${shell.stderr}`;
    const stepOutput = (step: number): string =>
      output
        .split(`::step ${step - 1}::`)
        .pop()
        ?.split(`::step ${step}::`)[0] ?? "";
    expect(output, output).toContain(`::step ${steps.length + 1}::`);

    expect(stepOutput(2)).toMatch(/\+ 4 to create/);
    expect(stepOutput(2)).toContain("Run report: OK; 3 clusters: 3 current");
    expect(stepOutput(3)).toContain("Run report: OK; 3 clusters: 3 current");
    expect(stepOutput(4)).toContain("Run report: OK; 3 clusters: 1 written, 2 current");
    expect(stepOutput(5)).toMatch(/Run report: FAILED \(2 clusters\); 3 clusters: 2 failed, 1 \w+/);
    expect(stepOutput(5)).toMatch(/2 × invalid_client: AADSTS90033: The certificate used by the client has been revoked\. \(.* in tenant [0-9a-f-]{36}\)/);
    expect(stepOutput(6)).toContain("Run report: OK; 3 clusters: 3 written");
    expect(JSON.parse(readFileSync(runsFile.replace(/\.jsonl$/, ".json"), "utf8"))).toMatchObject({ verdict: "ok", counts: { clusters: 3, written: 3 } });

    // Cosmos holds the recreated identity's new IDs (step 4), and every identity ARM holds.
    for (const cluster of description.demoFleet) {
      const document = (await admin.readDocument(cluster.partitionKey, cluster.serviceProviderClusterDocumentId)) as {
        properties?: { status?: { dataPlaneOperatorsManagedIdentities?: { identities?: Record<string, { clientId?: string }> } } };
      };
      for (const id of Object.values(cluster.dataPlaneOperators)) {
        const identity = await admin.getIdentity(id).catch(() => undefined);
        expect(document.properties?.status?.dataPlaneOperatorsManagedIdentities?.identities?.[id.toLowerCase()]?.clientId, id).toBe(identity?.clientId);
      }
    }
  }, 600_000);
});
