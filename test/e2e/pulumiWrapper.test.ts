/**
 * `npm run pulumi` (dist/cli/pulumi.js) with a user's own backend and passphrase, while a sandbox
 * description exists: the wrapper keeps the user's PULUMI_BACKEND_URL, never encrypts with a
 * fixed passphrase, writes sandbox settings into no stack but `sandbox`, and refuses to run a
 * passphrase stack without a passphrase, saying what to set. Reproduces issue 11 item 5.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { e2eScratchDirectory, engineModule } from "./engineHelpers";

const projectDirectory = join(__dirname, "..", "..");
const stackName = `wrapper-test-${process.pid}`;
const unprotectedStackName = `wrapper-no-passphrase-${process.pid}`;
const userPassphrase = "the user's own passphrase";
let root: string;
let userEnvironment: Record<string, string>;

function stackFile(name: string): string {
  return join(projectDirectory, `Pulumi.${name}.yaml`);
}

function wrapper(argumentsList: readonly string[], environment: Record<string, string> = userEnvironment): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [join(projectDirectory, "dist", "cli", "pulumi.js"), ...argumentsList], {
    cwd: projectDirectory,
    env: environment,
    encoding: "utf8",
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

beforeAll(() => {
  root = e2eScratchDirectory("wrapper");
  mkdirSync(join(root, "state"), { recursive: true });
  // A sandbox description as `npm run sandbox` writes it: it must not leak into the user's stacks.
  const sandboxFile = join(root, "endpoints.json");
  writeFileSync(
    sandboxFile,
    JSON.stringify({
      endpoints: { arm: "https://127.0.0.1:1", cosmos: "https://127.0.0.1:2", identity: "http://127.0.0.1:3/token", admin: "http://127.0.0.1:4" },
      caBundlePath: join(root, "ca.pem"),
      database: "sandbox-database",
      container: "Resources",
      environment: { COSMOS_KEY: "sandbox-key", IDENTITY_ENDPOINT: "http://127.0.0.1:3/token", IDENTITY_HEADER: "header" },
      clustersFile: join(root, "clusters.json"),
    }),
  );
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => !entry[0].startsWith("PULUMI_") && entry[1] !== undefined),
  );
  userEnvironment = {
    ...inherited,
    PULUMI_BACKEND_URL: `file://${join(root, "state")}`,
    PULUMI_HOME: join(root, "home"),
    PULUMI_CONFIG_PASSPHRASE: userPassphrase,
    ARO_HCP_SANDBOX_FILE: sandboxFile,
  };
});

afterAll(() => {
  rmSync(stackFile(stackName), { force: true });
  rmSync(stackFile(unprotectedStackName), { force: true });
});

describe("npm run pulumi with the user's backend and secrets", () => {
  it("creates the stack in the user's backend, not the project's", () => {
    const result = wrapper(["stack", "init", stackName]);
    expect(result.status, result.output).toBe(0);
    expect(existsSync(join(root, "state", ".pulumi", "stacks", "aro-hcp-identity-status", `${stackName}.json`))).toBe(true);
    expect(existsSync(join(projectDirectory, ".pulumi", "state", ".pulumi", "stacks", "aro-hcp-identity-status", `${stackName}.json`))).toBe(false);
  });

  it("encrypts a --secret value with the user's passphrase, which the sandbox passphrase cannot open", async () => {
    const set = wrapper(["config", "set", "--secret", "cosmosKey", "a-real-key", "--stack", stackName]);
    expect(set.status, set.output).toBe(0);
    expect(readFileSync(stackFile(stackName), "utf8")).not.toContain("a-real-key");
    const engine = engineModule();
    const cli = join((await engine.engineCommand()).root, "bin", "pulumi");
    const read = (passphrase: string) =>
      spawnSync(cli, ["config", "get", "cosmosKey", "--stack", stackName], {
        cwd: projectDirectory,
        env: { ...userEnvironment, PULUMI_CONFIG_PASSPHRASE: passphrase },
        encoding: "utf8",
      });
    expect(read(userPassphrase).stdout.trim()).toBe("a-real-key");
    expect(read(engine.sandboxPassphrase).status).not.toBe(0);
    expect(wrapper(["config", "rm", "cosmosKey", "--stack", stackName]).status).toBe(0);
  });

  it("runs the user's stack with its own config only, although a sandbox description exists", () => {
    const result = wrapper(["preview", "--stack", stackName]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain("no clusters declared");
    const settings = readFileSync(stackFile(stackName), "utf8");
    for (const sandboxValue of ["127.0.0.1", "sandbox-database", "clustersFile", "sandbox-key"]) {
      expect(settings).not.toContain(sandboxValue);
    }
  });

  it("refuses a passphrase stack without a passphrase, saying what to set, and creates nothing", () => {
    const { PULUMI_CONFIG_PASSPHRASE: _removed, ...withoutPassphrase } = userEnvironment;
    const result = wrapper(["up", "--stack", unprotectedStackName], withoutPassphrase);
    expect(result.status).toBe(1);
    expect(result.output).toContain(`stack '${unprotectedStackName}' encrypts its secrets with a passphrase`);
    expect(result.output).toContain("PULUMI_CONFIG_PASSPHRASE_FILE");
    expect(existsSync(stackFile(unprotectedStackName))).toBe(false);
    expect(existsSync(join(root, "state", ".pulumi", "stacks", "aro-hcp-identity-status", `${unprotectedStackName}.json`))).toBe(false);
  });
});
