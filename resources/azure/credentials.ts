/**
 * The process's Azure credential, the errors credentials raise, and the token cache every credential
 * sits behind (sharedTokenCredential). The process's credential is the user-assigned managed
 * identity of `managedIdentityClientId`, else DefaultAzureCredential at `azureCloud`'s authority
 * unless AZURE_AUTHORITY_HOST says otherwise (docs/operations.md, "The process credential"). A failure
 * is rethrown under the same `name` (errorClassification.ts classifies by it) with one redacted line
 * saying what to set.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { untilAborted } from "../core/abort";
import { withCause } from "../core/errors";
import { redactSecrets } from "../core/retrievalError";
import type { Settings } from "../core/settings";
import type { Environment } from "../core/settingsKeys";
import { keys, projectName, settingName } from "../core/settingsKeys";

type CredentialChoice =
  | { readonly kind: "managedIdentity"; readonly clientId: string }
  /** `authorityHost` is unset when AZURE_AUTHORITY_HOST is set; `workloadIdentity` when its three variables are. */
  | { readonly kind: "default"; readonly authorityHost: string | undefined; readonly workloadIdentity: boolean };

/** The credential these settings and this environment select; pure. */
export function chooseCredential(settings: Pick<Settings, "managedIdentityClientId" | "authorityHost">, environment: Environment): CredentialChoice {
  if (settings.managedIdentityClientId !== undefined) return { kind: "managedIdentity", clientId: settings.managedIdentityClientId };
  const present = (name: string): boolean => (environment[name] ?? "").trim().length > 0;
  return {
    kind: "default",
    authorityHost: present("AZURE_AUTHORITY_HOST") ? undefined : settings.authorityHost,
    workloadIdentity: present("AZURE_FEDERATED_TOKEN_FILE") && present("AZURE_CLIENT_ID") && present("AZURE_TENANT_ID"),
  };
}

/** One line naming the credential a choice stands for and the settings that select it. */
function describeCredential(choice: CredentialChoice): string {
  if (choice.kind === "managedIdentity") return `the managed identity with client ID ${choice.clientId} (${clientIdKey})`;
  return choice.workloadIdentity
    ? `DefaultAzureCredential with workload identity federation (${workloadIdentityVariables}), since ${clientIdKey} is not set`
    : `DefaultAzureCredential (environment, workload identity, managed identity, then developer sign-ins), since ${clientIdKey} is not set`;
}

/** The process's credential (one token cache), its failures saying what to set for ARM and for Cosmos DB; @azure/identity loads at the first token request. */
export function createCredentials(settings: Settings): { readonly arm: TokenCredential; readonly cosmos: TokenCredential; readonly description: string } {
  const choice = chooseCredential(settings, process.env);
  // Playing the first party, it gets tokens in whichever tenant a cluster's data plane challenges in.
  const everyTenant = settings.credentialMode === "clusterServiceManagedIdentity" && settings.firstParty === undefined;
  let built: TokenCredential | undefined;
  const credential: TokenCredential = {
    getToken: (scopes, options) => (built ??= buildCredential(choice, everyTenant)).getToken(scopes, options),
  };
  // @azure/cosmos asks for the account's own audience and, refused, falls back to the public cloud's;
  // that fallback becomes the configured cloud's (the SDK's `aadScope` would turn off both).
  const cosmosCredential: TokenCredential = {
    getToken: (scopes, options) =>
      credential.getToken(
        scopeList(scopes).map((scope) => (scope === "https://cosmos.azure.com/.default" ? settings.cosmosScope : scope)),
        options,
      ),
  };
  return {
    arm: withCredentialGuidance(credential, (scopes) => armGuidance(choice, scopes)),
    cosmos: withCredentialGuidance(cosmosCredential, () => cosmosGuidance),
    description: describeCredential(choice),
  };
}

function buildCredential(choice: CredentialChoice, everyTenant: boolean): TokenCredential {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use
  const identity = require("@azure/identity") as typeof import("@azure/identity");
  if (choice.kind === "managedIdentity") return new identity.ManagedIdentityCredential({ clientId: choice.clientId });
  return new identity.DefaultAzureCredential({
    ...(choice.authorityHost === undefined ? {} : { authorityHost: choice.authorityHost }),
    ...(everyTenant ? { additionallyAllowedTenants: ["*"] } : {}),
  });
}

export function scopeList(scopes: string | string[]): string[] {
  return Array.isArray(scopes) ? scopes : [scopes];
}

/** An error named as `@azure/identity` names its own; `statusCode` is enumerable as the SDK's is, `cause` and `certificateFileProblem` are not. */
export function credentialError(name: string, message: string, extra: { statusCode?: number; cause?: unknown; certificateFileProblem?: boolean } = {}): Error {
  const error = withCause(new Error(message), extra.cause);
  Object.defineProperty(error, "name", { value: name, writable: true, configurable: true, enumerable: false });
  if (extra.statusCode !== undefined) Object.defineProperty(error, "statusCode", { value: extra.statusCode, enumerable: true });
  if (extra.certificateFileProblem === true) Object.defineProperty(error, "certificateFileProblem", { value: true, enumerable: false });
  return error;
}

