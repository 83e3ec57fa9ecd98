/**
 * One set of Azure clients per provider process and configuration: one credential, one keep-alive
 * HTTPS agent, one Cosmos client, and arm-msi clients per subscription over one shared pipeline.
 * A module variable: the provider host requires this module once, so every resource shares it.
 */
import type { ManagedServiceIdentityClient, ManagedServiceIdentityClientOptionalParams } from "@azure/arm-msi";
import type { TokenCredential } from "@azure/identity";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent } from "node:https";
import { createSecureContext, rootCertificates } from "node:tls";
import { assertionTokenCredential, requestCredentialOptions, requestCredentialPolicy } from "../azure/assertionTokenCredential";
import { certificateFileCredential, fileUnreadableReason } from "../azure/certificateCredential";
import type { ClusterCredentialSource } from "../azure/clusterCredentials";
import { createClusterCredentialSource, defaultMaxCredentials } from "../azure/clusterCredentials";
import { createCredentials, sharedTokenCredential } from "../azure/credentials";
import { withCause } from "../core/errors";
import { credentialFor } from "../azure/dataPlaneAnswer";
import type { ManagedIdentitiesDataPlane, TokenRequestPipeline } from "../azure/managedIdentitiesDataPlane";
import { createManagedIdentitiesDataPlane, createTokenRequestPipeline, dataPlaneMsiAnswers, standInMsiAnswers } from "../azure/managedIdentitiesDataPlane";
import { createUserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import type { DocumentStore } from "../cosmos/documentStore";
import { createDocumentStore } from "../cosmos/documentStore";
import { boundedMemo } from "../core/boundedMemo";
import { dataPlaneHostsOf } from "../core/identityUrl";
import type { CertificateIdentity, Settings } from "../core/settings";
import { isLoopbackHost } from "../core/settings";
import { keys, settingName } from "../core/settingsKeys";
import { createConcurrencyLimiter } from "../sync/concurrencyLimiter";
import type { SyncDependencies } from "../sync/syncDependencies";

/** The pass's dependencies that reach Azure; the limiter is process-wide, so the lookup concurrency holds across every resource. */
export type AzureAdapters = Pick<
  SyncDependencies,
  "documentStore" | "userAssignedIdentityReader" | "limiter" | "credentialDescription" | "clusterCredentials" | "msiAnswers"
>;

/** How long Entra ID's refusal of the first party in one tenant answers for that tenant. */
const firstPartyRefusalHoldInMs = 30 * 1000;
const maxArmClients = 4096;

const adaptersBySettings = new Map<string, AzureAdapters>();
const userAgentPrefix = "aro-hcp-identity-status";

/** The process's adapters for these settings, built on first use. */
export function sharedAzureAdapters(settings: Settings): AzureAdapters {
  // Hashed, so the Cosmos key never sits in a map key or a heap snapshot string.
  const fingerprint = createHash("sha256").update(JSON.stringify(settings)).digest("hex");
  const adapters = adaptersBySettings.get(fingerprint) ?? buildAdapters(settings);
  adaptersBySettings.set(fingerprint, adapters);
  return adapters;
}

function buildAdapters(settings: Settings): AzureAdapters {
  const agent = new Agent({
    keepAlive: true,
    maxSockets: Math.max(16, settings.lookupConcurrency * 2),
    // The extra CA for these clients only, beside the system roots. One secure context: an agent's
    // `ca` option is parsed again per connection and concatenated into every request's pool key.
    ...(settings.tlsCaFile === undefined ? {} : { secureContext: createSecureContext({ ca: [...rootCertificates, readCertificateFile(settings.tlsCaFile)] }) }),
  });
  // core-rest-pipeline's request logging serializes the agent, whose sockets hold bearer tokens.
  Object.defineProperty(agent, "toJSON", { value: () => "[https.Agent]", enumerable: false });
  const credentials = createCredentials(settings);
  // Cosmos DB is the service's own account: the process credential in every mode.
  const cosmosCredential = sharedTokenCredential(credentials.cosmos);
  // fixedIdentity: one service principal plays every cluster's service managed identity.
  const fixedIdentity = settings.credentialMode === "fixedIdentity" ? settings.fixedIdentity : undefined;
  const armCredential = sharedTokenCredential(fixedIdentity === undefined ? credentials.arm : fileCredential(settings, fixedIdentity, agent));
  const clientFor = armClients(settings, agent, armCredential);
  // Loaded at the first document read or write: a no-op `up` whose inputs declare the operators
  // makes none, and loading @azure/cosmos holds the provider host's one thread.
  let store: DocumentStore | undefined;
  const openStore = (): DocumentStore => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { CosmosClient } = require("@azure/cosmos") as typeof import("@azure/cosmos");
    const cosmosClient = new CosmosClient({
      endpoint: settings.cosmosEndpoint,
      ...(settings.cosmosKey === undefined ? { aadCredentials: cosmosCredential } : { key: settings.cosmosKey }),
      agent,
      userAgentSuffix: userAgentPrefix,
    });
    return createDocumentStore(cosmosClient.database(settings.cosmosDatabase).container(settings.cosmosContainer), { endpoint: settings.cosmosEndpoint });
  };
  return {
    documentStore: {
      location: { endpoint: settings.cosmosEndpoint, database: settings.cosmosDatabase, container: settings.cosmosContainer },
      readDocument: async (partitionKey, id) => (store ??= openStore()).readDocument(partitionKey, id),
      patchDocument: async (partitionKey, id, operations, ifMatchEtag) => (store ??= openStore()).patchDocument(partitionKey, id, operations, ifMatchEtag),
    },
    // The same shared credential and scope the clients' bearer-token policy asks, so the GET finds the token cached.
    userAssignedIdentityReader: createUserAssignedIdentityReader(clientFor, ({ abortSignal }) => armCredential.getToken(settings.armScope, { abortSignal })),
    limiter: createConcurrencyLimiter(settings.lookupConcurrency),
    credentialDescription: describeCredentialMode(settings, credentials.description),
    ...modeSources(settings, agent, credentials.arm),
  };
}

