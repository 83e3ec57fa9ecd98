/**
 * The dynamic provider: thin methods over the sync pass, refresh and clear.
 *
 * Runs inside the provider host, required by the provider text in state (providerLoader.ts)
 * through the stable entry ../managedIdentityStatusProvider.ts. Settings come
 * from `configure` or the environment at call time. The factory is the seam for tests.
 */
import { randomBytes } from "node:crypto";
import { goToLower } from "../core/goStrings";
import type * as pulumi from "@pulumi/pulumi";
import type { AzureAdapters } from "./azureAdapters";
import { sharedAzureAdapters } from "./azureAdapters";
import { desiredFromClusterDocument } from "../core/clusterDocument";
import { isCosmosConfigurationError, isCosmosDocumentError, isUserAssignedIdentityReadError } from "../core/errors";
import { workReason } from "../core/identityStatus";
import type { ProviderInputs } from "./providerInputs";
import { containsUnknown, desiredFromInputs, parseCluster, parseInputs } from "./providerInputs";
import type { ProviderOutputs } from "./providerOutputs";
import { declaredCredentialOf, inputsDigestOf, parseStoredOutputs, refreshedOutputs, toOutputs } from "./providerOutputs";
import type { KnownStatus } from "../sync/refreshManagedIdentityStatus";
import { clearManagedIdentityStatus, refreshManagedIdentityStatus } from "../sync/refreshManagedIdentityStatus";
import type { ConfigSource } from "../core/settings";
import { readSettings, settingsEnvironmentKey, snapshotStackConfig } from "../core/settings";
import { decodeOutputsStatus } from "../core/outputsStatus";
import type { SyncDependencies, SyncOptions } from "../sync/syncDependencies";
import { locate } from "../core/documentLocation";
import { readLive } from "../sync/documentReads";
import { partialResultOf, syncManagedIdentityStatus } from "../sync/syncManagedIdentityStatus";

/** Test seams. Production passes nothing. */
export interface ProviderOverrides {
  readonly adapters?: AzureAdapters;
  readonly now?: () => Date;
  readonly random?: () => number;
  readonly sleep?: (durationInMs: number) => Promise<void>;
  readonly options?: Partial<SyncOptions>;
  /** Settings source used instead of `configure` and the environment. */
  readonly config?: ConfigSource;
  /** The claim a create draws (core/statusClaim.ts); 16 random hex digits otherwise. */
  readonly newClaim?: () => string;
}

type Inputs = ProviderInputs & { readonly __provider?: string };
type Outputs = ProviderOutputs & { readonly __provider?: string };

