/**
 * The shipped example stack config for real Azure is valid: every key known, settings accepted,
 * clusters accepted by the program and the provider's check, and no secret in it.
 * (js-yaml comes with @pulumi/pulumi; loaded untyped.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseClusterList } from "../../program/fleet";
import { checkInputs } from "../../resources/provider/providerInputs";
import { programKeys, projectName, readSettings, settingsKeys, snapshotStackConfig } from "../../resources/core/settings";
import { keys } from "../../resources/core/settingsKeys";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require("js-yaml") as { load(text: string): unknown };
const file = join(__dirname, "..", "..", "examples", "Pulumi.prod-eastus.yaml");
const stack = yaml.load(readFileSync(file, "utf8")) as { config: Record<string, unknown> };
const raw = Object.fromEntries(Object.entries(stack.config).map(([key, value]) => [key, typeof value === "string" ? value : JSON.stringify(value)]));

describe("the project's Pulumi.yaml", () => {
  const project = yaml.load(readFileSync(join(__dirname, "..", "..", "Pulumi.yaml"), "utf8")) as {
    config: Record<string, { description?: string; default?: unknown }>;
  };

  it("declares every key the provider and the program read, and no other, each with a default", () => {
    expect(Object.keys(project.config).sort()).toEqual([...settingsKeys, ...programKeys].sort());
    for (const [key, declaration] of Object.entries(project.config)) {
      expect(declaration, key).toHaveProperty("default");
    }
  });

  it("names each setting's environment variable in its description", () => {
    for (const [name, specification] of Object.entries(keys)) {
      expect(project.config[specification.key]?.description ?? "", name).toContain(specification.environment);
    }
  });
});

describe("examples/Pulumi.prod-eastus.yaml", () => {
  it("has only known keys, and settings that validate for real Azure", () => {
    const snapshot = snapshotStackConfig({ get: (key) => raw[key], rawConfig: raw });
    const settings = readSettings({ get: (key) => snapshot[key] }, {});
    expect(settings).toMatchObject({ azureCloud: "AzurePublicCloud", armEndpoint: "https://management.azure.com", cosmosKey: undefined, tlsCaFile: undefined });
    expect(settings.managedIdentityClientId).toMatch(/^[0-9a-f-]{36}$/);
    // Production mode: the cluster's own service managed identity, through the data plane.
    expect(settings).toMatchObject({ credentialMode: "clusterServiceManagedIdentity", fixedIdentity: undefined });
    expect(settings.firstParty?.certificateFile).toMatch(/^\//);
    expect(settings.dataPlaneAudience).toMatch(/^https:\/\//);
  });

  it("declares clusters the program and the provider's check accept", () => {
    const clusters = parseClusterList(stack.config[`${projectName}:clusters`], "clusters");
    expect(clusters.length).toBeGreaterThan(0);
    for (const cluster of clusters) {
      expect(checkInputs(cluster).failures).toEqual([]);
    }
  });

  it("holds no secret", () => {
    expect(Object.keys(stack.config)).not.toContain(`${projectName}:cosmosKey`);
    expect(readFileSync(file, "utf8")).not.toMatch(/secure:|AccountKey=|COSMOS_KEY=/);
  });
});