/**
 * arm-msi clients by subscription, every one sending through the first client's pipeline (whose
 * policies hold nothing per subscription), so a fleet of subscriptions holds one pipeline. The SDK
 * loads at the first lookup. `adapt` changes the first pipeline before it is shared.
 */
function armClients(
  settings: Settings,
  agent: Agent,
  credential: TokenCredential,
  adapt?: (pipeline: ManagedServiceIdentityClient["pipeline"]) => void,
  bound: number = maxArmClients,
): (subscriptionId: string) => ManagedServiceIdentityClient {
  const options: ManagedServiceIdentityClientOptionalParams = {
    endpoint: settings.armEndpoint,
    credentialScopes: [settings.armScope],
    agent,
    userAgentOptions: { userAgentPrefix },
    // lookUpIdentity.ts retries, releasing its concurrency slot while it waits.
    retryOptions: { maxRetries: 0 },
  };
  let pipeline: ManagedServiceIdentityClient["pipeline"] | undefined;
  return boundedMemo((subscriptionId: string): ManagedServiceIdentityClient => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { ManagedServiceIdentityClient } = require("@azure/arm-msi") as typeof import("@azure/arm-msi");
    const client = new ManagedServiceIdentityClient(credential, subscriptionId, pipeline === undefined ? options : { ...options, pipeline });
    if (pipeline === undefined) {
      adapt?.(client.pipeline);
      pipeline = client.pipeline;
    }
    return client;
  }, bound);
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
 * The first party asks the data plane for each cluster's SMI credential. Each SMI has its own token
 * cache; every SMI shares one token request pipeline and one arm-msi pipeline whose requests carry
 * their SMI's credential (requestCredentialPolicy), so a cluster costs no client of its own.
 */
function clusterCredentialSource(settings: Settings, agent: Agent, dataPlane: ManagedIdentitiesDataPlane): ClusterCredentialSource {
  let tokenPipeline: TokenRequestPipeline | undefined;
  // Each cluster's reader holds its client, built when its credential is: a client is kept only as long as credentials are.
  const clientFor = armClients(
    settings,
    agent,
    noCredential,
    (pipeline) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { bearerTokenAuthenticationPolicyName } = require("@azure/core-rest-pipeline") as typeof import("@azure/core-rest-pipeline");
      pipeline.removePolicy({ name: bearerTokenAuthenticationPolicyName });
      pipeline.addPolicy(requestCredentialPolicy(settings.armScope, bearerTokenAuthenticationPolicyName), { phase: "Sign" });
    },
    defaultMaxCredentials,
  );
  return createClusterCredentialSource({
    fetchCredential: async (identityUrl, smi, options) => {
      const { tenantId, identities } = await dataPlane.requestCredentials(identityUrl, [smi], options);
      return credentialFor(identities, smi, { tenantId, authorityHost: settings.authorityHost });
    },
    credentialFor: (answer) =>
      sharedTokenCredential(
        assertionTokenCredential(answer.tenantId, answer.clientId, answer.material, {
          authorityHost: answer.authorityHost,
          pipeline: (tokenPipeline ??= createTokenRequestPipeline({ agent, userAgentPrefix })),
        }),
      ),
    armClientFor: (_credential, subscriptionId) => clientFor(subscriptionId),
    operationOptionsFor: (credential) => requestCredentialOptions(credential),
    acquireArmToken: (credential, abortSignal) => credential.getToken(settings.armScope, { abortSignal }),
  });
}

/** The SMIs' shared arm-msi pipeline takes each request's credential from the request. */
const noCredential: TokenCredential = {
  getToken: () => Promise.reject(new Error("the service managed identities' ARM clients take each request's credential from the request")),
};

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

/** The credential in use, for messages; `processCredential` describes the process credential. */
function describeCredentialMode(settings: Settings, processCredential: string): string {
  if (settings.credentialMode === "fixedIdentity" && settings.fixedIdentity !== undefined) {
    return describeCertificateIdentity("the fixed identity", settings.fixedIdentity);
  }
  if (settings.credentialMode !== "clusterServiceManagedIdentity") return processCredential;
  const firstParty = settings.firstParty === undefined ? processCredential : describeCertificateIdentity("the first-party application", settings.firstParty);
  return `each cluster's service managed identity, from the Managed Identities data plane as ${firstParty}`;
}

function describeCertificateIdentity(what: string, identity: CertificateIdentity): string {
  return `${what} ${identity.clientId} in tenant ${identity.tenantId} (certificate bundle ${identity.certificateFile}, ${identity.certificateFileSetting})`;
}

/** Reads the extra CA bundle; a failure names the setting, not only the file system error. */
function readCertificateFile(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const problem = `${settingName(keys.tlsCaFile)} names ${path}, which ${fileUnreadableReason(error)}; expected a PEM bundle of extra CA certificates`;
    throw withCause(new Error(problem), error);
  }
}
