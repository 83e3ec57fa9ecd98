/**
 * What a sync pass, a refresh and the document helpers depend on: injected, so that tests pass
 * fakes and production passes the shared Azure and Cosmos adapters. Types only; every module of
 * sync/ imports these from here, below all of them.
 */
import type { UserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import type { DocumentStore } from "../cosmos/documentStore";
import type { ConcurrencyLimiter } from "./concurrencyLimiter";

/** Tunables of a pass; defaults live in settings.ts. */
export interface SyncOptions {
  readonly lookupTimeoutInMs: number;
  readonly documentWaitInMs: number;
  readonly documentPollIntervalInMs: number;
  readonly maxWriteAttempts: number;
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
}
