/**
 * Which Azure credential the provider uses, and the errors it raises when none works.
 *
 * - `managedIdentityClientId` set → ManagedIdentityCredential for that user-assigned identity (the
 *   cluster's service managed identity), on IMDS or an App Service style endpoint
 *   (IDENTITY_ENDPOINT/IDENTITY_HEADER).
 * - otherwise → DefaultAzureCredential: EnvironmentCredential (AZURE_CLIENT_SECRET…), then
 *   WorkloadIdentityCredential (AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID: CI
 *   with OIDC federation, AKS workload identity), then ManagedIdentityCredential, then developer
 *   sign-ins (Azure CLI…). `AZURE_TOKEN_CREDENTIALS=prod` keeps only the first three.
 *
 * The Entra ID authority follows `azureCloud` unless AZURE_AUTHORITY_HOST says otherwise.
 * A failure to get a token is rethrown with the same `name` (so errors.ts still classifies it as
 * CredentialUnavailable) and a one-line message saying which key or variable to set. Messages
 * never carry tokens: they are built from the first line of the SDK's messages, redacted.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { redactSecrets } from "../core/retrievalError";
import type { Settings } from "../core/settings";
import { projectName } from "../core/settings";

/** The credential the settings select; pure, so tests can check the selection offline. */
export type CredentialChoice =
  | { readonly kind: "managedIdentity"; readonly clientId: string }
  | {
      readonly kind: "default";
      /** Set when AZURE_AUTHORITY_HOST is not: the cloud's authority. */
      readonly authorityHost: string | undefined;
      /** True when the environment has everything WorkloadIdentityCredential needs. */
      readonly workloadIdentity: boolean;
    };

/** Chooses the credential for these settings and this environment. */
export function chooseCredential(
  settings: Pick<Settings, "managedIdentityClientId" | "authorityHost">,
  environment: Readonly<Record<string, string | undefined>>,
): CredentialChoice {
  if (settings.managedIdentityClientId !== undefined) {
    return { kind: "managedIdentity", clientId: settings.managedIdentityClientId };
  }
  const present = (name: string): boolean => (environment[name] ?? "").trim().length > 0;
  return {
    kind: "default",
    authorityHost: present("AZURE_AUTHORITY_HOST") ? undefined : settings.authorityHost,
    workloadIdentity: present("AZURE_FEDERATED_TOKEN_FILE") && present("AZURE_CLIENT_ID") && present("AZURE_TENANT_ID"),
  };
}

/** One line naming the credential a choice stands for and the settings that select it. */
export function describeCredential(choice: CredentialChoice): string {
  if (choice.kind === "managedIdentity") {
    return `the managed identity with client ID ${choice.clientId} (${clientIdKey})`;
  }
  return choice.workloadIdentity
    ? `DefaultAzureCredential with workload identity federation (${workloadIdentityVariables}), since ${clientIdKey} is not set`
    : `DefaultAzureCredential (environment, workload identity, managed identity, then developer sign-ins), since ${clientIdKey} is not set`;
}

/**
 * The Azure credentials of a provider process: one underlying credential (one token cache), seen
 * through two wrappers whose failures name what to set for ARM and for Cosmos DB respectively.
 */
export function createCredentials(settings: Settings): { readonly arm: TokenCredential; readonly cosmos: TokenCredential; readonly description: string } {
  const choice = chooseCredential(settings, process.env);
  // Playing the first party, it gets tokens in whichever tenant a cluster's data plane challenges in.
  const everyTenant = settings.credentialMode === "clusterServiceManagedIdentity" && settings.firstParty === undefined;
  // Built at the first token request, so @azure/identity (with MSAL) loads only then: a refresh
  // with a Cosmos key and no recheck due asks for none, and the provider host never loads it.
  let built: TokenCredential | undefined;
  const credential: TokenCredential = {
    getToken: (scopes, options) => (built ??= buildCredential(choice, everyTenant)).getToken(scopes, options),
  };
  return {
    arm: withCredentialGuidance(credential, (scopes) => armGuidance(choice, scopes)),
    cosmos: withCredentialGuidance(mapCosmosFallbackScope(credential, settings.cosmosScope), () => cosmosGuidance),
    description: describeCredential(choice),
  };
}

