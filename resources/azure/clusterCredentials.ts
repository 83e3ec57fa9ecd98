/**
 * `clusterServiceManagedIdentity` mode: each cluster's identities are read as its own service
 * managed identity (SMI), whose credential the Managed Identities data plane hands over
 * (docs/operations.md, "Credential modes"). Nothing of the credential reaches logs, errors or state.
 */
import type { ManagedServiceIdentityClient, UserAssignedIdentitiesGetOptionalParams } from "@azure/arm-msi";
import type { TokenCredential } from "@azure/identity";
import { withDeadline } from "../core/abort";
import type { ParsedResourceId } from "../core/azureResourceId";
import { goToLower } from "../core/goStrings";
import { clusterMessage, clusterNameOf, nothingWritten } from "../core/clusterMessage";
import { withoutFinalPeriod } from "../core/retrievalError";
import type { ServiceManagedIdentityCredential } from "./dataPlaneAnswer";
import { DataPlaneError } from "./dataPlaneAnswer";
import { withCause } from "../core/errors";
import type { UserAssignedIdentityReader } from "./userAssignedIdentityReader";
import { createUserAssignedIdentityReader } from "./userAssignedIdentityReader";

/** The cluster, its SMI and identity URL as its document has them. */
export interface ClusterCredentialRequest {
  readonly cluster: ParsedResourceId;
  readonly serviceManagedIdentity: string | undefined;
  readonly identityUrl: string | undefined;
}

/** A cluster's reader, and how messages name its credential. */
export interface ClusterReader {
  readonly reader: UserAssignedIdentityReader;
  readonly description: string;
}

/** Hands each cluster the reader of its own credential. */
export interface ClusterCredentialSource {
  readerFor(request: ClusterCredentialRequest, options: { readonly abortSignal?: AbortSignal }): Promise<ClusterReader>;
}

/** Why a cluster's credential could not be had, before anything was read or written. */
export class ClusterCredentialError extends Error {
  /** The document field at fault, when one is. */
  readonly field: string | undefined;
  readonly statusCode: number | undefined;

  constructor(cause: string, options: { cluster?: ParsedResourceId; field?: string; statusCode?: number; cause?: unknown } = {}) {
    const { cluster } = options;
    const about = cluster === undefined ? {} : { clusterName: clusterNameOf(cluster), reference: cluster.canonical };
    super(clusterMessage({ cause, outcome: nothingWritten, ...about }));
    this.field = options.field;
    this.statusCode = options.statusCode;
    withCause(this, options.cause);
  }
}
ClusterCredentialError.prototype.name = "ClusterCredentialError";

interface ClusterCredentialSourceOptions {
  readonly fetchCredential: (
    identityUrl: string,
    serviceManagedIdentity: string,
    options: { readonly abortSignal?: AbortSignal },
  ) => Promise<ServiceManagedIdentityCredential>;
  readonly credentialFor: (answer: ServiceManagedIdentityCredential) => TokenCredential;
  readonly armClientFor: (credential: TokenCredential, subscriptionId: string) => ManagedServiceIdentityClient;
  /** What each GET carries besides (the credential, on the shared pipeline). */
  readonly operationOptionsFor?: (credential: TokenCredential) => Pick<UserAssignedIdentitiesGetOptionalParams, "tracingOptions">;
  readonly acquireArmToken: (credential: TokenCredential, abortSignal: AbortSignal) => Promise<unknown>;
  readonly now?: () => number;
}

interface Built {
  readonly renewAt: number;
  readonly reader: ClusterReader;
}

/** Clusters whose credentials a process keeps at once: what an engine works on at once. */
export const defaultMaxCredentials = 32;

/** What the cluster document lacks when a field its credential needs is absent, and why that stops the cluster. */
const absentFields = {
  serviceManagedIdentity:
    "names no service managed identity (properties.customerProperties.platform.operatorsAuthentication.userAssignedIdentities.serviceManagedIdentity), " +
    "so there is no credential to read its identities with",
  managedIdentitiesDataPlaneIdentityURL:
    "has no identity URL (properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL), " +
    "so the Managed Identities data plane cannot be asked for its service managed identity's credential",
};

const fallbackLifetimeInMs = 60 * 60 * 1000;
const prefetchTimeoutInMs = 30 * 1000;
const notAfterMarginInMs = 5 * 60 * 1000;

