/**
 * A sandbox for one benchmark scenario, plus the settings that point the hook (in scenario 1's
 * worker, in a floor worker, or in the engine's provider host) at it.
 */
import { join } from "node:path";
import { settingsForRunningSandbox } from "../../cli/sandboxSettings";
import { projectDirectory } from "../../cli/engine";
import { keys } from "../../resources/core/settingsKeys";
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
  stop(): Promise<void>;
}

/** Options of {@link startBenchmarkSandbox}. */
export interface BenchmarkSandboxOptions {
  readonly armLatencyInMs: number;
  readonly cosmosLatencyInMs: number;
  readonly lookupConcurrency: number;
  /**
   * Each cluster in its own tenant, readable only by its own service managed identity; the hook runs
   * in `clusterServiceManagedIdentity` mode (cli/sandboxSettings.ts credentialModeSettings). The
   * sandbox Entra and the Managed Identities data plane then answer after the ARM latency too, and
   * the SMI certificates share a pool of RSA keys (sandbox.ts `clientCertificateKeyPoolSize`).
   */
  readonly perClusterCredentials?: boolean;
}

/** RSA keys the SMI certificates of a per-cluster benchmark sandbox share (see `perClusterCredentials`). */
export const smiKeyPoolSize = 16;

/** Starts a sandbox with the given latency; the CA bundle goes under .sandbox/bench-<pid>/. */
export async function startBenchmarkSandbox(options: BenchmarkSandboxOptions): Promise<BenchmarkSandbox> {
  const sandbox = await startSandbox({
    armLatencyInMs: options.armLatencyInMs,
    cosmosLatencyInMs: options.cosmosLatencyInMs,
    certificateDirectory: join(projectDirectory, ".sandbox", `bench-${process.pid}`),
    ...(options.perClusterCredentials === true ? { perClusterCredentials: true, clientCertificateKeyPoolSize: smiKeyPoolSize } : {}),
  });
  if (options.perClusterCredentials === true) sandbox.faults.setLatency({ entra: options.armLatencyInMs, dataPlane: options.armLatencyInMs });
  const { config, environment } = settingsForRunningSandbox(sandbox);
  const fullConfig: Record<string, string> = { ...config, lookupConcurrency: String(options.lookupConcurrency) };
  // Every setting the stack config holds, as the variable the hook falls back to (settingsKeys.ts).
  const settingsEnvironment: Record<string, string> = { ...environment };
  for (const specification of Object.values(keys)) {
    const value = fullConfig[specification.key];
    if (value !== undefined) settingsEnvironment[specification.environment] = value;
  }
  return { sandbox, config: fullConfig, environment, settingsEnvironment, stop: () => sandbox.stop() };
}
