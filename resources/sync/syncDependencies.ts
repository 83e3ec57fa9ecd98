/**
 * What a sync pass, a refresh and the document helpers depend on: injected, so that tests pass
 * fakes and production passes the shared Azure and Cosmos adapters. Types only; every module of
 * sync/ imports these from here, below all of them.
 */
import type { ClusterCredentialSource } from "../azure/clusterCredentials";
import type { MsiAnswerSource } from "../azure/msiAnswers";
import type { UserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import type { DocumentStore } from "../cosmos/documentStore";
import type { CredentialScope, IdsOnLookupFailure } from "../core/statusDecision";
import type { ConcurrencyLimiter } from "./concurrencyLimiter";

/** Tunables of a pass; defaults live in settings.ts. */
export interface SyncOptions {
  readonly lookupTimeoutInMs: number;
  readonly documentWaitInMs: number;
  readonly documentPollIntervalInMs: number;
  readonly maxWriteAttempts: number;
  /** What a failed lookup does to its entry's stored IDs (core/statusDecision.ts): `keep` unless the answer is definitive, or upstream's `clear`. */
  readonly idsOnLookupFailure: IdsOnLookupFailure;
}

/** Everything a pass touches, injected. */
export interface SyncDependencies {
  readonly documentStore: DocumentStore;
  readonly userAssignedIdentityReader: UserAssignedIdentityReader;
  readonly limiter: ConcurrencyLimiter;
  readonly now: () => Date;
  /** Uniform in [0, 1): the recheck jitter and retry backoff. */
  readonly random: () => number;
  readonly sleep: (durationInMs: number) => Promise<void>;
  readonly options: SyncOptions;
  /** Which Azure credential the lookups use, for messages (credentials.ts describeCredential). */
  readonly credentialDescription?: string;
  /**
   * Whose credential reads the identities; `process` (one credential of the hook's own) when
   * absent. Only with `cluster` (the cluster's own service managed identity) does a 403 clear
   * stored IDs (core/statusDecision.ts).
   */
  readonly credentialScope?: CredentialScope;
  /**
   * Set in `clusterServiceManagedIdentity` mode: each cluster's lookups use the reader of that
   * cluster's own service managed identity instead of {@link userAssignedIdentityReader}
   * (sync/clusterLookups.ts).
   */
  readonly clusterCredentials?: ClusterCredentialSource;
  /**
   * Where the MSI half gets its answer: the Managed Identities data plane as the first party
   * (`clusterServiceManagedIdentity`) or upstream's fixed-identity stand-in (`fixedIdentity`).
   * Absent (`processCredential`, and fakes by default): each identity is read through ARM.
   */
  readonly msiAnswers?: MsiAnswerSource;
}
