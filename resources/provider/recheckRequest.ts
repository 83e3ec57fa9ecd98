/**
 * Whether an update has anything to do (`diff`) and which halves it forces past their recheck time.
 * Each half's gate (upstream's needsWork) is asked of the last state with no Azure call. Recheck now:
 * `ARO_HCP_RECHECK` (`all`, cluster resource IDs, or `tenants`: one cluster of each tenant), set for
 * one command, forces both halves of the clusters it names, as a refresh that failed in this run does
 * (docs/operations.md, "Recheck now").
 */
import { goToLower } from "../core/goStrings";
import { parseRecheck, recheckVariable } from "../core/recheckValue";
import type { ParsedResourceId } from "../core/azureResourceId";
import type { ClusterDesiredSet } from "../core/clusterDocument";
import { msiDesiredSet } from "../core/clusterDocument";
import type { DesiredIdentity } from "../core/statusHalf";
import { recheckDue } from "../core/statusHalf";
import { locate } from "../core/documentLocation";
import { msiHalf } from "../core/msiManagedIdentities";
import { decodeMsiOutputs } from "../core/msiOutputs";
import { decodeOutputsStatus } from "../core/outputsStatus";
import { dataPlaneHalf } from "../core/serviceProviderClusterDocument";
import { readClusterDesiredSet } from "../sync/documents";
import { msiDriftPrefix } from "../sync/refreshManagedIdentityStatus";
import type { SyncDependencies } from "../sync/syncDependencies";
import { readFileSync } from "node:fs";
import type { Halves } from "../core/clusterMessage";
import { runRecordsVariable } from "../report/runRecordFormat";
import { parseRunRecords } from "../report/runReport";
import type { ProviderInputs } from "./providerInputs";
import { desiredFromInputs, parseCluster } from "./providerInputs";
import type { StoredOutputs } from "./providerOutputs";

/** The tenants that have a probe in this process (`tenants`), to the probe's lowercased cluster ID; and the probes. */
const tenantProbes = new Map<string, string>();
const probeClusters = new Set<string>();

/** Whether the variable, as the environment holds it now, names this cluster; a value that does not parse names none (the check refuses it). */
export function rechecksNow(clusterResourceId: string, environment: NodeJS.ProcessEnv = process.env): boolean {
  const recheck = parseRecheck(environment[recheckVariable]);
  if (!recheck.ok) return false;
  const id = goToLower(clusterResourceId);
  const request = recheck.value;
  return request.kind === "all" || (request.kind === "clusters" && request.ids.has(id)) || (request.kind === "tenants" && probeClusters.has(id));
}

/**
 * Whether this cluster is its tenant's probe under `ARO_HCP_RECHECK=tenants`: the first cluster seen
 * of a tenant (its identity URL's `tid`, else its subscription); a document not read probes nothing.
 */
async function probesTenant(dependencies: () => SyncDependencies, clusterResourceId: string): Promise<boolean> {
  const recheck = parseRecheck(process.env[recheckVariable]);
  if (!recheck.ok || recheck.value.kind !== "tenants") return false;
  const cluster = parseCluster(clusterResourceId);
  const verdict = await clusterDesiredSet(dependencies, cluster).catch(() => undefined);
  if (verdict === undefined) return false;
  return claimTenantProbe(tenantOfIdentityUrl(verdict.identityUrl) ?? `subscription ${goToLower(cluster.subscriptionId)}`, clusterResourceId);
}

/** The tenant an identity URL names (`tid`), or undefined. */
export function tenantOfIdentityUrl(identityUrl: string | undefined): string | undefined {
  if (identityUrl === undefined || !URL.canParse(identityUrl)) return undefined;
  const tenant = new URL(identityUrl).searchParams.get("tid");
  return tenant === null || tenant.length === 0 ? undefined : goToLower(tenant);
}

/** Makes the cluster its tenant's probe when the tenant has none yet; whether it is the probe. */
export function claimTenantProbe(tenant: string, clusterResourceId: string): boolean {
  const id = goToLower(clusterResourceId);
  if (!tenantProbes.has(tenant)) tenantProbes.set(tenant, id);
  if (tenantProbes.get(tenant) !== id) return false;
  probeClusters.add(id);
  return true;
}

let refreshFailures: { readonly file: string; readonly ids: ReadonlySet<string> } | undefined;

/**
 * Whether the cluster's latest refresh in this run's records (`ARO_HCP_RUN_RECORDS`) failed: the update
 * then asks Azure again at once, so a passing failure is corrected in the same run and a lasting one
 * fails the update. The file is read once per process (the provider host runs one command).
 */
