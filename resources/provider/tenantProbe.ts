/**
 * `ARO_HCP_RECHECK=tenants`: one cluster of each tenant rechecked now, the cheap way to learn that a
 * tenant's credential no longer works before the next recheck. In production's mode a cluster's
 * tenant is the `tid` its identity URL names (the data plane's challenge names the same tenant);
 * without an identity URL, the cluster's subscription stands for it. `diff` reads the cluster
 * document of each cluster (one point read, no Azure request) and the first cluster seen of a
 * tenant becomes its probe for this process: `diff` reports a change, and the update that follows
 * forces both halves (recheckRequest.ts `tenantProbeClusters`). Which cluster of a tenant is its
 * probe depends on the order the engine diffs them.
 */
import { desiredFromClusterDocument } from "../core/clusterDocument";
import { goToLower } from "../core/goStrings";
import { locate } from "../core/documentLocation";
import { readClusterDocument } from "../sync/documents";
import type { SyncDependencies } from "../sync/syncDependencies";
import { parseCluster } from "./providerInputs";
import { parseRecheck, recheckVariable, tenantProbeClusters } from "./recheckRequest";

/** The tenants that have a probe in this process, to the probe's cluster ID. */
const probes = new Map<string, string>();

/** The tenant an identity URL names (`tid`), or undefined. */
export function tenantOfIdentityUrl(identityUrl: string | undefined): string | undefined {
  if (identityUrl === undefined) return undefined;
  try {
    const tenant = new URL(identityUrl).searchParams.get("tid");
    return tenant === null || tenant.length === 0 ? undefined : goToLower(tenant);
  } catch {
    return undefined;
  }
}

/** Makes the cluster its tenant's probe when the tenant has none yet; whether it is the probe. */
export function claimTenantProbe(tenant: string, clusterResourceId: string): boolean {
  const id = goToLower(clusterResourceId);
  const probe = probes.get(tenant) ?? id;
  probes.set(tenant, probe);
  if (probe === id) tenantProbeClusters.add(id);
  return probe === id;
}

/**
 * Whether this cluster is its tenant's probe under `ARO_HCP_RECHECK=tenants`: false without that
 * value, else one read of the cluster document (a document that cannot be read probes nothing:
 * the update's pass names the problem).
 */
export async function probesTenant(
  dependencies: () => SyncDependencies,
  clusterResourceId: string,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const recheck = parseRecheck(environment[recheckVariable]);
  if (!recheck.ok || recheck.value.kind !== "tenants") return false;
  const cluster = parseCluster(clusterResourceId);
  const location = locate(cluster);
  const stored = await readClusterDocument(dependencies(), location).catch(() => undefined);
  if (stored === undefined) return false;
  const verdict = desiredFromClusterDocument(stored.document);
  const tenant = tenantOfIdentityUrl(verdict.identityUrl) ?? `subscription ${goToLower(cluster.subscriptionId)}`;
  return claimTenantProbe(tenant, clusterResourceId);
}
