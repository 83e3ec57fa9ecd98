/**
 * One set of Azure clients per provider process: one credential (tokens cached until expiry by
 * @azure/identity and the bearer-token policy), one keep-alive HTTPS agent, one Cosmos client and
 * one arm-msi client per subscription over one shared request pipeline, shared by every resource
 * the process handles.
 * The cache is a module variable: the provider host requires this module (providerLoader.ts), so
 * every resource of the process sees the same module instance.
 */
import type { ManagedServiceIdentityClient } from "@azure/arm-msi";
import type { Container } from "@azure/cosmos";
import { createHash } from "node:crypto";
import type { AgentOptions } from "node:https";
import { Agent } from "node:https";
import { createSecureContext, rootCertificates } from "node:tls";
import { boundedMemo } from "../core/boundedMemo";
import { createConcurrencyLimiter } from "../sync/concurrencyLimiter";
import type { ConcurrencyLimiter } from "../sync/concurrencyLimiter";
import type { Settings } from "../core/settings";
import { createCredentials } from "../azure/credentials";
import type { TokenCredential } from "@azure/identity";
import { isLoopbackHost } from "../core/settings";
import type { CertificateIdentity } from "../core/settings";
import { certificateFileCredential } from "../azure/certificateCredential";
import type { TokenRequestPipeline } from "../azure/assertionTokenCredential";
import { assertionTokenCredential, createTokenRequestPipeline } from "../azure/assertionTokenCredential";
import { requestCredentialOptions, requestCredentialPolicy } from "../azure/requestCredentialPolicy";
import type { ClusterCredentialSource } from "../azure/clusterCredentials";
import type { MsiAnswerSource } from "../azure/msiAnswers";
import { createClusterCredentialSource } from "../azure/clusterCredentials";
import type { ManagedIdentitiesDataPlane } from "../azure/managedIdentitiesDataPlane";
import { createManagedIdentitiesDataPlane, fetchServiceManagedIdentityCredential } from "../azure/managedIdentitiesDataPlane";
import { dataPlaneMsiAnswers, standInMsiAnswers } from "../azure/msiAnswers";
import { dataPlaneHostsOf } from "../core/identityUrl";
import { sharedTokenCredential } from "../azure/sharedTokenCredential";
import { describeCredentialMode, readCertificateFile } from "./adapterDescriptions";
import type { DocumentStore } from "../cosmos/documentStore";
import { createDocumentStore } from "../cosmos/documentStore";
import type { UserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import { createUserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";

/** The adapters a provider process uses. */
export interface AzureAdapters {
  readonly documentStore: DocumentStore;
  readonly userAssignedIdentityReader: UserAssignedIdentityReader;
  /** Process-wide: the lookup concurrency holds across every resource the process handles. */
  readonly limiter: ConcurrencyLimiter;
  /** The credential in use, named for AzureAccessError messages. */
  readonly credentialDescription?: string;
  /** Mode `clusterServiceManagedIdentity`: each cluster's reader, of its own service managed identity. */
  readonly clusterCredentials?: ClusterCredentialSource;
  /** Where the MSI half's answers come from (the data plane, or the fixed identity's stand-in); absent: ARM. */
  readonly msiAnswers?: MsiAnswerSource;
}

/** How long Entra ID's refusal of the first party in one tenant answers for that tenant without asking again. */
export const firstPartyRefusalHoldInMs = 30 * 1000;

/** Per-subscription arm-msi clients a process keeps before it starts over (azureAdapters.ts buildAdapters). */
const maxArmClients = 4096;

/** Adapters by settings fingerprint: one set per distinct configuration in the process. */
const adaptersBySettings = new Map<string, AzureAdapters>();
const userAgentPrefix = "aro-hcp-identity-status";

/** The process's adapters for these settings, built on first use. */
export function sharedAzureAdapters(settings: Settings): AzureAdapters {
  const fingerprint = settingsFingerprint(settings);
  let adapters = adaptersBySettings.get(fingerprint);
  if (adapters === undefined) {
    adapters = buildAdapters(settings);
    adaptersBySettings.set(fingerprint, adapters);
  }
  return adapters;
}

function settingsFingerprint(settings: Settings): string {
  // Hash, so the Cosmos key never sits in a map key or a heap snapshot string.
  return createHash("sha256").update(JSON.stringify(settings)).digest("hex");
}

function buildAdapters(settings: Settings): AzureAdapters {
  const agentOptions: AgentOptions = { keepAlive: true, maxSockets: Math.max(16, settings.lookupConcurrency * 2) };
  if (settings.tlsCaFile !== undefined) {
    // Trust the extra CA for these clients only; the system roots stay trusted for real Azure.
    // One secure context, built once: an agent `ca` option is parsed again for every new
    // connection, and https.Agent#getName concatenates it (the system roots included) into the
    // pool key of every request.
    agentOptions.secureContext = createSecureContext({ ca: [...rootCertificates, readCertificateFile(settings.tlsCaFile)] });
  }
  const agent = new Agent(agentOptions);
  // core-rest-pipeline's request logging (AZURE_LOG_LEVEL=info) serializes the request with its
  // agent, whose open sockets hold raw request headers, bearer tokens included; log a name instead.
  Object.defineProperty(agent, "toJSON", { value: () => "[https.Agent]", enumerable: false });
  // One token request per scope per process, whichever client asks first (sharedTokenCredential.ts).
  const credentials = createCredentials(settings);
  // Cosmos DB is the service's own account: the process credential in every mode.
  const cosmosCredential = sharedTokenCredential(credentials.cosmos);
  // fixedIdentity: one service principal plays every cluster's service managed identity.
  const armCredential = sharedTokenCredential(
    settings.credentialMode === "fixedIdentity" && settings.fixedIdentity !== undefined
      ? fileCredential(settings, settings.fixedIdentity, agent)
      : credentials.arm,
  );
  // Every subscription's client sends through the first client's pipeline (its policies, bearer
  // token policy included, hold nothing per subscription), so a fleet whose clusters each sit in
  // their own subscription does not hold a pipeline per cluster (docs/performance.md has the
  // figures). Bounded, because a long-lived process could see any number of subscriptions.
  let pipeline: ManagedServiceIdentityClient["pipeline"] | undefined;
  const clientFor = boundedMemo((subscriptionId: string): ManagedServiceIdentityClient => {
    // Loaded at the first lookup: a refresh before the recheck time makes none, and never loads it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ManagedServiceIdentityClient } = require("@azure/arm-msi") as typeof import("@azure/arm-msi");
    const client = new ManagedServiceIdentityClient(armCredential, subscriptionId, {
      ...armClientOptions(settings, agent),
      ...(pipeline === undefined ? {} : { pipeline }),
    });
    pipeline ??= client.pipeline;
    return client;
  }, maxArmClients);
  // Loaded at the first document read or write: a no-op `up` whose inputs declare the operators
  // makes none, and loading @azure/cosmos holds the provider host's one thread.
  let store: DocumentStore | undefined;
  const storeOf = (): DocumentStore => {
    if (store === undefined) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { CosmosClient } = require("@azure/cosmos") as typeof import("@azure/cosmos");
      const cosmosClient = new CosmosClient({
        endpoint: settings.cosmosEndpoint,
        ...(settings.cosmosKey === undefined ? { aadCredentials: cosmosCredential } : { key: settings.cosmosKey }),
        agent,
        userAgentSuffix: userAgentPrefix,
      });
      const container: Container = cosmosClient.database(settings.cosmosDatabase).container(settings.cosmosContainer);
      // The endpoint as configured, so a missing database or container is reported with it.
      store = createDocumentStore(container, { endpoint: settings.cosmosEndpoint });
    }
    return store;
  };
  return {
    documentStore: {
      location: { endpoint: settings.cosmosEndpoint, database: settings.cosmosDatabase, container: settings.cosmosContainer },
      readDocument: async (partitionKey, id) => storeOf().readDocument(partitionKey, id),
      patchDocument: async (partitionKey, id, operations, ifMatchEtag) => storeOf().patchDocument(partitionKey, id, operations, ifMatchEtag),
    },
    // The same shared credential and scope the clients' bearer-token policy asks, so the GET finds the token cached.
    userAssignedIdentityReader: createUserAssignedIdentityReader(clientFor, ({ abortSignal }) => armCredential.getToken(settings.armScope, { abortSignal })),
    limiter: createConcurrencyLimiter(settings.lookupConcurrency),
    credentialDescription: describeCredentialMode(settings, credentials.description),
    ...modeSources(settings, agent, credentials.arm),
  };
}

/**
 * What a credential mode adds: in `clusterServiceManagedIdentity`, each cluster's own reader and
 * the data plane's answers for the MSI half, both from one data plane client; in `fixedIdentity`,
 * upstream's stand-in answers; in `processCredential`, nothing (both halves read through ARM).
 */
function modeSources(settings: Settings, agent: Agent, processCredential: TokenCredential): Pick<AzureAdapters, "clusterCredentials" | "msiAnswers"> {
  if (settings.credentialMode === "fixedIdentity" && settings.fixedIdentity !== undefined && settings.fixedIdentityPrincipalId !== undefined) {
    const { fixedIdentity, fixedIdentityPrincipalId: principalId, allowFixedIdentityOverwrite: overwriteAllowed } = settings;
    return { msiAnswers: standInMsiAnswers({ clientId: fixedIdentity.clientId, principalId, overwriteAllowed }) };
  }
  if (settings.credentialMode !== "clusterServiceManagedIdentity") return {};
  const firstParty =
    settings.firstParty === undefined ? processCredential : fileCredential(settings, settings.firstParty, agent, { additionallyAllowedTenants: ["*"] });
  const dataPlane = createManagedIdentitiesDataPlane({
    // A refusal is held per tenant: the clusters whose data plane challenges elsewhere still ask.
    firstPartyCredential: sharedTokenCredential(firstParty, Date.now, { holdFailuresForMs: firstPartyRefusalHoldInMs }),
    audience: settings.dataPlaneAudience ?? "",
    hosts: dataPlaneHostsOf(settings),
    agent,
    userAgentPrefix,
  });
  return { clusterCredentials: clusterCredentialSource(settings, agent, dataPlane), msiAnswers: dataPlaneMsiAnswers(dataPlane) };
}

/**
 * `clusterServiceManagedIdentity`: the first party (its certificate file, else the process
 * credential) asks the data plane for each cluster's SMI credential. Each SMI gets its own token
 * cache (assertionTokenCredential.ts: a signed assertion and one request per token); every SMI
 * shares one token request pipeline and one arm-msi pipeline, whose requests carry their SMI's
 * credential (requestCredentialPolicy.ts), so a cluster costs no client of its own.
 */
function clusterCredentialSource(settings: Settings, agent: Agent, dataPlane: ManagedIdentitiesDataPlane): ClusterCredentialSource {
  let tokenPipeline: TokenRequestPipeline | undefined;
  let pipeline: ManagedServiceIdentityClient["pipeline"] | undefined;
  const clientFor = boundedMemo((subscriptionId: string): ManagedServiceIdentityClient => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ManagedServiceIdentityClient } = require("@azure/arm-msi") as typeof import("@azure/arm-msi");
    if (pipeline === undefined) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const core = require("@azure/core-rest-pipeline") as typeof import("@azure/core-rest-pipeline");
      const first = new ManagedServiceIdentityClient(noCredential, subscriptionId, armClientOptions(settings, agent));
      first.pipeline.removePolicy({ name: core.bearerTokenAuthenticationPolicyName });
      first.pipeline.addPolicy(requestCredentialPolicy(settings.armScope, core.bearerTokenAuthenticationPolicyName), { phase: "Sign" });
      pipeline = first.pipeline;
      return first;
    }
    return new ManagedServiceIdentityClient(noCredential, subscriptionId, { ...armClientOptions(settings, agent), pipeline });
  }, maxArmClients);
  return createClusterCredentialSource({
    fetchCredential: (identityUrl, smi, options) => fetchServiceManagedIdentityCredential(dataPlane, identityUrl, smi, options),
    credentialFor: (answer) =>
      sharedTokenCredential(
        assertionTokenCredential(answer.tenantId, answer.clientId, answer.material, {
          authorityHost: answer.authenticationEndpoint,
          pipeline: (tokenPipeline ??= createTokenRequestPipeline({ agent, userAgentPrefix })),
        }),
      ),
    armClientFor: (_credential, subscriptionId) => clientFor(subscriptionId),
    operationOptionsFor: (credential) => requestCredentialOptions(credential),
    acquireArmToken: (credential, abortSignal) => credential.getToken(settings.armScope, { abortSignal }),
  });
}

/** The SMIs' shared arm-msi pipeline takes each request's credential from the request (requestCredentialPolicy.ts). */
const noCredential: TokenCredential = {
  getToken: () => Promise.reject(new Error("the service managed identities' ARM clients take each request's credential from the request")),
};

/** What every arm-msi client of the process is built with, whatever its credential. */
function armClientOptions(settings: Settings, agent: Agent): import("@azure/arm-msi").ManagedServiceIdentityClientOptionalParams {
  return {
    endpoint: settings.armEndpoint,
    credentialScopes: [settings.armScope],
    agent,
    userAgentOptions: { userAgentPrefix },
    // lookUpIdentity.ts retries, releasing its concurrency slot while it waits.
    retryOptions: { maxRetries: 0 },
  };
}

/** The credential of a certificate bundle file (the first party's, the fixed identity's) at the configured authority. */
function fileCredential(
  settings: Settings,
  identity: CertificateIdentity,
  agent: Agent,
  options: { readonly additionallyAllowedTenants?: readonly string[] } = {},
): TokenCredential {
  return certificateFileCredential(identity, {
    authorityHost: settings.authorityHost,
    disableInstanceDiscovery: isLoopbackHost(new URL(settings.authorityHost).hostname),
    agent,
    ...options,
  });
}