export function refreshFailedThisRun(clusterResourceId: string, environment: NodeJS.ProcessEnv = process.env): boolean {
  const file = environment[runRecordsVariable] ?? "";
  if (file.length === 0) return false;
  if (refreshFailures?.file !== file) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // No records yet: no refresh of this run failed.
    }
    const ids = new Set<string>();
    for (const record of parseRunRecords(text).filter((entry) => entry.operation === "read")) {
      const id = goToLower(record.clusterResourceId);
      if (record.dataPlane === "failed" || record.msi === "failed") ids.add(id);
      else ids.delete(id);
    }
    refreshFailures = { file, ids };
  }
  return refreshFailures.ids.has(goToLower(clusterResourceId));
}

/** What is wrong with the variable's value, for the provider's first check; undefined when nothing. */
export function recheckProblem(environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const recheck = parseRecheck(environment[recheckVariable]);
  return recheck.ok ? undefined : recheck.reason;
}

/**
 * The halves an update forces past their recheck gate: each half a refresh found drift in
 * (`driftForced`, which the run report counts as drift corrected), and both when the variable
 * names the cluster, its refresh failed in this run or the state is unknown (`drift` undefined).
 */
export function forcedHalves(
  drift: readonly string[] | undefined,
  clusterResourceId: string,
  environment: NodeJS.ProcessEnv = process.env,
): { force: Halves; driftForced: Halves } {
  const lines = drift ?? [];
  const driftForced = { dataPlane: lines.some((line) => !line.startsWith(msiDriftPrefix)), msi: lines.some((line) => line.startsWith(msiDriftPrefix)) };
  const both = drift === undefined || rechecksNow(clusterResourceId, environment) || refreshFailedThisRun(clusterResourceId, environment);
  return { driftForced, force: { dataPlane: both || driftForced.dataPlane, msi: both || driftForced.msi } };
}

/** Whether an update of a cluster whose last pass succeeded with these inputs has anything to do now. */
export async function updateDue(dependencies: () => SyncDependencies, old: StoredOutputs, news: ProviderInputs, now: () => Date): Promise<boolean> {
  const id = old.clusterResourceId;
  return rechecksNow(id) || refreshFailedThisRun(id) || (await probesTenant(dependencies, id)) || (await hasWork(dependencies, old, news, now()));
}

/** Whether the last state's halves call for an update now; a cluster document gone or unreadable is a change (the pass says why). */
async function hasWork(dependencies: () => SyncDependencies, old: StoredOutputs, news: ProviderInputs, now: Date): Promise<boolean> {
  const desired = desiredFromInputs(news);
  if (desired !== undefined) {
    // Same declared map (same digest): the operators' keys are the desired keys.
    if (dataPlaneHasWork(old, desired, now)) return true;
    return old.msiSkippedReason === null && recheckDue(old.msiStatus.earliestRecheckTime, now);
  }
  const fromCluster = await clusterDesiredSet(dependencies, parseCluster(news.clusterResourceId));
  if (fromCluster === undefined || fromCluster.kind === "unreadable") return true;
  if (fromCluster.kind === "deleting") return old.skippedReason !== "clusterDeleting";
  // The recorded service managed identity follows the document unless the inputs name one.
  const serviceManagedIdentityMoved = news.serviceManagedIdentity === undefined && (fromCluster.serviceManagedIdentity ?? null) !== old.serviceManagedIdentity;
  if (old.skippedReason !== null || serviceManagedIdentityMoved || dataPlaneHasWork(old, fromCluster.identities, now)) return true;
  if (fromCluster.identityUrl === undefined) return old.msiSkippedReason === null;
  const msi = msiDesiredSet(fromCluster.controlPlaneOperators, fromCluster.serviceManagedIdentity);
  if (!msi.ok) return true;
  const keys = [...msi.desired.controlPlaneOperators.map((identity) => identity.key), msi.desired.serviceManagedIdentity.key];
  return msiHalf.workReason(msi.desired, decodeMsiOutputs(old.msiStatus, keys).status, now) !== undefined;
}

/** What the cluster's live document names (no wait), or undefined when it is gone. */
async function clusterDesiredSet(dependencies: () => SyncDependencies, cluster: ParsedResourceId): Promise<ClusterDesiredSet | undefined> {
  return readClusterDesiredSet(dependencies(), locate(cluster));
}

function dataPlaneHasWork(old: StoredOutputs, desired: readonly DesiredIdentity[], now: Date): boolean {
  const keys = desired.map((identity) => identity.key);
  return dataPlaneHalf.workReason(desired, decodeOutputsStatus(old.status, keys), now) !== undefined;
}
