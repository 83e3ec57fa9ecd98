/**
 * The stack config and environment that point the hook at a sandbox. Config carries only
 * non-secret values (endpoints, paths); the Cosmos key and the managed-identity variables go in
 * the environment, so nothing secret reaches the state file.
 */

/** The one stack `npm run pulumi` configures from a running sandbox. */
export const sandboxStackName = "sandbox";

/** What a sandbox tells its users (a subset of `.sandbox/endpoints.json`). */
export interface SandboxDescription {
  readonly endpoints: { readonly arm: string; readonly cosmos: string; readonly identity: string; readonly admin: string };
  readonly caBundlePath: string;
  readonly database: string;
  readonly container: string;
  readonly environment: { readonly COSMOS_KEY: string; readonly IDENTITY_ENDPOINT: string; readonly IDENTITY_HEADER: string };
  /** The demo fleet as a cluster list file (`npm run sandbox` writes it; absent for in-process sandboxes). */
  readonly clustersFile?: string;
  /** The per-cluster credential chain; in per-cluster mode the hook runs in `clusterServiceManagedIdentity` mode. */
  readonly credentialChain?: CredentialChainDescription;
}

/** What the hook needs of a sandbox's credential chain (a subset of `SandboxCredentialChain`). */
export interface CredentialChainDescription {
  readonly perClusterCredentials: boolean;
  readonly entraAuthorityHost: string;
  readonly dataPlaneAudience: string;
  readonly firstPartyApplication: { readonly clientId: string; readonly tenantId: string; readonly certificateBundlePath: string };
}

/**
 * Production's credential mode against a per-cluster sandbox: the first-party application's
 * certificate file, the sandbox's Entra and data plane audience. Nothing for a sandbox in
 * single-credential mode (the process credential then reads every identity).
 */
export function credentialModeSettings(chain: CredentialChainDescription | undefined): Record<string, string> {
  if (chain === undefined || !chain.perClusterCredentials) return {};
  return {
    credentialMode: "clusterServiceManagedIdentity",
    authorityHost: chain.entraAuthorityHost,
    firstPartyClientId: chain.firstPartyApplication.clientId,
    firstPartyTenantId: chain.firstPartyApplication.tenantId,
    firstPartyCertificateFile: chain.firstPartyApplication.certificateBundlePath,
    dataPlaneAudience: chain.dataPlaneAudience,
  };
}

/** Config keys (project namespace) and environment for a sandbox. */
export function sandboxSettings(sandbox: SandboxDescription): { config: Record<string, string>; environment: Record<string, string> } {
  return {
    config: {
      cosmosEndpoint: sandbox.endpoints.cosmos,
      cosmosDatabase: sandbox.database,
      cosmosContainer: sandbox.container,
      armEndpoint: sandbox.endpoints.arm,
      tlsCaFile: sandbox.caBundlePath,
      documentWaitSeconds: "5",
      ...(sandbox.clustersFile === undefined ? {} : { clustersFile: sandbox.clustersFile }),
      ...credentialModeSettings(sandbox.credentialChain),
    },
    environment: {
      COSMOS_KEY: sandbox.environment.COSMOS_KEY,
      IDENTITY_ENDPOINT: sandbox.environment.IDENTITY_ENDPOINT,
      IDENTITY_HEADER: sandbox.environment.IDENTITY_HEADER,
    },
  };
}

/** The settings for a sandbox running in this process (`startSandbox`). */
export function settingsForRunningSandbox(sandbox: {
  readonly endpoints: SandboxDescription["endpoints"];
  readonly caBundlePath?: string;
  readonly database: string;
  readonly container: string;
  readonly cosmosKey: string;
  readonly identityHeader: string;
  readonly credentialChain?: CredentialChainDescription;
}): { config: Record<string, string>; environment: Record<string, string> } {
  return sandboxSettings({
    endpoints: sandbox.endpoints,
    caBundlePath: sandbox.caBundlePath ?? "",
    database: sandbox.database,
    container: sandbox.container,
    environment: { COSMOS_KEY: sandbox.cosmosKey, IDENTITY_ENDPOINT: sandbox.endpoints.identity, IDENTITY_HEADER: sandbox.identityHeader },
    ...(sandbox.credentialChain === undefined ? {} : { credentialChain: sandbox.credentialChain }),
  });
}
