/**
 * A sandbox for one benchmark scenario, plus the settings that point the hook (in scenario 1's
 * worker, in a floor worker, or in the engine's provider host) at it.
 */
import { join } from "node:path";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import { projectDirectory } from "../../cli/engine";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";

/** A running sandbox and how to reach it. */
export interface BenchmarkSandbox {
  readonly sandbox: Sandbox;
  /** Stack config (project namespace, without prefix). */
  readonly config: Readonly<Record<string, string>>;
  /** Environment for the engine, the provider host and floor workers (secrets go here). */
  readonly environment: Readonly<Record<string, string>>;
  /** The same settings as ARO_HCP_* environment variables (for a floor worker). */
  readonly settingsEnvironment: Readonly<Record<string, string>>;
}

/** Options of {@link startBenchmarkSandbox}. */
export interface BenchmarkSandboxOptions {
  readonly armLatencyInMs: number;
  readonly cosmosLatencyInMs: number;
  readonly lookupConcurrency: number;
}

/** Starts a sandbox with the given latency; the CA bundle goes under .sandbox/bench-<pid>/. */
export async function startBenchmarkSandbox(options: BenchmarkSandboxOptions): Promise<BenchmarkSandbox> {
  const sandbox = await startSandbox({
    armLatencyInMs: options.armLatencyInMs,
    cosmosLatencyInMs: options.cosmosLatencyInMs,
    certificateDirectory: join(projectDirectory, ".sandbox", `bench-${process.pid}`),
  });
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const fullConfig: Record<string, string> = { ...config, lookupConcurrency: String(options.lookupConcurrency) };
  const settingsEnvironment: Record<string, string> = {
    ARO_HCP_COSMOS_ENDPOINT: fullConfig.cosmosEndpoint,
    ARO_HCP_COSMOS_DATABASE: fullConfig.cosmosDatabase,
    ARO_HCP_COSMOS_CONTAINER: fullConfig.cosmosContainer,
    ARO_HCP_ARM_ENDPOINT: fullConfig.armEndpoint,
    ARO_HCP_TLS_CA_FILE: fullConfig.tlsCaFile,
    ARO_HCP_LOOKUP_CONCURRENCY: fullConfig.lookupConcurrency,
    ARO_HCP_DOCUMENT_WAIT_SECONDS: fullConfig.documentWaitSeconds,
    ...environment,
  };
  return {
    sandbox,
    config: fullConfig,
    environment,
    settingsEnvironment,
  };
}
