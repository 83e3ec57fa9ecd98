import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          // Projects run one after another, in this order; inside a project, files as it says.
          sequence: { groupOrder: 0 },
          include: ["test/unit/**/*.test.ts"],
          // Files that touch what the whole process shares (the Pulumi SDK's runtime and its mocks,
          // Error.stackTraceLimit, the SDK's logger) run in "program", a fresh module graph each.
          exclude: ["test/unit/resource/**", "test/unit/provider/providerText.test.ts"],
          // The rest are pure functions, fakes and their own objects (an environment variable set
          // by a test is put back in its finally): one module graph per worker for all of them, which
          // saves loading the SDKs again for each of 50 files (39 s to 13 s here).
          isolate: false,
          environment: "node",
          // Both cores (vitest's default is one fewer than the cores); "program" shares this group, so
          // it must say the same.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: "program",
          sequence: { groupOrder: 0 },
          include: ["test/program/**/*.test.ts", "test/unit/resource/**/*.test.ts", "test/unit/provider/providerText.test.ts"],
          environment: "node",
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/setup/sandbox.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        // The real Pulumi engine: needs `npm run build` and the CLI (tools/setup.sh does both). Two files
        // at a time: each waits on engine and plugin start-ups most of its time, and every file has its
        // own sandbox, backend directory and stack names.
        test: {
          name: "e2e",
          sequence: { groupOrder: 2 },
          include: ["test/e2e/**/*.test.ts"],
          // One scratch directory per run for the files' stacks, removed when the run ends.
          globalSetup: ["test/setup/e2eScratch.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 600_000,
          maxWorkers: 2,
        },
      },
    ],
  },
});
