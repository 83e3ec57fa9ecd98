/**
 * What is deployed on engines CI cannot start, checked with their own code (tools/check-deploy.sh):
 * the Helm chart rendered by helm's engine and every manifest decoded strictly into the Kubernetes
 * API's Go types, each Stack checked against the Pulumi Kubernetes Operator's published CRD, every
 * workflow linted by actionlint, the Dockerfile through BuildKit's checks. Each checker must refuse a
 * misspelt field, naming it.
 */
import { execFile } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { e2eScratchDirectory } from "./engineHelpers";

const projectDirectory = resolve(__dirname, "..", "..");
const chartDirectory = join(projectDirectory, "deploy", "chart");

function run(command: string, argumentsList: readonly string[]): Promise<{ code: number; stdout: string; output: string }> {
  return new Promise((resolveRun) => {
    execFile(command, argumentsList, { cwd: projectDirectory, encoding: "utf8", maxBuffer: 16 * 1024 * 1024, timeout: 900_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolveRun({ code, stdout, output: `${stdout}${stderr}` });
    });
  });
}

let checker: string;
let crd: string;

/** A copy of the chart with one template's text replaced. */
function chartWith(template: string, from: string, to: string): string {
  const copy = join(e2eScratchDirectory("chart"), "chart");
  cpSync(chartDirectory, copy, { recursive: true });
  const file = join(copy, "templates", template);
  const text = readFileSync(file, "utf8");
  expect(text, `${template} holds ${from}`).toContain(from);
  writeFileSync(file, text.replace(from, to));
  return copy;
}

beforeAll(async () => {
  const paths = await run("bash", [join(projectDirectory, "tools", "check-deploy.sh"), "--paths"]);
  expect(paths.code, paths.output).toBe(0);
  [checker, crd] = paths.stdout.trim().split("\n").slice(-2);
}, 900_000);

describe("tools/check-deploy.sh", () => {
  it("passes the chart (both engines' values) and the workflows as committed", async () => {
    const checked = await run("bash", [join(projectDirectory, "tools", "check-deploy.sh")]);
    expect(checked.code, checked.output).toBe(0);
    expect(checked.output).toContain("deploy-check: 5 manifest(s) valid");
    expect(checked.output).toMatch(/deploy-check: \d+ manifest\(s\) valid/);
  });

  it.each([
    [
      "the CronJob (batch/v1)",
      "shards.cronjob.yaml",
      "backoffLimitPerIndex:",
      "backoffLimitPerIndx:",
      'unknown field "spec.jobTemplate.spec.backoffLimitPerIndx"',
    ],
    [
      "the pod template's container",
      "shards.cronjob.yaml",
      "imagePullPolicy:",
      "imagePullPolicyy:",
      'unknown field "spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicyy"',
    ],
    [
      "the ServiceAccount (v1)",
      "serviceaccount.yaml",
      "automountServiceAccountToken:",
      "automountServiceAccountTokn:",
      'unknown field "automountServiceAccountTokn"',
    ],
    ["the SecretProviderClass (the CSI driver's type)", "secretproviderclass.yaml", "  provider: azure", "  providr: azure", 'unknown field "spec.providr"'],
  ])("refuses a misspelt field of %s, naming it", async (_, template, from, to, message) => {
    const checked = await run(checker, ["chart", chartWith(template, from, to), crd]);
    expect(checked.code, checked.output).toBe(1);
    expect(checked.output).toContain(message);
  });

  it("refuses a region's values file with a misspelt key (the chart's values schema, as helm install checks it)", async () => {
    const values = join(e2eScratchDirectory("values"), "region.yaml");
    writeFileSync(values, "shards:\n  paralelism: 2\n");
    const checked = await run(checker, ["chart", chartDirectory, crd, values]);
    expect(checked.code, checked.output).toBe(1);
    expect(checked.output).toContain("at '/shards': additional properties 'paralelism' not allowed");
  });

  it("refuses a Stack with a field the operator's CRD does not know, or a wrong type, naming each", async () => {
    const misspelt = chartWith("stacks.yaml", "continueResyncOnCommitMatch: true", "continueResyncOnCommitMach: true");
    const operatorValues = join(chartDirectory, "ci", "operator-values.yaml");
    const unknown = await run(checker, ["chart", misspelt, crd, operatorValues]);
    expect(unknown.code, unknown.output).toBe(1);
    expect(unknown.output).toContain('Stack aro-hcp-identity-status-shard-0: unknown field "spec.continueResyncOnCommitMach"');
    const wrongType = await run(checker, ["chart", chartWith("stacks.yaml", "refresh: true", 'refresh: "yes"'), crd, operatorValues]);
    expect(wrongType.code, wrongType.output).toBe(1);
    expect(wrongType.output).toMatch(
      /Stack aro-hcp-identity-status-shard-0: spec\.refresh: Invalid value: "string": spec\.refresh in body must be of type boolean/,
    );
  });

  it("refuses a workflow with a misspelt key (actionlint)", async () => {
    const workflow = join(e2eScratchDirectory("workflow"), "drift-correction.yml");
    const text = readFileSync(join(projectDirectory, "examples", "workflows", "drift-correction.yml"), "utf8");
    expect(text).toContain("fail-fast: false");
    writeFileSync(workflow, text.replace("fail-fast: false", "fail-fats: false"));
    const linted = await run(checker, ["workflow", workflow]);
    expect(linted.code, linted.output).toBe(1);
    expect(linted.output).toContain('unexpected key "fail-fats" for "strategy" section');
  });

  it.each([
    ["instruction", "COPY . .", "COPPY . .", "unknown instruction: COPPY"],
    ["flag", "COPY --from=build /out/app/ /app/", "COPY --frm=build /out/app/ /app/", "unknown flag: --frm"],
    ["keyword's casing (a lint rule)", "AS build", "as build", "FromAsCasing"],
  ])("refuses a Dockerfile with a misspelt %s (BuildKit)", async (_, from, to, message) => {
    const dockerfile = join(e2eScratchDirectory("dockerfile"), "Dockerfile");
    const text = readFileSync(join(projectDirectory, "deploy", "Dockerfile"), "utf8");
    expect(text).toContain(from);
    writeFileSync(dockerfile, text.replace(from, to));
    const checked = await run(checker, ["dockerfile", dockerfile]);
    expect(checked.code, checked.output).toBe(1);
    expect(checked.output).toContain(message);
  });
});
