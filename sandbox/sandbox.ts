import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { dirname, join, resolve } from "node:path";
import { type Container, CosmosClient } from "@azure/cosmos";
import { type AdminServer, startAdminServer } from "./adminServer";
import { type ArmServer, startArmServer } from "./armServer";
import { createSandboxCertificate } from "./certificate";
import type { CosmosDocumentStore } from "./cosmosDocumentStore";
import { type CosmosServer, startCosmosServer } from "./cosmosServer";
import { FaultInjector } from "./faultInjector";
import { IdentityStore } from "./identityStore";
import { type ManagedIdentityTokenServer, startManagedIdentityTokenServer } from "./managedIdentityTokenServer";
import { SandboxStatistics } from "./sandboxStatistics";
import { defaultTokenLifetimeInMs, TokenRegistry } from "./tokenRegistry";

/** The container every document lives in, as upstream. */
export const sandboxContainerName = "Resources";

/** The default database name. */
export const defaultSandboxDatabaseName = "arohcp";

/** Options of {@link startSandbox}. */
export interface SandboxOptions {
  /** Latency added to every ARM request, in milliseconds (default 0). */
  armLatencyInMs?: number;
  /** Latency added to every Cosmos request, in milliseconds (default 0). */
  cosmosLatencyInMs?: number;
  /** The Cosmos database name (default `arohcp`). */
  database?: string;
  /** Lifetime of issued tokens, in milliseconds (default one hour). */
  tokenLifetimeInMs?: number;
  /**
   * When given, the CA bundle is written there as `ca.pem` (the directory is created). `stop` removes
   * the file, and the directory when this call created it and nothing else was put in it.
   */
  certificateDirectory?: string;
}

/** The URLs of the four sandbox servers, all on 127.0.0.1. */
export interface SandboxEndpoints {
  /** Fake ARM, `https://127.0.0.1:<port>`. */
  arm: string;
  /** Cosmos, `https://127.0.0.1:<port>`. */
  cosmos: string;
  /** Managed-identity token URL, the value for `IDENTITY_ENDPOINT`. */
  identity: string;
  /** Admin API, `http://127.0.0.1:<port>`. */
  admin: string;
}

/** Everything a client in another process needs to use the sandbox; plain JSON. */
export interface SandboxConnection {
  endpoints: SandboxEndpoints;
  /** The ARM server's self-signed certificate (PEM), to trust as a CA. */
  armCertificatePem: string;
  /** The Cosmos server's self-signed certificate (PEM), to trust as a CA. */
  cosmosCertificatePem: string;
  /** Both certificates concatenated. */
  caBundlePem: string;
  /** The Cosmos master key (base64). A throwaway for this sandbox run only. */
  cosmosKey: string;
  /** The value for `IDENTITY_HEADER`. */
  identityHeader: string;
  /** The bearer token of the admin API. */
  adminToken: string;
  database: string;
  container: string;
}

