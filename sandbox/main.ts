import { chmod, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { sandboxDescription } from "./endpointsFile";
import { startSandbox } from "./sandbox";
import { type FleetClusterDescription, seedDemoFleet } from "./seed";
import { seedUpstreamStatus } from "./upstreamSeed";

/** Settings of `npm run sandbox`, from flags or environment. */
interface MainSettings {
  armLatencyInMs: number;
  cosmosLatencyInMs: number;
  database?: string;
  /** `demo`: the demo fleet with no status; `upstream`: the same, its status as upstream's controllers leave it; `none`. */
  seed: "demo" | "upstream" | "none";
  directory: string;
  perClusterCredentials: boolean;
  challengeTenantId?: string;
}

function flag(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((argument) => argument.startsWith(prefix))?.slice(prefix.length);
}

function numberSetting(flagName: string, environmentName: string): number {
  const text = flag(flagName) ?? process.env[environmentName] ?? "0";
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`--${flagName} / ${environmentName} must be a non-negative number, got '${text}'`);
  }
  return value;
}

/** `--seed upstream` (or `--seed=upstream`, SANDBOX_SEED=upstream), `--no-seed` (SANDBOX_SEED=0), else the demo fleet. */
function seedSetting(): MainSettings["seed"] {
  const index = process.argv.indexOf("--seed");
  const value = flag("seed") ?? (index === -1 ? undefined : process.argv[index + 1]) ?? process.env.SANDBOX_SEED;
  if (process.argv.includes("--no-seed") || value === "0" || value === "none") return "none";
  if (value === undefined || value === "demo" || value === "1") return "demo";
  if (value === "upstream") return "upstream";
  throw new RangeError(`--seed / SANDBOX_SEED must be demo, upstream or none, got '${value}'`);
}

function readSettings(): MainSettings {
  const database = flag("database") ?? process.env.SANDBOX_DATABASE;
  const challengeTenantId = flag("challenge-tenant") ?? process.env.SANDBOX_CHALLENGE_TENANT;
  return {
    armLatencyInMs: numberSetting("arm-latency-ms", "SANDBOX_ARM_LATENCY_MS"),
    cosmosLatencyInMs: numberSetting("cosmos-latency-ms", "SANDBOX_COSMOS_LATENCY_MS"),
    ...(database === undefined ? {} : { database }),
    seed: seedSetting(),
    directory: resolve(flag("directory") ?? process.env.SANDBOX_DIRECTORY ?? join(__dirname, "..", "..", ".sandbox")),
    perClusterCredentials: process.argv.includes("--per-cluster") || process.env.SANDBOX_PER_CLUSTER === "1",
    ...(challengeTenantId === undefined ? {} : { challengeTenantId }),
  };
}

/**
 * The demo fleet as the program's cluster list: every cluster declares its operators except the
 * last, whose operators are read from its HCPOpenShiftCluster document as upstream does.
 */
