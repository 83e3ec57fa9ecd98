/**
 * `clusterServiceManagedIdentity` mode: each cluster's identities are read as that cluster's own
 * service managed identity (SMI), whose credential the Managed Identities data plane hands over.
 *
 * - One data plane call per cluster until the answer's `renew_after` (else five minutes before its
 *   `not_after`, else an hour): the credential, its token cache and its ARM client are reused by
 *   every pass of that cluster in the process until then, and concurrent passes share one call. A
 *   failed call is not remembered: the next pass asks again. At most {@link defaultMaxCredentials}
 *   clusters are kept, the oldest going first: a cluster is looked up once per recheck (12 h or
 *   more), so an entry is of use only while its cluster's pass runs. Each entry holds the SMI's
 *   parsed key and chain, its token and its reader; the bound is what an engine keeps in flight. A
 *   pass holds its reader, so an eviction never cuts a pass short.
 * - An entry belongs to one cluster: its key is the cluster, its identity URL and its SMI, so no
 *   cluster is ever handed a reader bound to another cluster's subscription or credential.
 * - The SMI's ARM token is asked for as soon as its credential is built, outside the lookup
 *   limiter (as the data plane call is): the cluster's lookups then find it cached instead of
 *   holding limiter slots while the first of them waits for Entra ID. Best effort: a failure there
 *   is met again, and classified, by the first lookup's own token request.
 * - The credential of one SMI serves only lookups in its cluster's subscription: an identity
 *   outside it fails on its own (IDs kept).
 * - A refusal of the first-party credential is held per tenant by that credential
 *   (sharedTokenCredential.ts): it stays with the clusters whose data plane challenges in that tenant.
 * - An identity URL the first party may not call, or whose challenge names another tenant than its
 *   `tid`, fails the cluster naming the field (managedIdentitiesDataPlane.ts, core/identityUrl.ts).
 * - Nothing of the credential reaches logs, errors or state.
 */
import type { ManagedServiceIdentityClient, UserAssignedIdentitiesGetOptionalParams } from "@azure/arm-msi";
import type { TokenCredential } from "@azure/identity";
import { withDeadline } from "../core/abort";
import type { ParsedResourceId } from "../core/azureResourceId";
import { goToLower } from "../core/goStrings";
import { clusterMessage, clusterNameOf, nothingWritten } from "../core/clusterMessage";
import type { ServiceManagedIdentityCredential } from "./managedIdentitiesDataPlane";
import { DataPlaneError } from "./managedIdentitiesDataPlane";
import type { UserAssignedIdentityReader } from "./userAssignedIdentityReader";
import { createUserAssignedIdentityReader } from "./userAssignedIdentityReader";

/** What a pass knows about its cluster when it needs the cluster's credential. */
export interface ClusterCredentialRequest {
  readonly cluster: ParsedResourceId;
  /** The SMI's ARM resource ID, as the cluster document names it. */
  readonly serviceManagedIdentity: string | undefined;
  /** `managedIdentitiesDataPlaneIdentityURL`, as the cluster document has it. */
  readonly identityUrl: string | undefined;
}

/** The reader a pass of one cluster uses, and how messages name its credential. */
export interface ClusterReader {
  readonly reader: UserAssignedIdentityReader;
  readonly description: string;
}

/** Hands each cluster the reader of its own credential. */
export interface ClusterCredentialSource {
  readerFor(request: ClusterCredentialRequest, options: { readonly abortSignal?: AbortSignal }): Promise<ClusterReader>;
}

/**
 * Why a cluster's credential could not be had, before anything was read or written. Per cluster;
 * the message says so at its end.
 */
export class ClusterCredentialError extends Error {
  /** The setting or document field at fault, when one is (`serviceManagedIdentity`, `managedIdentitiesDataPlaneIdentityURL`). */
  readonly field: string | undefined;
  readonly statusCode: number | undefined;

  /** @param cause - What is wrong and what fixes it; the cluster, its ARM ID and "nothing was written" follow (core/clusterMessage.ts). */
  constructor(cause: string, options: { cluster?: ParsedResourceId; field?: string; statusCode?: number; cause?: unknown } = {}) {
    const cluster = options.cluster;
    super(
      clusterMessage({
        cause,
        outcome: nothingWritten,
        ...(cluster === undefined ? {} : { clusterName: clusterNameOf(cluster), reference: cluster.canonical }),
      }),
    );
    this.field = options.field;
    this.statusCode = options.statusCode;
    if (options.cause !== undefined) Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true, enumerable: false });
  }
}
ClusterCredentialError.prototype.name = "ClusterCredentialError";

