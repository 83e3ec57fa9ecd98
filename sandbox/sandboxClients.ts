import { Agent } from "node:https";
import type { TokenCredential } from "@azure/core-auth";
import { ManagedServiceIdentityClient } from "@azure/arm-msi";
import { CosmosClient } from "@azure/cosmos";
import type { SandboxConnection } from "./sandbox";

/** The scope real ARM tokens are issued for; the fake ARM accepts it. */
export const armScope = "https://management.azure.com/.default";

/**
 * Points `@azure/identity`'s ManagedIdentityCredential at the sandbox token endpoint. Set it before
 * constructing the credential. Note that @azure/identity (MSAL) caches managed-identity tokens per
 * process, across credential instances.
 *
 * @param connection - The sandbox connection details.
 */
export function useSandboxManagedIdentityEnvironment(connection: SandboxConnection): void {
  process.env.IDENTITY_ENDPOINT = connection.endpoints.identity;
  process.env.IDENTITY_HEADER = connection.identityHeader;
}

/**
 * @param certificatePem - The server certificate to trust.
 * @returns A keep-alive agent that trusts only that certificate (no global TLS override).
 */
export function createTrustingAgent(certificatePem: string): Agent {
  return new Agent({ ca: certificatePem, keepAlive: true });
}

/**
 * A real arm-msi client against the fake ARM, with the real token scope and a keep-alive agent.
 *
 * @param connection - The sandbox connection details.
 * @param credential - E.g. a ManagedIdentityCredential using the sandbox token endpoint.
 * @param subscriptionId - The subscription the client is bound to.
 * @param agent - The agent to use; a new trusting agent when omitted (destroy it when done).
 * @returns The client.
 */
export function createSandboxManagedServiceIdentityClient(
  connection: SandboxConnection,
  credential: TokenCredential,
  subscriptionId: string,
  agent: Agent = createTrustingAgent(connection.armCertificatePem),
): ManagedServiceIdentityClient {
  return new ManagedServiceIdentityClient(credential, subscriptionId, {
    endpoint: connection.endpoints.arm,
    credentialScopes: [armScope],
    agent,
  });
}

/**
 * A real CosmosClient against the sandbox, with the master key (or another key, to test 401).
 *
 * @param connection - The sandbox connection details.
 * @param key - The key to sign with; the sandbox key when omitted.
 * @returns The client; call `dispose()` when done.
 */
export function createSandboxCosmosClient(connection: SandboxConnection, key: string = connection.cosmosKey): CosmosClient {
  return new CosmosClient({ endpoint: connection.endpoints.cosmos, key, agent: createTrustingAgent(connection.cosmosCertificatePem) });
}