/** Whether an error (or one it wraps) is a bundle file that could not be read or used: such a failure is never held. */
function isCertificateFileProblem(error: unknown): boolean {
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 4; depth += 1) {
    if ((current as { certificateFileProblem?: unknown }).certificateFileProblem === true) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

const credentialErrorNames = new Set(["CredentialUnavailableError", "AuthenticationError", "AggregateAuthenticationError", "AuthenticationRequiredError"]);

const workloadIdentityVariables = "AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_FEDERATED_TOKEN_FILE";
const clientIdKey = settingName(keys.managedIdentityClientId);

// Kept short: describeCosmosError keeps only the start of a Cosmos error's message.
const cosmosGuidance =
  `no Azure credential could get a Cosmos DB token; set COSMOS_KEY (or \`pulumi config set --secret ${projectName}:cosmosKey\`) ` +
  `to use the account key, or '${projectName}:managedIdentityClientId' or AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_FEDERATED_TOKEN_FILE for Entra ID`;

function armGuidance(choice: CredentialChoice, scopes: readonly string[]): string {
  const audience = scopes.join(", ");
  if (choice.kind === "managedIdentity") {
    return (
      `${describeCredential(choice)} could not get a token for ${audience}; ` +
      `check that this identity is assigned to the host running Pulumi (IMDS, or IDENTITY_ENDPOINT and IDENTITY_HEADER) and that the client ID is right`
    );
  }
  return (
    `no Azure credential could get a token for ${audience}: set ${clientIdKey} to the client ID of the cluster's service managed identity, ` +
    `or ${workloadIdentityVariables} for workload identity federation, or sign in with \`az login\``
  );
}

type ErrorLike = { readonly name?: unknown; readonly message?: unknown; readonly errors?: unknown };

/** What each credential in a chain said, first sentence each, on one line. */
function describeCause(error: ErrorLike): string {
  const firstSentence = (text: unknown): string => {
    const line = String(text).trim().split(/\r?\n/, 1)[0].trim();
    const sentence = /^(.*?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
    return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
  };
  if (Array.isArray(error.errors) && error.errors.length > 0) {
    return `attempted: ${error.errors.map((inner: { message?: unknown }) => firstSentence(inner?.message)).join(" | ")}`;
  }
  return firstSentence(error.message);
}

/** Wraps a credential so that its failures say what to configure; other errors (an abort) pass through. */
function withCredentialGuidance(credential: TokenCredential, guidance: (scopes: readonly string[]) => string): TokenCredential {
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      try {
        return await credential.getToken(scopes, options);
      } catch (error) {
        const like = (typeof error === "object" && error !== null ? error : { message: String(error) }) as ErrorLike;
        if (typeof like.name !== "string" || !credentialErrorNames.has(like.name)) throw error;
        throw credentialError(like.name, redactSecrets(`${guidance(scopeList(scopes))} (${describeCause(like)})`));
      }
    },
  };
}

/** Tokens are fetched again this long before they expire. */
export const tokenRefreshMarginInMs = 5 * 60 * 1000;

/** A shared token request unanswered for this long is not joined any more: the next caller asks anew. */
export const pendingTokenRequestStaleAfterMs = 30 * 1000;

interface Entry {
  token?: AccessToken;
  failure?: unknown;
  heldUntil?: number;
  pending?: Promise<AccessToken | null>;
  pendingSince?: number;
}

/**
 * One token per tenant and scope for a whole provider process, reused until shortly before it
 * expires, so the clients' bearer policies do not each ask the token endpoint at once. Concurrent
 * callers share one request (not joined once it is stale, so an endpoint that hung once does not hold
 * the process); `claims` (a continuous access evaluation challenge) bypasses the cache; each caller
 * stops at its own abort signal. A failure is not cached, except with `holdFailuresForMs` (the first
 * party): a refusal answers the same tenant and scope for that long, a bundle file's failure never.
 */
export function sharedTokenCredential(
  inner: TokenCredential,
  now: () => number = Date.now,
  { holdFailuresForMs = 0 }: { readonly holdFailuresForMs?: number } = {},
): TokenCredential {
  const entries = new Map<string, Entry>();
  const isFresh = (token: AccessToken | undefined): token is AccessToken =>
    token !== undefined && now() < Math.min(token.expiresOnTimestamp - tokenRefreshMarginInMs, token.refreshAfterTimestamp ?? Number.POSITIVE_INFINITY);
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      if (options?.claims !== undefined) return inner.getToken(scopes, options);
      const key = `${options?.tenantId ?? ""} ${scopeList(scopes).join(" ")}`;
      const entry = entries.get(key) ?? {};
      entries.set(key, entry);
      if (isFresh(entry.token)) return entry.token;
      if (entry.heldUntil !== undefined && now() < entry.heldUntil) throw entry.failure;
      if (entry.pending === undefined || now() - (entry.pendingSince ?? 0) > pendingTokenRequestStaleAfterMs) {
        // Shared by every caller waiting now, so it carries no single caller's abort signal.
        const request: Promise<AccessToken | null> = inner
          .getToken(scopes, options?.tenantId === undefined ? {} : { tenantId: options.tenantId })
          .then(
            (token) => {
              entry.token = token ?? undefined;
              entry.heldUntil = undefined;
              return token;
            },
            (error: unknown) => {
              const name = (error as { name?: unknown } | undefined)?.name;
              if (holdFailuresForMs > 0 && name !== "AbortError" && !isCertificateFileProblem(error)) {
                entry.failure = error;
                entry.heldUntil = now() + holdFailuresForMs;
              }
              throw error;
            },
          )
          .finally(() => {
            if (entry.pending === request) entry.pending = undefined;
          });
        entry.pending = request;
        entry.pendingSince = now();
      }
      return options?.abortSignal === undefined ? entry.pending : untilAborted(entry.pending, options.abortSignal);
    },
  };
}
