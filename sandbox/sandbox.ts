import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type Container, CosmosClient } from "@azure/cosmos";
import { type AdminServer, startAdminServer } from "./adminServer";
import { type ArmServer, startArmServer } from "./armServer";
import { createSandboxCertificate } from "./certificate";
import { SandboxCertificateAuthority } from "./certificateAuthority";
import type { CosmosDocumentStore } from "./cosmosDocumentStore";
import { type CosmosServer, startCosmosServer } from "./cosmosServer";
import { type DataPlaneServer, startDataPlaneServer } from "./dataPlaneServer";
import { EntraDirectory } from "./entraDirectory";
import { type EntraServer, startEntraServer } from "./entraServer";
import { FaultInjector } from "./faultInjector";
import { IdentityStore } from "./identityStore";
import { type ManagedIdentityTokenServer, startManagedIdentityTokenServer } from "./managedIdentityTokenServer";
import { dataPlaneApiVersion, defaultDataPlaneAudience, type FilePrincipalConnection, SandboxCredentials, serviceTenantId } from "./sandboxCredentials";
import { RequestRecorder } from "./requestRecorder";
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
   * When given, the CA bundle is written there as `ca.pem` (the directory is created), and so are
   * the certificate bundles of the first-party application (`first-party-application.pem`) and the
   * fixed identity (`fixed-identity.pem`). `stop` removes the files it wrote, and the directory
   * when this call created it and nothing else was put in it. Without it, the two bundles go to a
   * temporary directory that `stop` removes.
   */
  certificateDirectory?: string;
  /**
   * Per-cluster mode: tokens of the managed-identity endpoint (the process credential) are
   * authorized by role assignment like any other caller, so they read no identity unless granted;
   * each cluster's data plane operator identities are readable by its own SMI (and the fixed
   * identity) only. Default false: the process credential reads every identity, as before.
   */
  perClusterCredentials?: boolean;
  /** The audience of the Managed Identities data plane (default `https://identity.sandbox.azure.net`). */
  dataPlaneAudience?: string;
  /**
   * RSA keys the client certificate CA shares among the leaf certificates it issues (default 0: a
   * fresh key each). A benchmark of thousands of service managed identities sets it: each key is
   * costly in CPU to make (`SandboxCertificateAuthority.create`).
   */
  clientCertificateKeyPoolSize?: number;
  /**
   * The tenant the data plane's bearer challenge names for every cluster (default: each cluster's
   * own tenant, which its identity URL names as `tid`). The first-party application gets a service
   * principal there (a multi-tenant application) and the data plane accepts its token of that
   * tenant only. The admin API (`PUT /dataplane/challengeTenant`) changes it for all or some clusters.
   */
  dataPlaneChallengeTenantId?: string;
}

/** The URLs of the sandbox servers, all on 127.0.0.1. */
export interface SandboxEndpoints {
  /** Fake ARM, `https://127.0.0.1:<port>`. */
  arm: string;
  /** Cosmos, `https://127.0.0.1:<port>`. */
  cosmos: string;
  /** Managed-identity token URL, the value for `IDENTITY_ENDPOINT`. */
  identity: string;
  /** Admin API, `http://127.0.0.1:<port>`. */
  admin: string;
  /** The sandbox Entra (authority host), `https://127.0.0.1:<port>`. */
  entra: string;
  /** The Managed Identities data plane, `https://127.0.0.1:<port>`. */
  dataPlane: string;
}

/** What a hook or test needs for the per-cluster credential chain; plain JSON, no secret. */
export interface SandboxCredentialChain {
  /** Whether the sandbox runs in per-cluster mode (see {@link SandboxOptions.perClusterCredentials}). */
  perClusterCredentials: boolean;
  /** The authority host for `@azure/identity` (`authorityHost`), `https://127.0.0.1:<port>`. */
  entraAuthorityHost: string;
  /** The service tenant: the first-party application's and the fixed identity's. */
  serviceTenantId: string;
  /** The data plane audience; ask for `<audience>/.default`. */
  dataPlaneAudience: string;
  /** `2024-01-01`: the caller adds `api-version=` this to the identity URL. */
  dataPlaneApiVersion: string;
  /** The CA that issues the client certificates (not a TLS CA). */
  clientCertificateAuthorityPem: string;
  /** The service's first-party application: client ID, tenant, object ID and bundle file. */
  firstPartyApplication: FilePrincipalConnection;
  /** The fixed identity (upstream's non-production stand-in) that may read every identity. */
  fixedIdentity: FilePrincipalConnection;
}

