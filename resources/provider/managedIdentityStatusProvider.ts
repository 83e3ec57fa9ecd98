/**
 * The dynamic provider: thin methods over the sync pass and refresh. A delete relinquishes: it
 * writes nothing anywhere (see `delete`).
 *
 * Runs inside the provider host, required by the provider text in state (providerLoader.ts)
 * through the stable entry ../providerEntry.ts. Settings come
 * from `configure` or the environment at call time. The factory is the seam for tests.
 */
import { goToLower } from "../core/goStrings";
import type * as pulumi from "@pulumi/pulumi";
import type { AzureAdapters } from "./azureAdapters";
import { sharedAzureAdapters } from "./azureAdapters";
import { decodeMsiOutputs } from "../core/msiOutputs";
import { msiDriftPrefix } from "../sync/msiRefresh";
import { hasWork } from "./providerDiff";
import { fleetSettingsProblem } from "./settingsCheck";
import type { ProviderInputs } from "./providerInputs";
import { containsUnknown, desiredFromInputs, parseCluster, parseInputs } from "./providerInputs";
import type { ProviderOutputs } from "./providerOutputs";
import { declaredCredentialOf, inputsDigestOf, parseStoredOutputs, refreshedOutputs, toOutputs } from "./providerOutputs";
import { refreshManagedIdentityStatus } from "../sync/refreshManagedIdentityStatus";
import { log } from "../logging/logger";
import type { ConfigSource } from "../core/settings";
import { readSettings, settingsEnvironmentKey, snapshotStackConfig } from "../core/settings";
import { decodeOutputsStatus } from "../core/outputsStatus";
import type { SyncDependencies, SyncOptions } from "../sync/syncDependencies";
import { partialResultOf, syncManagedIdentityStatus } from "../sync/syncManagedIdentityStatus";
import type { RunRecord } from "../report/runRecord";
import { appendRunRecord, recordHeader, recordOfFailedPass, recordOfPass, recordOfRefresh } from "../report/runRecord";
import { withoutStackTrace } from "./expectedFailures";
import { parseRecheck, rechecksNow } from "./recheckRequest";

/** Test seams. Production passes nothing. */
export interface ProviderOverrides {
  readonly adapters?: AzureAdapters;
  readonly now?: () => Date;
  readonly random?: () => number;
  readonly sleep?: (durationInMs: number) => Promise<void>;
  readonly options?: Partial<SyncOptions>;
  /** Settings source used instead of `configure` and the environment. */
  readonly config?: ConfigSource;
}

type Inputs = ProviderInputs & { readonly __provider?: string };
type Outputs = ProviderOutputs & { readonly __provider?: string };

