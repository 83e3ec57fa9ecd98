/**
 * The dynamic provider: thin methods over the sync pass and refresh, inside the provider host. Settings
 * come from `configure` or the environment at call time. The factory is the seam for tests.
 */
import { goToLower } from "../core/goStrings";
import type * as pulumi from "@pulumi/pulumi";
import type { AzureAdapters } from "./azureAdapters";
import { sharedAzureAdapters } from "./azureAdapters";
import { decodeMsiOutputs } from "../core/msiOutputs";
import { fleetSettingsProblem } from "./settingsCheck";
import type { ProviderInputs } from "./providerInputs";
import { containsUnknown, desiredFromInputs, parseCluster, parseInputs } from "./providerInputs";
import type { ProviderOutputs } from "./providerOutputs";
import { declaredCredentialOf, failedPassOutputs, inputsDigestOf, parseStoredOutputs, passFailureOf, refreshedOutputs, toOutputs } from "./providerOutputs";
import { locate } from "../core/documentLocation";
import { refreshManagedIdentityStatus } from "../sync/refreshManagedIdentityStatus";
import { log } from "../logging/logger";
import type { ConfigSource } from "../core/settings";
import { readSettings, settingsEnvironmentKey, snapshotStackConfig } from "../core/settings";
import { decodeOutputsStatus, presentFields } from "../core/outputsStatus";
import type { SyncDependencies, SyncOptions } from "../sync/syncDependencies";
import { partialResultOf, syncManagedIdentityStatus } from "../sync/syncManagedIdentityStatus";
import { addSecretSettingValues, tracePass, traceProviderCalls } from "../telemetry/providerSpans";
import type { RunRecord } from "../report/runRecordFormat";
import type { Halves } from "../core/clusterMessage";
import { messageOf } from "../core/clusterMessage";
import {
  appendRunRecord,
  recordHeader,
  recordOfFailedPass,
  recordOfPass,
  recordOfRefresh,
  refusedRecord,
  runRecorded,
  diffRecord,
  failedDiffRecord,
  recordAdoptionPreview,
} from "../report/runRecord";
import { throwWithoutStackTrace, withoutStackTrace } from "./expectedFailures";
import { engineReasonOf } from "./engineReason";
import { forcedHalves, recheckProblem, rechecksNow, updateDue } from "./recheckRequest";

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