/** Everything a client in another process needs to use the sandbox; plain JSON. */
export interface SandboxConnection {
  endpoints: SandboxEndpoints;
  /** The ARM server's self-signed certificate (PEM), to trust as a CA. */
  armCertificatePem: string;
  /** The Cosmos server's self-signed certificate (PEM), to trust as a CA. */
  cosmosCertificatePem: string;
  /** The Entra server's self-signed certificate (PEM), to trust as a CA. */
  entraCertificatePem: string;
  /** The data plane server's self-signed certificate (PEM), to trust as a CA. */
  dataPlaneCertificatePem: string;
  /** Every HTTPS server's certificate concatenated (ARM, Cosmos, Entra, data plane). */
  caBundlePem: string;
  /** The Cosmos master key (base64). A throwaway for this sandbox run only. */
  cosmosKey: string;
  /** The value for `IDENTITY_HEADER`. */
  identityHeader: string;
  /** The bearer token of the admin API. */
  adminToken: string;
  database: string;
  container: string;
  /** The per-cluster credential chain's settings: Entra, data plane, first-party application, fixed identity. */
  credentialChain: SandboxCredentialChain;
}

/** A running sandbox: connection details plus in-process handles. */
export interface Sandbox extends SandboxConnection {
  /** Where the CA bundle was written, when `certificateDirectory` was given. */
  caBundlePath?: string;
  identities: IdentityStore;
  faults: FaultInjector;
  statistics: SandboxStatistics;
  tokens: TokenRegistry;
  /** The client certificate CA, the Entra directory (principals, role assignments) and the data plane's clusters. */
  credentials: SandboxCredentials;
  /** Direct document access: no HTTP, no faults, not counted. */
  documents: CosmosDocumentStore;
  /** The record of what the data plane, Entra and ARM receive, when started (`recorder.start()`). */
  recorder: RequestRecorder;
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
  const recorder = new RequestRecorder();
  const cosmosKey = randomBytes(64).toString("base64");
  const identityHeader = randomBytes(16).toString("hex");
  const adminToken = randomBytes(24).toString("base64url");
  const [armCertificate, cosmosCertificate, entraCertificate, dataPlaneCertificate, authority] = await Promise.all([
    createSandboxCertificate("sandbox-arm"),
    createSandboxCertificate("sandbox-cosmos"),
    createSandboxCertificate("sandbox-entra"),
    createSandboxCertificate("sandbox-data-plane"),
    SandboxCertificateAuthority.create(undefined, { leafKeyPoolSize: options.clientCertificateKeyPoolSize ?? 0 }),
  ]);
  const credentials = new SandboxCredentials(authority, new EntraDirectory(), {
    dataPlaneAudience: options.dataPlaneAudience ?? defaultDataPlaneAudience,
    perClusterCredentials: options.perClusterCredentials ?? false,
  });
  let temporaryDirectory: string | undefined;

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
    await credentials.close();
    await removeCaBundle();
    if (temporaryDirectory !== undefined) await rm(temporaryDirectory, { recursive: true, force: true });
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
  let principalsReady: Promise<void> = Promise.resolve();
  try {
    // The bundle files of the first-party application and the fixed identity: certificateDirectory, or a temporary one.
    let principalDirectory: string;
    if (options.certificateDirectory !== undefined) {
      const firstCreated = await mkdir(options.certificateDirectory, { recursive: true });
      caBundleWritten = {
        path: join(options.certificateDirectory, "ca.pem"),
        pem: "",
        createdDirectories: firstCreated === undefined ? [] : createdBetween(firstCreated, options.certificateDirectory),
      };
      principalDirectory = options.certificateDirectory;
    } else {
      temporaryDirectory = await mkdtemp(join(tmpdir(), "aro-hcp-sandbox-"));
      principalDirectory = temporaryDirectory;
    }
    // Issued (RSA key generation) while the servers start.
    principalsReady = credentials.setUpServicePrincipals(principalDirectory);
    principalsReady.catch(() => undefined);
    const tokenServer: ManagedIdentityTokenServer = await startManagedIdentityTokenServer({ tokens, faults, statistics, identityHeader });
    running.push(tokenServer);
    const armServer: ArmServer = await startArmServer({ certificate: armCertificate, identities, tokens, faults, statistics, credentials, recorder });
    running.push(armServer);
    const entraServer: EntraServer = await startEntraServer({ certificate: entraCertificate, credentials, tokens, faults, statistics, recorder });
    running.push(entraServer);
    const dataPlaneServer: DataPlaneServer = await startDataPlaneServer({
      certificate: dataPlaneCertificate,
      credentials,
      tokens,
      faults,
      statistics,
      identities,
      recorder,
    });
    running.push(dataPlaneServer);
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
    const adminServer: AdminServer = await startAdminServer({ adminToken, identities, documents, faults, statistics, tokens, credentials, recorder });
    running.push(adminServer);

    agent = new Agent({ ca: cosmosCertificate.certificatePem, keepAlive: true });
    client = new CosmosClient({ endpoint: cosmosServer.endpoint, key: cosmosKey, agent });
    const { database: databaseHandle } = await client.databases.createIfNotExists({ id: database });
    const { container: cosmosContainer } = await databaseHandle.containers.createIfNotExists({
      id: sandboxContainerName,
      partitionKey: { paths: ["/partitionKey"] },
    });
    statistics.reset();

    await principalsReady;
    if (options.dataPlaneChallengeTenantId !== undefined) credentials.setChallengeTenant(options.dataPlaneChallengeTenantId);
    let caBundlePath: string | undefined;

    const certificates = [armCertificate, cosmosCertificate, entraCertificate, dataPlaneCertificate];
    const connection: SandboxConnection = {
      endpoints: {
        arm: armServer.endpoint,
        cosmos: cosmosServer.endpoint,
        identity: tokenServer.endpoint,
        admin: adminServer.endpoint,
        entra: entraServer.authorityHost,
        dataPlane: dataPlaneServer.endpoint,
      },
      armCertificatePem: armCertificate.certificatePem,
      cosmosCertificatePem: cosmosCertificate.certificatePem,
      entraCertificatePem: entraCertificate.certificatePem,
      dataPlaneCertificatePem: dataPlaneCertificate.certificatePem,
      caBundlePem: `${certificates.map((certificate) => certificate.certificatePem.trim()).join("\n")}\n`,
      cosmosKey,
      identityHeader,
      adminToken,
      database,
      container: sandboxContainerName,
      credentialChain: {
        perClusterCredentials: credentials.settings.perClusterCredentials,
        entraAuthorityHost: entraServer.authorityHost,
        serviceTenantId,
        dataPlaneAudience: credentials.settings.dataPlaneAudience,
        dataPlaneApiVersion,
        clientCertificateAuthorityPem: authority.certificatePem,
        firstPartyApplication: credentials.filePrincipal("firstPartyApplication"),
        fixedIdentity: credentials.filePrincipal("fixedIdentity"),
      },
    };
    if (caBundleWritten !== undefined) {
      caBundlePath = caBundleWritten.path;
      caBundleWritten.pem = connection.caBundlePem;
      await writeFile(caBundlePath, connection.caBundlePem, { mode: 0o644 });
    }
    return {
      ...connection,
      ...(caBundlePath === undefined ? {} : { caBundlePath }),
      identities,
      faults,
      statistics,
      tokens,
      credentials,
      documents,
      recorder,
      cosmosContainer,
      connection: () => structuredClone(connection),
      stop,
    };
  } catch (error) {
    await principalsReady.catch(() => undefined);
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