/** Builds a provider. See the module comment. */
export function createManagedIdentityStatusProvider(overrides: ProviderOverrides = {}): pulumi.dynamic.ResourceProvider<Inputs, Outputs> {
  // Filled by `configure` inside the provider host.
  const configured: { snapshot?: Record<string, string | undefined> } = {};

  // Built again only when `configure` hands over another config or a settings variable changes:
  // reading and checking the settings is per process work, not per call (docs/performance.md).
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

  // Checked once per configuration and settings environment; the fakes of unit tests bring their own adapters.
  let settingsChecked: { readonly snapshot: unknown; readonly environment: string; readonly problem: string | undefined } | undefined;
  const fleetSettings = (): string | undefined => {
    if (overrides.adapters !== undefined) return undefined;
    const environment = settingsEnvironmentKey(process.env);
    if (settingsChecked !== undefined && settingsChecked.snapshot === configured.snapshot && settingsChecked.environment === environment) {
      return settingsChecked.problem;
    }
    const snapshot = configured.snapshot;
    const config: ConfigSource | undefined = overrides.config ?? (snapshot === undefined ? undefined : { get: (key) => snapshot[key] });
    settingsChecked = { snapshot, environment, problem: fleetSettingsProblem(config, process.env) };
    return settingsChecked.problem;
  };

  const recordOf = (operation: RunRecord["operation"], clusterResourceId: string): ReturnType<typeof recordHeader> =>
    recordHeader(operation, clusterResourceId, (overrides.now ?? (() => new Date()))());

  const reconcile = async (
    inputs: Inputs,
    force: { readonly dataPlane: boolean; readonly msi: boolean },
    operation: "create" | "update",
    // The halves a refresh's drift forced: a write there corrects drift (the run report says so).
    driftForced: { readonly dataPlane: boolean; readonly msi: boolean } = { dataPlane: false, msi: false },
  ): Promise<{ id: string; outs: Outputs }> => {
    const cluster = parseCluster(inputs.clusterResourceId);
    const request = {
      cluster,
      desired: desiredFromInputs(inputs),
      force: force.dataPlane,
      forceMsi: force.msi,
      ...declaredCredentialOf(inputs),
    };
    try {
      const result = await syncManagedIdentityStatus(dependencies(), request);
      appendRunRecord(recordOfPass(recordOf(operation, inputs.clusterResourceId), result, driftForced));
      return { id: result.documentId, outs: toOutputs(inputs, result, []) };
    } catch (error) {
      appendRunRecord(recordOfFailedPass(recordOf(operation, inputs.clusterResourceId), error, driftForced));
      const partial = partialResultOf(error);
      if (partial !== undefined) {
        // Something was persisted (or identities failed beside it); record it in state and fail the
        // run ("initialization failed"), keeping __provider so a later refresh or destroy can load this provider.
        const message = error instanceof Error ? error.message : String(error);
        // Named as the failure it carries (AzureAccessError, MsiIdentitiesError, …), so callers still tell them apart.
        const named = new Error(message);
        if (error instanceof Error) Object.defineProperty(named, "name", { value: error.name, writable: true, configurable: true, enumerable: false });
        throw Object.assign(named, {
          id: partial.documentId,
          properties: { ...toOutputs(inputs, partial, []), ...(inputs.__provider === undefined ? {} : { __provider: inputs.__provider }) },
          reasons: [message],
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
      // Settings wrong for every cluster fail the first check, once, before any request (settingsCheck.ts).
      const settingsProblem = fleetSettings();
      if (settingsProblem !== undefined) return Promise.resolve({ inputs: news, failures: [{ property: "", reason: settingsProblem }] });
      const recheck = parseRecheck(process.env.ARO_HCP_RECHECK);
      if (!recheck.ok) return Promise.resolve({ inputs: news, failures: [{ property: "", reason: recheck.reason }] });
      // The engine's bag is untyped: parse it. On failure the engine reports the failures and uses no inputs.
      const parsed = parseInputs(news);
      return Promise.resolve(parsed.ok ? { inputs: parsed.value, failures: [] } : { inputs: news, failures: [...parsed.failures] });
    },

    async diff(_id: string, olds: Outputs, news: Inputs) {
      const oldCluster = typeof olds.clusterResourceId === "string" ? goToLower(olds.clusterResourceId) : undefined;
      if (news.clusterResourceId !== undefined && !containsUnknown(news.clusterResourceId) && goToLower(news.clusterResourceId) !== oldCluster) {
        // Another cluster is another document: a new resource; the old one's delete writes nothing.
        return { changes: true, replaces: ["clusterResourceId"] };
      }
      const stored = parseStoredOutputs(olds);
      if (olds.__provider !== news.__provider || containsUnknown(news) || !stored.ok) {
        // Another provider text: the update stores the program's, which refresh and destroy load,
        // and writes nothing to Cosmos unless due. Outputs this version does not read (another
        // schema version, a hand edit): the update runs a full pass and writes the current ones.
        return { changes: true };
      }
      const old = stored.value;
      if (old.drift.length > 0 || old.inputsDigest !== inputsDigestOf(news) || rechecksNow(old.clusterResourceId)) {
        return { changes: true };
      }
      const changes = await hasWork(dependencies, old, news, (overrides.now ?? (() => new Date()))());
      // No work: the run report counts the cluster current (an update records what it does instead).
      if (!changes) appendRunRecord({ ...recordOf("diff", old.clusterResourceId), dataPlane: "current", msi: "current" });
      return { changes };
    },

    async create(inputs: Inputs) {
      const now = rechecksNow(inputs.clusterResourceId);
      return reconcile(inputs, { dataPlane: now, msi: now }, "create");
    },

    async update(_id: string, olds: Outputs, news: Inputs) {
      const stored = parseStoredOutputs(olds);
      // Drift forces the half it was found in; unknown state forces both.
      const drift = stored.ok ? stored.value.drift : [];
      const driftForced = {
        dataPlane: drift.some((line) => !line.startsWith(msiDriftPrefix)),
        msi: drift.some((line) => line.startsWith(msiDriftPrefix)),
      };
      // ARO_HCP_RECHECK forces both halves as well.
      const now = rechecksNow(news.clusterResourceId) || !stored.ok;
      const force = { dataPlane: now || driftForced.dataPlane, msi: now || driftForced.msi };
      const { outs } = await reconcile(news, force, "update", driftForced);
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
      const { status: lastStatus, msiStatus: lastMsi } = stored.value;
      const record = recordOf("read", stored.value.clusterResourceId);
      const result = await refreshManagedIdentityStatus(
        dependencies(),
        parseCluster(stored.value.clusterResourceId),
        (persistedKeys) => decodeOutputsStatus(lastStatus, persistedKeys),
        (persistedKeys) => decodeMsiOutputs(lastMsi, persistedKeys),
      ).catch((error: unknown) => {
        appendRunRecord(recordOfFailedPass(record, error));
        // The engine shows the message under the resource; the SDK's provider host would also print its stack.
        throw withoutStackTrace(error);
      });
      appendRunRecord(recordOfRefresh(record, result));
      if (result.presence === "deleted") {
        // The cluster's documents are gone from where the fleet's are, so is the record: the engine drops the resource.
        return { id: "", props };
      }
      return { id, props: refreshedOutputs(props, stored.value, result) };
    },

    /**
     * Relinquishes the cluster: nothing is written to Cosmos and nothing is read. The status stays
     * as last written, as upstream leaves it; the documents go with the cluster. The resource's
     * default `retainOnDelete` (serviceProviderClusterIdentityStatus.ts) keeps the engine from
     * calling this at all; it runs for resources whose state predates that default, or that set
     * the option to false.
     */
    delete(_id: string, props: Outputs) {
      const cluster = typeof props.clusterResourceId === "string" ? props.clusterResourceId : "(no cluster ID recorded)";
      log("info", "delete", cluster, "relinquished: the status in Cosmos stays as last written; nothing was written");
      return Promise.resolve();
    },
  };
}

/**
 * The production implementation, returned by the provider text's `handler()` (providerLoader.ts)
 * inside the provider host. One instance per process, shared by every resource.
 */
export const managedIdentityStatusImplementation = createManagedIdentityStatusProvider();