function buildCredential(choice: CredentialChoice, everyTenant: boolean): TokenCredential {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see createCredentials
  const identity = require("@azure/identity") as typeof import("@azure/identity");
  if (choice.kind === "managedIdentity") return new identity.ManagedIdentityCredential({ clientId: choice.clientId });
  return new identity.DefaultAzureCredential({
    ...(choice.authorityHost === undefined ? {} : { authorityHost: choice.authorityHost }),
    ...(everyTenant ? { additionallyAllowedTenants: ["*"] } : {}),
  });
}

/**
 * For `@azure/cosmos` (`aadCredentials`). The SDK asks for the account's own audience
 * (`https://<account>.documents.azure.<tld>/.default`), right in every cloud, and when Entra ID
 * refuses it (AADSTS500011) falls back to `https://cosmos.azure.com/.default`, which is the public
 * cloud's (4.9.3 `ClientContext.js`, `AAD_DEFAULT_SCOPE`). That fallback is mapped to the
 * configured cloud's (`settings.cosmosScope`); setting the SDK's `aadScope` instead would turn
 * off the account audience and the fallback both.
 */
export function mapCosmosFallbackScope(credential: TokenCredential, cosmosScope: string): TokenCredential {
  const publicCloudScope = "https://cosmos.azure.com/.default";
  return {
    getToken: (scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> => {
      const list = (Array.isArray(scopes) ? scopes : [scopes]).map((scope) => (scope === publicCloudScope ? cosmosScope : scope));
      return credential.getToken(list, options);
    },
  };
}

const credentialErrorNames = new Set(["CredentialUnavailableError", "AuthenticationError", "AggregateAuthenticationError", "AuthenticationRequiredError"]);

const workloadIdentityVariables = "AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE";
const clientIdKey = `'${projectName}:managedIdentityClientId' (or ARO_HCP_MANAGED_IDENTITY_CLIENT_ID)`;

// At most ~280 characters: describeCosmosError keeps the first 300 of a Cosmos error's message.
const cosmosGuidance =
  `no Azure credential could get a Cosmos DB token; set COSMOS_KEY (or \`pulumi config set --secret ${projectName}:cosmosKey\`) ` +
  `to use the account key, or '${projectName}:managedIdentityClientId' or AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_FEDERATED_TOKEN_FILE for Entra ID`;

function armGuidance(choice: CredentialChoice, scopes: readonly string[]): string {
  const audience = scopes.join(", ");
  if (choice.kind === "managedIdentity") {
    return (
      `the managed identity with client ID ${choice.clientId} (${clientIdKey}) could not get a token for ${audience}; ` +
      `check that this identity is assigned to the host running Pulumi (IMDS, or IDENTITY_ENDPOINT and IDENTITY_HEADER) and that the client ID is right`
    );
  }
  return (
    `no Azure credential could get a token for ${audience}: set ${clientIdKey} to the client ID of the cluster's service managed identity, ` +
    `or ${workloadIdentityVariables} for workload identity federation, or sign in with \`az login\``
  );
}

/** What each credential in a chain said, first sentence each, on one line. */
function describeCause(error: { message?: unknown; errors?: unknown }): string {
  const firstSentence = (text: unknown): string => {
    const line =
      String(text)
        .split(/\r?\n/)
        .find((candidate) => candidate.trim().length > 0) ?? "";
    const sentence = /^(.*?[.!?])(\s|$)/.exec(line.trim())?.[1] ?? line.trim();
    return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
  };
  if (Array.isArray(error.errors) && error.errors.length > 0) {
    return `attempted: ${error.errors.map((inner: { message?: unknown }) => firstSentence(inner?.message)).join(" | ")}`;
  }
  return firstSentence(error.message);
}

/**
 * Wraps a credential so that its failures say what to configure. Other errors (an abort, a
 * timeout) pass through untouched.
 */
export function withCredentialGuidance(credential: TokenCredential, guidance: (scopes: readonly string[]) => string): TokenCredential {
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      try {
        return await credential.getToken(scopes, options);
      } catch (error) {
        const like = (typeof error === "object" && error !== null ? error : { message: String(error) }) as {
          name?: unknown;
          message?: unknown;
          errors?: unknown;
        };
        if (typeof like.name !== "string" || !credentialErrorNames.has(like.name)) {
          throw error;
        }
        const guided = new Error(redactSecrets(`${guidance(Array.isArray(scopes) ? scopes : [scopes])} (${describeCause(like)})`));
        Object.defineProperty(guided, "name", { value: like.name, writable: true, configurable: true, enumerable: false });
        throw guided;
      }
    },
  };
}
