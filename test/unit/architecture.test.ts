/**
 * The import-graph check of `npm run lint` (.dependency-cruiser.cjs, run by dependency-cruiser)
 * catches what it is meant to: run over a deliberately bad tree (test/fixtures/badImportGraph),
 * every rule fires exactly where a file breaks it, and over resources/ and bench/ it reads the real imports.
 * The ~250-line limit for resources/ is ESLint's max-lines (eslint.config.mjs).
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const repositoryRoot = path.resolve(__dirname, "../..");
const configFile = path.join(repositoryRoot, ".dependency-cruiser.cjs");
const cruiser = path.join(repositoryRoot, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");

interface CruiseReport {
  readonly modules: readonly { readonly source: string; readonly dependencies: readonly { readonly resolved: string }[] }[];
  readonly summary: { readonly violations: readonly { readonly rule: { readonly name: string }; readonly from: string; readonly to: string }[] };
}

/** Runs the lint step's check from `directory` over its resources/ and bench/ and returns the JSON report. */
function cruise(directory: string): CruiseReport {
  // Exit code = number of violations; the report is on stdout either way.
  let output: string;
  try {
    output = execFileSync(process.execPath, [cruiser, "--config", configFile, "--output-type", "json", "resources", "bench"], {
      cwd: directory,
      encoding: "utf8",
    });
  } catch (error) {
    output = (error as { stdout: string }).stdout;
  }
  return JSON.parse(output) as CruiseReport;
}

// Each case starts a Node process that parses a tree with the TypeScript compiler: seconds on a busy machine.
const cruiseTimeoutInMs = 60_000;

describe("the import-graph check of the lint step", () => {
  it(
    "flags every bad arrow of the fixture tree, and only those",
    () => {
      const report = cruise(path.join(repositoryRoot, "test/fixtures/badImportGraph"));
      const violations = report.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`).sort();
      expect(violations).toEqual([
        "folder-without-layer: resources/extras/stray.ts → resources/core/pure.ts",
        "layer-azure: resources/azure/reader.ts → resources/cosmos/store.ts",
        "layer-core: resources/core/impure.ts → resources/provider/provider.ts",
        "layer-logging: resources/logging/log.ts → resources/sync/syncPass.ts",
        "no-cycle-bench: bench/report.ts → bench/scaleReport.ts",
        "no-cycle: resources/sync/syncPass.ts → resources/sync/syncTypes.ts",
        "outside-resources: resources/provider/provider.ts → outsideHelper.ts",
        `packages-core: resources/core/impure.ts → ${path.relative(path.join(repositoryRoot, "test/fixtures/badImportGraph"), path.join(repositoryRoot, "node_modules/@azure/cosmos/dist/commonjs/index.js"))}`,
      ]);
    },
    cruiseTimeoutInMs,
  );

  it(
    "passes resources/ and bench/ and reads their real imports",
    () => {
      const report = cruise(repositoryRoot);
      expect(report.summary.violations).toEqual([]);
      const provider = report.modules.find((module) => module.source === "resources/provider/managedIdentityStatusProvider.ts");
      expect(provider?.dependencies.map((dependency) => dependency.resolved)).toContain("resources/sync/syncManagedIdentityStatus.ts");
      expect(report.modules.filter((module) => module.source.startsWith("resources/core/")).length).toBeGreaterThan(5);
      const benchReport = report.modules.find((module) => module.source === "bench/performance/report.ts");
      expect(benchReport?.dependencies.map((dependency) => dependency.resolved)).toContain("bench/performance/scaleReport.ts");
    },
    cruiseTimeoutInMs,
  );
});
