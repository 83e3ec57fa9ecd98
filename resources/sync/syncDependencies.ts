/** What a sync pass and a refresh depend on, injected: tests pass fakes, production the Azure and Cosmos adapters. */
import type { ClusterCredentialSource } from "../azure/clusterCredentials";
import type { MsiAnswerSource } from "../azure/managedIdentitiesDataPlane";
import type { UserAssignedIdentityReader } from "../azure/userAssignedIdentityReader";
import type { DocumentStore } from "../cosmos/documentStore";
import type { Settings } from "../core/settings";
import type { CredentialScope } from "../core/statusDecision";
import type { MsiOverwriteGuard } from "../core/msiManagedIdentities";
import type { ConcurrencyLimiter } from "./concurrencyLimiter";

/** Tunables of a pass: the settings' values (core/settings.ts). */
export type SyncOptions = Pick<Settings, "lookupTimeoutInMs" | "documentWaitInMs" | "documentPollIntervalInMs" | "maxWriteAttempts" | "idsOnLookupFailure"> &
  Partial<Pick<Settings, "allowFixedIdentityOverwrite">>;

export interface SyncDependencies {
  readonly documentStore: DocumentStore;
  readonly userAssignedIdentityReader: UserAssignedIdentityReader;
  readonly limiter: ConcurrencyLimiter;
  readonly now: () => Date;
  /** Uniform in [0, 1): the recheck jitter and retry backoff. */
  readonly random: () => number;
  readonly sleep: (durationInMs: number) => Promise<void>;
  readonly options: SyncOptions;
  /** Which Azure credential the lookups use, for messages. */
  readonly credentialDescription?: string;
  /** Whose credential reads the identities (`process` when absent); only with `cluster` does a 403 clear stored IDs. */
  readonly credentialScope?: CredentialScope;
  /** Set in `clusterServiceManagedIdentity` mode: each cluster's lookups use its own service managed identity's reader. */
  readonly clusterCredentials?: ClusterCredentialSource;
  /** Where the MSI half gets its answer; absent (`processCredential`, and fakes by default): each identity is read through ARM. */
  readonly msiAnswers?: MsiAnswerSource;
}

/** What the mode's MSI answers may not overwrite (core/msiManagedIdentities.ts): the stand-in's guard, or, where ARM stands in for the data plane (`processCredential`), the process credential's. */
export function msiOverwriteGuard(dependencies: Pick<SyncDependencies, "msiAnswers" | "options">): MsiOverwriteGuard | undefined {
  if (dependencies.msiAnswers !== undefined) return dependencies.msiAnswers.standIn;
  return { processCredential: true, overwriteAllowed: dependencies.options.allowFixedIdentityOverwrite ?? false };
}