function clusterList(demoFleet: readonly FleetClusterDescription[]): unknown[] {
  return demoFleet.map((cluster, index) =>
    index === demoFleet.length - 1 && demoFleet.length > 1
      ? { clusterResourceId: cluster.clusterResourceId }
      : {
          clusterResourceId: cluster.clusterResourceId,
          dataPlaneOperators: cluster.dataPlaneOperators,
          serviceManagedIdentity: cluster.serviceManagedIdentity,
        },
  );
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

async function main(): Promise<void> {
  const settings = readSettings();
  const sandbox = await startSandbox({
    armLatencyInMs: settings.armLatencyInMs,
    cosmosLatencyInMs: settings.cosmosLatencyInMs,
    ...(settings.database === undefined ? {} : { database: settings.database }),
    certificateDirectory: settings.directory,
    perClusterCredentials: settings.perClusterCredentials,
    ...(settings.challengeTenantId === undefined ? {} : { dataPlaneChallengeTenantId: settings.challengeTenantId }),
  });
  const caBundlePath = sandbox.caBundlePath ?? join(settings.directory, "ca.pem");
  const demoFleet = settings.seed === "none" ? [] : seedDemoFleet(sandbox);
  // Documents as upstream's controllers leave them: adopting the fleet writes nothing (upstreamSeed.ts).
  if (settings.seed === "upstream") seedUpstreamStatus(sandbox, demoFleet);
  // The complete configuration: a `pulumi up` with the printed settings reconciles this fleet.
  const clustersPath = join(settings.directory, "clusters.json");
  await writeFile(clustersPath, `${JSON.stringify(clusterList(demoFleet), null, 2)}\n`);
  const description = sandboxDescription(sandbox, caBundlePath, clustersPath, demoFleet);
  const endpointsPath = join(settings.directory, "endpoints.json");
  const environmentPath = join(settings.directory, "env.sh");
  await writeFile(endpointsPath, `${JSON.stringify(description, null, 2)}\n`, { mode: 0o600 });
  await chmod(endpointsPath, 0o600);
  const environment = description.environment as Record<string, string>;
  await writeFile(
    environmentPath,
    `# Sandbox-only throwaway values; valid while the sandbox (pid ${process.pid}) runs.\n${Object.entries(environment)
      .map(([name, value]) => `export ${name}=${shellQuote(value)}`)
      .join("\n")}\n`,
    { mode: 0o600 },
  );

  const pulumiConfig = description.pulumiConfig as Record<string, string>;
  const lines = [
    "ARO-HCP identity status sandbox is running (127.0.0.1 only).",
    "",
    `  ARM (HTTPS)       ${sandbox.endpoints.arm}`,
    `  Cosmos (HTTPS)    ${sandbox.endpoints.cosmos}   database ${sandbox.database}, container ${sandbox.container}`,
    `  Token endpoint    ${sandbox.endpoints.identity}`,
    `  Admin API         ${sandbox.endpoints.admin}   (Authorization: Bearer <adminToken from endpoints.json>)`,
    `  Entra (HTTPS)     ${sandbox.endpoints.entra}   service tenant ${sandbox.credentialChain.serviceTenantId}`,
    `  MI data plane     ${sandbox.endpoints.dataPlane}   audience ${sandbox.credentialChain.dataPlaneAudience}${sandbox.credentialChain.perClusterCredentials ? "   (per-cluster mode)" : ""}`,
    `  First-party app   ${sandbox.credentialChain.firstPartyApplication.clientId}   ${sandbox.credentialChain.firstPartyApplication.certificateBundlePath}`,
    `  Fixed identity    ${sandbox.credentialChain.fixedIdentity.clientId}   ${sandbox.credentialChain.fixedIdentity.certificateBundlePath}`,
    `  CA bundle         ${caBundlePath}`,
    `  Details           ${endpointsPath}`,
    "",
    `Environment (also in ${environmentPath}; sandbox-only throwaway values):`,
    ...Object.entries(environment).map(([name, value]) => `  export ${name}=${shellQuote(value)}`),
    "",
    `With the pulumi CLI, in the project directory (the stack's own passphrase or secrets provider; the key stays in the environment):`,
    `  source ${shellQuote(environmentPath)}`,
    "  pulumi stack init sandbox",
    ...Object.entries(pulumiConfig).map(([key, value]) => `  pulumi config set ${key} ${shellQuote(value)}`),
    "  pulumi up",
    "",
    "Or through the project's engine (stack 'sandbox', configured from this sandbox):",
    "  npm run pulumi -- up",
    "",
    `Demo fleet: ${demoFleet.length} clusters${settings.seed === "upstream" ? ", their status as upstream's controllers leave it (adopting it writes nothing)" : ""}`,
    ...demoFleet.map(
      (cluster) =>
        `  ${cluster.clusterResourceId}\n    ServiceProviderCluster document ${cluster.partitionKey}/${cluster.serviceProviderClusterDocumentId}, ${Object.keys(cluster.dataPlaneOperators).length} data plane operators`,
    ),
    "",
    "Press Ctrl-C to stop.",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      return;
    }
    stopping = true;
    process.stdout.write(`\n${signal} received, stopping the sandbox.\n`);
    void (async () => {
      await sandbox.stop();
      await rm(endpointsPath, { force: true });
      await rm(environmentPath, { force: true });
      await rm(clustersPath, { force: true });
      process.exitCode = 0;
    })();
  };
  process.once("SIGINT", () => shutdown("SIGINT"));
  process.once("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
  process.stderr.write(`sandbox failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