export function createManagedIdentityStatusProvider(overrides: ProviderOverrides = {}): pulumi.dynamic.ResourceProvider<Inputs, Outputs> {
  // Filled by `configure` inside the provider host.
  const configured: { snapshot?: Record<string, string | undefined> } = {};
  const now = overrides.now ?? (() => new Date());

  // Built again only when `configure` hands over another config or a settings variable changes.
  const perConfiguration = <T>(compute: (config: ConfigSource | undefined) => T): (() => T) => {
    let memo: { readonly snapshot: unknown; readonly environment: string; readonly value: T } | undefined;
    return () => {
      const environment = settingsEnvironmentKey(process.env);
      if (memo === undefined || memo.snapshot !== configured.snapshot || memo.environment !== environment) {
        const snapshot = configured.snapshot;
        const config: ConfigSource | undefined = overrides.config ?? (snapshot === undefined ? undefined : { get: (key) => snapshot[key] });
        memo = { snapshot, environment, value: compute(config) };
      }
      return memo.value;
    };
  };

  const dependencies = perConfiguration((config): SyncDependencies => {
    const settings = overrides.adapters === undefined || overrides.options === undefined ? readSettings(config, process.env) : undefined;
    const defaults: SyncOptions = {
      lookupTimeoutInMs: settings?.lookupTimeoutInMs ?? 30_000,
      documentWaitInMs: settings?.documentWaitInMs ?? 60_000,
      documentPollIntervalInMs: settings?.documentPollIntervalInMs ?? 1000,
      maxWriteAttempts: settings?.maxWriteAttempts ?? 5,
      idsOnLookupFailure: settings?.idsOnLookupFailure ?? "keep",
      allowFixedIdentityOverwrite: settings?.allowFixedIdentityOverwrite ?? false,
    };
    return {
      ...(overrides.adapters ?? sharedAzureAdapters(settings ?? readSettings(config, process.env))),
      now,
      random: overrides.random ?? Math.random,
      sleep: overrides.sleep ?? ((durationInMs) => new Promise((resolve) => setTimeout(resolve, durationInMs))),
      options: { ...defaults, ...overrides.options },
    };
  });

  const fleetSettings = perConfiguration((config) => fleetSettingsProblem(config, process.env));

  const recordOf = (operation: RunRecord["operation"], clusterResourceId: string) => recordHeader(operation, clusterResourceId, now());
  // The clusters this provider read (refreshed). The host loads one provider per `pulumi` command, and
  // only a refresh reads: its refresh step reads a cluster, then diffs it to show what an update would
  // change. So a diff of a cluster read here is the refresh's, and its record says so (runRecord.ts).
  const readHere = new Set<string>();

  const reconcile = async (
    inputs: Inputs,
    force: Halves,
    operation: "create" | "update",
    // The halves a refresh's drift forced: a write there corrects drift (the run report says so).
    driftForced: Halves = { dataPlane: false, msi: false },
    // An update's resource ID and stored outputs, kept as they are when the pass fails.
    existing?: { readonly id: string; readonly outputs: Outputs },
  ): Promise<{ id: string; outs: Outputs }> => {
    const cluster = parseCluster(inputs.clusterResourceId);
    const request = { cluster, desired: desiredFromInputs(inputs), force: force.dataPlane, forceMsi: force.msi, ...declaredCredentialOf(inputs) };
    try {
      const result = await tracePass("sync", cluster, dependencies(), (traced) => syncManagedIdentityStatus(traced, request));
      appendRunRecord(recordOfPass(recordOf(operation, inputs.clusterResourceId), result, driftForced));
      return { id: result.documentId, outs: toOutputs(inputs, result, []) };
    } catch (error) {
      const record = recordOfFailedPass(recordOf(operation, inputs.clusterResourceId), error, driftForced);
      appendRunRecord(record);
      // A partial failure: the engine stores these outputs (the status as the pass left it, the failure beside it)
      // and runs the update again next time; __provider lets refresh and destroy load this provider.
      const partial = partialResultOf(error);
      const message = messageOf(error);
      const outputs = failedPassOutputs(inputs, existing?.outputs, partial, passFailureOf(record));
      throw Object.assign(error instanceof Error ? error : new Error(message), {
        id: partial?.documentId ?? existing?.id ?? locate(cluster).documentId,
        properties: { ...outputs, ...presentFields({ __provider: inputs.__provider }) },
        // What the engine prints under the resource: each cause once (engineReason.ts).
        reasons: [engineReasonOf(message)],
      });
    }
  };

  // Each call in a span, while tracing is on (telemetry/providerSpans.ts).
  return traceProviderCalls<Inputs, Outputs>({
    configure(request: pulumi.dynamic.ConfigureRequest) {
      configured.snapshot = snapshotStackConfig(request.config);
      // A Cosmos key from the stack config is a secret no span may carry.
      addSecretSettingValues([configured.snapshot.cosmosKey]);
      return Promise.resolve();
    },

    async check(olds: Partial<Inputs>, news: Inputs) {
      // Settings wrong for every cluster (the fakes of unit tests bring their own adapters), or a recheck naming no
      // cluster, fail the first check, once, before any request.
      const problem = (overrides.adapters === undefined ? fleetSettings() : undefined) ?? recheckProblem();
      if (problem !== undefined) {
        if (typeof news.clusterResourceId === "string") appendRunRecord(refusedRecord(recordOf("check", news.clusterResourceId), problem));
        return { inputs: news, failures: [{ property: "", reason: problem }] };
      }
      // The engine's bag is untyped: parse it. On failure the engine reports the failures and uses no inputs.
      const parsed = parseInputs(news);
      if (!parsed.ok) return { inputs: news, failures: [...parsed.failures] };
      const id = parsed.value.clusterResourceId;
      // A cluster new to the stack, in a recorded run: what its create would change in Cosmos (report/runRecord.ts).
      if (typeof olds.clusterResourceId !== "string" && runRecorded())
        await recordAdoptionPreview(dependencies, recordOf("preview", id), parseCluster(id), desiredFromInputs(parsed.value), rechecksNow(id));
      return { inputs: parsed.value, failures: [] };
    },

    async diff(_id: string, olds: Outputs, news: Inputs) {
      const oldCluster = typeof olds.clusterResourceId === "string" ? goToLower(olds.clusterResourceId) : undefined;
      if (news.clusterResourceId !== undefined && !containsUnknown(news.clusterResourceId) && goToLower(news.clusterResourceId) !== oldCluster) {
        // Another cluster is another document: a new resource; the old one's delete writes nothing.
        return { changes: true, replaces: ["clusterResourceId"] };
      }
      const stored = parseStoredOutputs(olds);
      if (olds.__provider !== news.__provider || containsUnknown(news) || !stored.ok) {
        // Another provider text: the update stores the program's and writes nothing to Cosmos unless due.
        // Outputs this version does not read: the update runs a full pass and writes the current ones.
        return { changes: true };
      }
      const old = stored.value;
      // Drift, other inputs or a failed last pass: the update runs the pass again.
      if (old.drift.length > 0 || old.failure !== null || old.inputsDigest !== inputsDigestOf(news)) return { changes: true };
      const record = recordOf("diff", old.clusterResourceId);
      const duringRefresh = readHere.has(goToLower(old.clusterResourceId));
      const changes = await updateDue(dependencies, old, news, now).catch((error: unknown) => {
        // The engine updates nothing after a diff that throws: nothing of either half was written.
        appendRunRecord(failedDiffRecord(record, error, duringRefresh));
        return throwWithoutStackTrace(error);
      });
      appendRunRecord(diffRecord(record, changes, duringRefresh));
      return { changes };
    },

    async create(inputs: Inputs) {
      return reconcile(inputs, forcedHalves([], inputs.clusterResourceId).force, "create");
    },

    async update(id: string, olds: Outputs, news: Inputs) {
      const stored = parseStoredOutputs(olds);
      // Drift forces the half it was found in; unknown state, a failed last pass and ARO_HCP_RECHECK force both.
      const { force, driftForced } = forcedHalves(stored.ok ? stored.value.drift : undefined, news.clusterResourceId);
      const failedBefore = stored.ok && stored.value.failure !== null;
      const { outs } = await reconcile(news, failedBefore ? { dataPlane: true, msi: true } : force, "update", driftForced, { id, outputs: olds });
      return { outs };
    },

    async read(id: string, props?: Outputs) {
      const stored = parseStoredOutputs(props);
      if (props === undefined || !stored.ok) {
        // Import or get: no state to refresh. Outputs this version does not read stay until the update diff asks for.
        return { id, props };
      }
      const old = stored.value;
      const record = recordOf("read", old.clusterResourceId);
      readHere.add(goToLower(old.clusterResourceId));
      const cluster = parseCluster(old.clusterResourceId);
      const result = await tracePass("refresh", cluster, dependencies(), (traced) =>
        refreshManagedIdentityStatus(
          traced,
          cluster,
          (keys) => decodeOutputsStatus(old.status, keys),
          (keys) => decodeMsiOutputs(old.msiStatus, keys),
        ),
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
      return { id, props: refreshedOutputs(props, old, result) };
    },

    /** Relinquishes the cluster, writing nothing, as upstream leaves the status; runs only for resources whose `retainOnDelete` is false. */
    delete(_id: string, props: Outputs) {
      const cluster = typeof props.clusterResourceId === "string" ? props.clusterResourceId : "(no cluster ID recorded)";
      log("info", "delete", cluster, "relinquished: the status in Cosmos stays as last written; nothing was written");
      return Promise.resolve();
    },
  });
}

/** The production implementation, which the provider text's `handler()` returns: one per process, shared by every resource. */
export const managedIdentityStatusImplementation = createManagedIdentityStatusProvider();