/** What {@link createClusterCredentialSource} builds readers with. */
export interface ClusterCredentialSourceOptions {
  /** The SMI's credential from the data plane at the identity URL (managedIdentitiesDataPlane.ts). */
  readonly fetchCredential: (
    identityUrl: string,
    serviceManagedIdentity: string,
    options: { readonly abortSignal?: AbortSignal },
  ) => Promise<ServiceManagedIdentityCredential>;
  /** A token credential for the SMI's certificate, at its authority (assertionTokenCredential.ts). */
  readonly credentialFor: (answer: ServiceManagedIdentityCredential) => TokenCredential;
  /** An arm-msi client for one subscription, to read with one credential. */
  readonly armClientFor: (credential: TokenCredential, subscriptionId: string) => ManagedServiceIdentityClient;
  /** What each GET carries besides (the credential, when the clients share one pipeline: requestCredentialPolicy.ts). */
  readonly operationOptionsFor?: (credential: TokenCredential) => Pick<UserAssignedIdentitiesGetOptionalParams, "tracingOptions">;
  /** Gets the ARM token the client will send (the lookup times the credential apart from ARM). */
  readonly acquireArmToken: (credential: TokenCredential, abortSignal: AbortSignal) => Promise<unknown>;
  /** SMIs whose credentials the process keeps at once; the oldest goes first beyond it. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

interface Entry {
  pending?: Promise<Built>;
  built?: Built;
}

interface Built {
  readonly renewAt: number;
  readonly reader: ClusterReader;
}

/**
 * Clusters whose credentials a process keeps at once, unless told otherwise: the resources an engine
 * works on at once through the project's doors (16 for `up`, 32 for `refresh`, cli/engine.ts).
 */
export const defaultMaxCredentials = 32;

const fallbackLifetimeInMs = 60 * 60 * 1000;
const prefetchTimeoutInMs = 30 * 1000;
const notAfterMarginInMs = 5 * 60 * 1000;

/** The source of `clusterServiceManagedIdentity` mode (see the module comment). */
export function createClusterCredentialSource(options: ClusterCredentialSourceOptions): ClusterCredentialSource {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? defaultMaxCredentials;
  const entries = new Map<string, Entry>();

  const build = async (request: ClusterCredentialRequest, identityUrl: string, smi: string, abortSignal: AbortSignal | undefined): Promise<Built> => {
    const answer = await options.fetchCredential(identityUrl, smi, abortSignal === undefined ? {} : { abortSignal });
    const credential = options.credentialFor(answer);
    // Outside the limiter; a failure is the first lookup's to meet and classify (see the module comment).
    await (
      abortSignal === undefined
        ? withDeadline(prefetchTimeoutInMs, (signal) => options.acquireArmToken(credential, signal))
        : options.acquireArmToken(credential, abortSignal)
    ).catch(() => undefined);
    const subscriptionId = goToLower(request.cluster.subscriptionId);
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
    const nowInMs = now();
    const renewAt =
      answer.renewAfter?.getTime() ?? (answer.notAfter === undefined ? nowInMs + fallbackLifetimeInMs : answer.notAfter.getTime() - notAfterMarginInMs);
    return {
      renewAt: Math.min(renewAt, answer.notAfter === undefined ? Number.POSITIVE_INFINITY : answer.notAfter.getTime() - notAfterMarginInMs),
      reader: {
        reader,
        description: `the service managed identity ${smi} of cluster ${request.cluster.canonical} (credential from the Managed Identities data plane)`,
      },
    };
  };

  return {
    async readerFor(request, { abortSignal }) {
      const smi = request.serviceManagedIdentity;
      if (smi === undefined || smi.length === 0) {
        throw new ClusterCredentialError(
          "the cluster's HCPOpenShiftCluster document names no service managed identity " +
            "(properties.customerProperties.platform.operatorsAuthentication.userAssignedIdentities.serviceManagedIdentity), " +
            "so there is no credential to read its identities with",
          { cluster: request.cluster, field: "serviceManagedIdentity" },
        );
      }
      const identityUrl = request.identityUrl;
      if (identityUrl === undefined || identityUrl.length === 0) {
        throw new ClusterCredentialError(
          "the cluster's HCPOpenShiftCluster document has no identity URL (properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL), " +
            "so the Managed Identities data plane cannot be asked for its service managed identity's credential",
          { cluster: request.cluster, field: "managedIdentitiesDataPlaneIdentityURL" },
        );
      }
      const key = `${goToLower(request.cluster.canonical)}\n${identityUrl}\n${goToLower(smi)}`;
      let entry = entries.get(key);
      if (entry?.built !== undefined && now() < entry.built.renewAt) return entry.built.reader;
      if (entry === undefined) {
        if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
        entry = {};
        entries.set(key, entry);
      }
      const current = entry;
      // Concurrent passes of one cluster share the call; it carries the first caller's deadline.
      current.pending ??= build(request, identityUrl, smi, abortSignal).finally(() => {
        current.pending = undefined;
      });
      let built: Built;
      try {
        built = await current.pending;
      } catch (error) {
        if (error instanceof DataPlaneError && error.field !== undefined) {
          // The identity URL or its challenge refused before any token was asked: the message names the field and the values.
          throw new ClusterCredentialError(error.message, { cluster: request.cluster, field: error.field, cause: error });
        }
        // The first-party credential failing is not about this cluster's identities: passed on as it is.
        if (error instanceof DataPlaneError && !error.firstParty) {
          throw new ClusterCredentialError(
            `${error.message.replace(/[.\s]+$/, "")}, asked for the credential of the cluster's service managed identity ${smi}`,
            {
              cluster: request.cluster,
              ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }),
              cause: error,
            },
          );
        }
        throw error;
      }
      current.built = built;
      return built.reader;
    },
  };
}