export function createClusterCredentialSource(options: ClusterCredentialSourceOptions): ClusterCredentialSource {
  const now = options.now ?? Date.now;
  // One data plane call per cluster until its renewal, shared by concurrent passes, a failure not remembered;
  // bounded, oldest out first (a pass holds its reader).
  const entries = new Map<string, { pending?: Promise<Built>; built?: Built }>();

  const build = async (cluster: ParsedResourceId, identityUrl: string, smi: string, abortSignal: AbortSignal | undefined): Promise<Built> => {
    const answer = await options.fetchCredential(identityUrl, smi, abortSignal === undefined ? {} : { abortSignal });
    const credential = options.credentialFor(answer);
    // Best effort, outside the lookup limiter, so that lookups find the ARM token cached.
    await (
      abortSignal === undefined
        ? withDeadline(prefetchTimeoutInMs, (signal) => options.acquireArmToken(credential, signal))
        : options.acquireArmToken(credential, abortSignal)
    ).catch(() => undefined);
    const subscriptionId = goToLower(cluster.subscriptionId);
    const client = options.armClientFor(credential, subscriptionId);
    const reader = createUserAssignedIdentityReader(
      (identitySubscriptionId) => {
        if (identitySubscriptionId !== subscriptionId) {
          throw Object.assign(
            new Error(
              `the identity is in subscription ${identitySubscriptionId}, not in the cluster's subscription ${subscriptionId}; ` +
                "the cluster's service managed identity reads its cluster's subscription only",
            ),
            { code: "IdentityOutsideClusterSubscription" },
          );
        }
        return client;
      },
      ({ abortSignal: signal }) => options.acquireArmToken(credential, signal),
      options.operationOptionsFor?.(credential),
    );
    const beforeNotAfter = answer.notAfter === undefined ? Number.POSITIVE_INFINITY : answer.notAfter.getTime() - notAfterMarginInMs;
    return {
      renewAt: Math.min(answer.renewAfter?.getTime() ?? (answer.notAfter === undefined ? now() + fallbackLifetimeInMs : beforeNotAfter), beforeNotAfter),
      reader: {
        reader,
        description: `the service managed identity ${smi} of cluster ${cluster.canonical} (credential from the Managed Identities data plane)`,
      },
    };
  };

  return {
    async readerFor({ cluster, serviceManagedIdentity: smi, identityUrl }, { abortSignal }) {
      const missing = (field: keyof typeof absentFields): ClusterCredentialError =>
        new ClusterCredentialError(`the cluster's HCPOpenShiftCluster document ${absentFields[field]}`, { cluster, field });
      if (!smi) throw missing("serviceManagedIdentity");
      if (!identityUrl) throw missing("managedIdentitiesDataPlaneIdentityURL");
      // Keyed by cluster too: two clusters naming one SMI and identity URL each get a reader of their own subscription.
      const key = `${goToLower(cluster.canonical)}\n${identityUrl}\n${goToLower(smi)}`;
      let entry = entries.get(key);
      if (entry?.built !== undefined && now() < entry.built.renewAt) return entry.built.reader;
      if (entry === undefined) {
        if (entries.size >= defaultMaxCredentials) entries.delete(entries.keys().next().value as string);
        entries.set(key, (entry = {}));
      }
      const current = entry;
      // Concurrent passes of one cluster share the call; it carries the first caller's deadline.
      current.pending ??= build(cluster, identityUrl, smi, abortSignal).finally(() => {
        current.pending = undefined;
      });
      try {
        current.built = await current.pending;
        return current.built.reader;
      } catch (error) {
        if (error instanceof DataPlaneError && error.field !== undefined) {
          // The identity URL or its challenge refused before any token was asked: the message names the field and the values.
          throw new ClusterCredentialError(error.message, { cluster, field: error.field, cause: error });
        }
        // The first-party credential failing is not about this cluster's identities: passed on as it is.
        if (error instanceof DataPlaneError && !error.firstParty) {
          throw new ClusterCredentialError(`${withoutFinalPeriod(error.message)}, asked for the credential of the cluster's service managed identity ${smi}`, {
            cluster,
            statusCode: error.statusCode,
            cause: error,
          });
        }
        throw error;
      }
    },
  };
}
