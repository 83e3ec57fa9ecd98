import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { adoptOldStackSettingsFile, stackSettingsFileName } from "../../cli/stackFileMigration";

let project: string;

beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), "aro-hcp-stack-file-"));
  mkdirSync(join(project, ".pulumi", "work"), { recursive: true });
});

afterEach(() => {
  rmSync(project, { recursive: true, force: true });
});

describe("adoptOldStackSettingsFile", () => {
  it("moves the old wrapper's stack file next to Pulumi.yaml, keeping its content, and says so", () => {
    const text = "encryptionsalt: v1:abc\nconfig:\n  aro-hcp-identity-status:cosmosDatabase: prod\n";
    writeFileSync(join(project, ".pulumi", "work", "Pulumi.prod.yaml"), text);
    const message = adoptOldStackSettingsFile(project, "prod");
    expect(message).toContain("Pulumi.prod.yaml");
    expect(readFileSync(join(project, "Pulumi.prod.yaml"), "utf8")).toBe(text);
    expect(existsSync(join(project, ".pulumi", "work", "Pulumi.prod.yaml"))).toBe(false);
  });

  it("never overwrites a stack file that is already next to Pulumi.yaml", () => {
    writeFileSync(join(project, ".pulumi", "work", "Pulumi.prod.yaml"), "old\n");
    writeFileSync(join(project, "Pulumi.prod.yaml"), "current\n");
    expect(adoptOldStackSettingsFile(project, "prod")).toBeUndefined();
    expect(readFileSync(join(project, "Pulumi.prod.yaml"), "utf8")).toBe("current\n");
    expect(readFileSync(join(project, ".pulumi", "work", "Pulumi.prod.yaml"), "utf8")).toBe("old\n");
  });

  it("does nothing when there is no old file", () => {
    expect(adoptOldStackSettingsFile(project, "prod")).toBeUndefined();
    expect(existsSync(join(project, "Pulumi.prod.yaml"))).toBe(false);
  });

  it("names the file after the last segment of an org/project/stack name", () => {
    expect(stackSettingsFileName("acme/aro-hcp-identity-status/prod-eastus")).toBe("Pulumi.prod-eastus.yaml");
    writeFileSync(join(project, ".pulumi", "work", "Pulumi.prod-eastus.yaml"), "x\n");
    expect(adoptOldStackSettingsFile(project, "acme/aro-hcp-identity-status/prod-eastus")).toBeDefined();
    expect(existsSync(join(project, "Pulumi.prod-eastus.yaml"))).toBe(true);
  });
});