/** Builds a provider. See the module comment. */
export function createManagedIdentityStatusProvider(overrides: ProviderOverrides = {}): pulumi.dynamic.ResourceProvider<Inputs, Outputs> {
  // Filled by `configure` inside the provider host.
  const configured: { snapshot?: Record<string, string | undefined> } = {};

  // Built again only when `configure` hands over another config or a settings variable changes:
  // reading the settings on every call cost 0.15 ms, 0.3 s of a 2,000-cluster refresh.
  let built: { readonly snapshot: unknown; readonly environment: string; readonly dependencies: SyncDependencies } | undefined;
  const dependencies = (): SyncDependencies => {
    const environment = settingsEnvironmentKey(process.env);
    if (built !== undefined && built.snapshot === configured.snapshot && built.environment === environment) {
      return built.dependencies;
    }
    const dependencies = buildDependencies();
    built = { snapshot: configured.snapshot, environment, dependencies };
    return dependencies;
  };

  const buildDependencies = (): SyncDependencies => {
    const snapshot = configured.snapshot;
    const config: ConfigSource | undefined = overrides.config ?? (snapshot === undefined ? undefined : { get: (key) => snapshot[key] });
    const needsSettings = overrides.adapters === undefined || overrides.options === undefined;
    const settings = needsSettings ? readSettings(config, process.env) : undefined;
    const defaults: SyncOptions = {
      lookupTimeoutInMs: settings?.lookupTimeoutInMs ?? 30_000,
      documentWaitInMs: settings?.documentWaitInMs ?? 60_000,
      documentPollIntervalInMs: settings?.documentPollIntervalInMs ?? 1000,
      maxWriteAttempts: settings?.maxWriteAttempts ?? 5,
      idsOnLookupFailure: settings?.idsOnLookupFailure ?? "keep",
    };
    const adapters = overrides.adapters ?? sharedAzureAdapters(settings ?? readSettings(config, process.env));
    return {
      ...adapters,
      now: overrides.now ?? (() => new Date()),
      random: overrides.random ?? Math.random,
      sleep: overrides.sleep ?? ((durationInMs) => new Promise((resolve) => setTimeout(resolve, durationInMs))),
      options: { ...defaults, ...overrides.options },
    };
  };

  // A create takes the subtree over with a new claim; an update keeps recording the one it has.
  const reconcile = async (inputs: Inputs, force: boolean, claim: { take: boolean; id: string | undefined }): Promise<{ id: string; outs: Outputs }> => {
    const cluster = parseCluster(inputs.clusterResourceId);
    const request = { cluster, desired: desiredFromInputs(inputs), force, ...declaredCredentialOf(inputs), ...(claim.take ? { claim: claim.id } : {}) };
    const passDependencies = dependencies();
    const recording = { recordDeclaredCredential: passDependencies.clusterCredentials !== undefined, claim: claim.id };
    try {
      const result = await syncManagedIdentityStatus(passDependencies, request);
      return { id: result.documentId, outs: toOutputs(inputs, result, [], recording) };
    } catch (error) {
      const partial = partialResultOf(error);
      if (isUserAssignedIdentityReadError(error) && partial !== undefined) {
        // The status was persisted; record it in state and fail the run ("initialization failed"),
        // keeping __provider so a later refresh or destroy can load this provider.
        throw Object.assign(new Error(error.message), {
          id: partial.documentId,
          properties: { ...toOutputs(inputs, partial, [], recording), ...(inputs.__provider === undefined ? {} : { __provider: inputs.__provider }) },
          reasons: [error.message],
        });
      }
      throw error;
    }
  };

  return {
    configure(request: pulumi.dynamic.ConfigureRequest) {
      configured.snapshot = snapshotStackConfig(request.config);
      return Promise.resolve();
    },

    check(_olds: Inputs, news: Inputs) {
      // The engine's bag is untyped: parse it. On failure the engine reports the failures and uses no inputs.
      const parsed = parseInputs(news);
      return Promise.resolve(parsed.ok ? { inputs: parsed.value, failures: [] } : { inputs: news, failures: [...parsed.failures] });
    },

    async diff(_id: string, olds: Outputs, news: Inputs) {
      const oldCluster = typeof olds.clusterResourceId === "string" ? goToLower(olds.clusterResourceId) : undefined;
      if (news.clusterResourceId !== undefined && !containsUnknown(news.clusterResourceId) && goToLower(news.clusterResourceId) !== oldCluster) {
        // Another cluster is another document: remove our subtree from the old one first.
        return { changes: true, replaces: ["clusterResourceId"], deleteBeforeReplace: true };
      }
      const stored = parseStoredOutputs(olds);
      if (olds.__provider !== news.__provider || containsUnknown(news) || !stored.ok) {
        // Another provider text: the update stores the program's, which refresh and destroy load,
        // and writes nothing to Cosmos unless due. Outputs this version does not read (another
        // schema version, a hand edit): the update runs a full pass and writes the current ones.
        return { changes: true };
      }
      const old = stored.value;
      // The identity URL is not in the digest (it changes nothing stored in Cosmos), but state keeps the declared one for refresh.
      const identityUrlChanged =
        dependencies().clusterCredentials !== undefined &&
        (old.declaredCredential.identityUrl ?? null) !== (news.managedIdentitiesDataPlaneIdentityURL ?? null);
      if (old.drift.length > 0 || old.inputsDigest !== inputsDigestOf(news) || identityUrlChanged) {
        return { changes: true };
      }
      const now = (overrides.now ?? (() => new Date()))();
      const desired = desiredFromInputs(news);
      if (desired !== undefined) {
        // Same declared map (same digest): the operators' keys are the desired keys.
        const known = decodeOutputsStatus(
          old.status,
          desired.map((identity) => identity.key),
        );
        return { changes: workReason(desired, known, now) !== undefined };
      }
      // The desired set lives in the cluster document: one Cosmos read (no wait), no Azure call.
      // Gone or unreadable: a change, so the update runs the pass, which names the document's
      // problems and writes nothing. The diff itself neither fails nor hides them.
      const location = locate(parseCluster(news.clusterResourceId));
      const live = await readLive(
        dependencies(),
        location.partitionKey,
        location.clusterDocumentId,
        `HCPOpenShiftCluster document ${location.clusterDocumentId}`,
      );
      const fromCluster = live === undefined ? undefined : desiredFromClusterDocument(live.document);
      if (fromCluster === undefined || fromCluster.kind === "unreadable") {
        return { changes: true };
      }
      if (fromCluster.kind === "deleting") {
        return { changes: old.skippedReason !== "clusterDeleting" };
      }
      // The recorded service managed identity follows the document unless the inputs name one.
      const serviceManagedIdentityMoved =
        news.serviceManagedIdentity === undefined && (fromCluster.serviceManagedIdentity ?? null) !== old.serviceManagedIdentity;
      const known = decodeOutputsStatus(
        old.status,
        fromCluster.identities.map((identity) => identity.key),
      );
      return { changes: old.skippedReason !== null || serviceManagedIdentityMoved || workReason(fromCluster.identities, known, now) !== undefined };
    },

    async create(inputs: Inputs) {
      // 64 random bits: unique among one cluster's resources, and 26 bytes of state per cluster.
      return reconcile(inputs, false, { take: true, id: overrides.newClaim?.() ?? randomBytes(8).toString("hex") });
    },

    async update(_id: string, olds: Outputs, news: Inputs) {
      const stored = parseStoredOutputs(olds);
      const force = !stored.ok || stored.value.drift.length > 0;
      const { outs } = await reconcile(news, force, { take: false, id: typeof olds.claim === "string" ? olds.claim : undefined });
      return { outs };
    },

    async read(id: string, props?: Outputs) {
      const stored = parseStoredOutputs(props);
      if (props === undefined || !stored.ok) {
        // Import or get: there is no state to refresh (dynamic providers cannot import). Outputs this
        // version does not read have nothing to compare with: they stay as they are until the
        // update that diff asks for rewrites them.
        return { id, props };
      }
      const lastStatus = stored.value.status;
      const result = await refreshManagedIdentityStatus(
        dependencies(),
        parseCluster(stored.value.clusterResourceId),
        (persistedKeys) => decodeOutputsStatus(lastStatus, persistedKeys),
        stored.value.declaredCredential,
      );
      if (result.presence === "deleted") {
        // The cluster's documents are gone from where the fleet's are, so is the record: the engine drops the resource.
        return { id: "", props };
      }
      return { id, props: refreshedOutputs(props, stored.value, result) };
    },

    async delete(_id: string, props: Outputs) {
      if (typeof props.clusterResourceId !== "string") {
        return;
      }
      // What this resource last recorded. Outputs a refresh left with drift hold what someone else
      // wrote (no update has recorded ours since), and unreadable outputs hold nothing we can
      // compare: either way the subtree is not provably ours, so it is kept.
      const stored = parseStoredOutputs(props);
      const lastRecorded: KnownStatus | undefined =
        stored.ok && stored.value.drift.length === 0 ? (persistedKeys) => decodeOutputsStatus(stored.value.status, persistedKeys) : undefined;
      try {
        await clearManagedIdentityStatus(dependencies(), parseCluster(props.clusterResourceId), lastRecorded, stored.ok ? stored.value.claim : undefined);
      } catch (error) {
        // A missing document is nothing to clear; a missing database or container is a setting to fix.
        if (isCosmosDocumentError(error) && error.statusCode === 404 && !isCosmosConfigurationError(error)) {
          return;
        }
        throw error;
      }
    },
  };
}

/**
 * The production implementation, returned by the provider text's `handler()` (providerLoader.ts)
 * inside the provider host. One instance per process, shared by every resource.
 */
export const managedIdentityStatusImplementation = createManagedIdentityStatusProvider();