/** A running sandbox: connection details plus in-process handles. */
export interface Sandbox extends SandboxConnection {
  /** Where the CA bundle was written, when `certificateDirectory` was given. */
  caBundlePath?: string;
  identities: IdentityStore;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  tokens: TokenRegistry;
  /** Direct document access: no HTTP, no faults, not counted. */
  documents: CosmosDocumentStore;
  /** A real @azure/cosmos container handle (master key); its requests are counted like any client's. */
  cosmosContainer: Container;
  /** @returns The plain-JSON connection details (for vitest `provide` or a file). */
  connection(): SandboxConnection;
  /** Stops every server, destroying open sockets. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the whole sandbox on 127.0.0.1 with OS-assigned ports: the managed-identity token
 * endpoint, the fake ARM, Cosmos (with database and container created) and the admin API. Each
 * HTTPS server gets its own fresh certificate; the Cosmos key, identity header and admin token are
 * random per start. Counters start at zero.
 *
 * @param options - Latency, database name, token lifetime and where to write the CA bundle.
 * @returns The running sandbox.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const database = options.database ?? defaultSandboxDatabaseName;
  const tokens = new TokenRegistry(options.tokenLifetimeInMs ?? defaultTokenLifetimeInMs);
  const faults = new FaultInjector();
  faults.setLatency({ arm: options.armLatencyInMs ?? 0, cosmos: options.cosmosLatencyInMs ?? 0 });
  const statistics = new SandboxStatistics();
  const identities = new IdentityStore();
  const cosmosKey = randomBytes(64).toString("base64");
  const identityHeader = randomBytes(16).toString("hex");
  const adminToken = randomBytes(24).toString("base64url");
  const [armCertificate, cosmosCertificate] = await Promise.all([createSandboxCertificate("sandbox-arm"), createSandboxCertificate("sandbox-cosmos")]);

  const running: Array<{ close(): Promise<void> }> = [];
  let client: CosmosClient | undefined;
  let agent: Agent | undefined;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) {
      return;
    }
    stopped = true;
    client?.dispose();
    agent?.destroy();
    await Promise.all(running.map((server) => server.close()));
    await removeCaBundle();
  };
  // What `certificateDirectory` added: the bundle, and the directories made for it (deepest first).
  let caBundleWritten: { path: string; pem: string; createdDirectories: string[] } | undefined;
  const removeCaBundle = async (): Promise<void> => {
    if (caBundleWritten === undefined) return;
    // Another sandbox given the same directory since has its own bundle there: that one stays.
    const current = await readFile(caBundleWritten.path, "utf8").catch(() => undefined);
    if (current === caBundleWritten.pem) await rm(caBundleWritten.path, { force: true });
    for (const directory of caBundleWritten.createdDirectories) {
      // Not empty: something else was put there (the sandbox CLI's endpoints.json), so it stays.
      await rmdir(directory).catch(() => undefined);
    }
  };
  try {
    const tokenServer: ManagedIdentityTokenServer = await startManagedIdentityTokenServer({ tokens, faults, statistics, identityHeader });
    running.push(tokenServer);
    const armServer: ArmServer = await startArmServer({ certificate: armCertificate, identities, tokens, faults, statistics });
    running.push(armServer);
    const cosmosServer: CosmosServer = await startCosmosServer({
      certificate: cosmosCertificate,
      masterKey: cosmosKey,
      tokens,
      faults,
      statistics,
      databaseName: database,
      containerName: sandboxContainerName,
    });
    running.push(cosmosServer);
    const documents = cosmosServer.documents;
    const adminServer: AdminServer = await startAdminServer({ adminToken, identities, documents, faults, statistics, tokens });
    running.push(adminServer);

    agent = new Agent({ ca: cosmosCertificate.certificatePem, keepAlive: true });
    client = new CosmosClient({ endpoint: cosmosServer.endpoint, key: cosmosKey, agent });
    const { database: databaseHandle } = await client.databases.createIfNotExists({ id: database });
    const { container: cosmosContainer } = await databaseHandle.containers.createIfNotExists({
      id: sandboxContainerName,
      partitionKey: { paths: ["/partitionKey"] },
    });
    statistics.reset();

    const connection: SandboxConnection = {
      endpoints: { arm: armServer.endpoint, cosmos: cosmosServer.endpoint, identity: tokenServer.endpoint, admin: adminServer.endpoint },
      armCertificatePem: armCertificate.certificatePem,
      cosmosCertificatePem: cosmosCertificate.certificatePem,
      caBundlePem: `${armCertificate.certificatePem.trim()}\n${cosmosCertificate.certificatePem.trim()}\n`,
      cosmosKey,
      identityHeader,
      adminToken,
      database,
      container: sandboxContainerName,
    };
    let caBundlePath: string | undefined;
    if (options.certificateDirectory !== undefined) {
      const firstCreated = await mkdir(options.certificateDirectory, { recursive: true });
      caBundlePath = join(options.certificateDirectory, "ca.pem");
      caBundleWritten = {
        path: caBundlePath,
        pem: connection.caBundlePem,
        createdDirectories: firstCreated === undefined ? [] : createdBetween(firstCreated, options.certificateDirectory),
      };
      await writeFile(caBundlePath, connection.caBundlePem, { mode: 0o644 });
    }
    return {
      ...connection,
      ...(caBundlePath === undefined ? {} : { caBundlePath }),
      identities,
      faults,
      statistics,
      tokens,
      documents,
      cosmosContainer,
      connection: () => structuredClone(connection),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The directories from `firstCreated` down to `directory` (both included), deepest first. */
function createdBetween(firstCreated: string, directory: string): string[] {
  const created: string[] = [];
  for (let current = resolve(directory); ; current = dirname(current)) {
    created.push(current);
    if (current === resolve(firstCreated) || dirname(current) === current) return created;
  }
}
