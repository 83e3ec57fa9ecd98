/**
 * `ARO_HCP_RECHECK=tenants`: one cluster of each tenant rechecked now, to learn early that a tenant's
 * credential no longer works. A cluster's tenant is the `tid` of its identity URL (else its
 * subscription stands for it). `diff` reads each cluster document, and the first cluster seen of a
 * tenant becomes its probe: `diff` reports a change and the update forces both halves.
 */
import { goToLower } from "../core/goStrings";
import type { SyncDependencies } from "../sync/syncDependencies";
import { clusterDesiredSet } from "./providerDiff";
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

/** Whether this cluster is its tenant's probe under `ARO_HCP_RECHECK=tenants`; a document that cannot be read probes nothing. */
export async function probesTenant(
  dependencies: () => SyncDependencies,
  clusterResourceId: string,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const recheck = parseRecheck(environment[recheckVariable]);
  if (!recheck.ok || recheck.value.kind !== "tenants") return false;
  const cluster = parseCluster(clusterResourceId);
  const verdict = await clusterDesiredSet(dependencies, cluster).catch(() => undefined);
  if (verdict === undefined) return false;
  const tenant = tenantOfIdentityUrl(verdict.identityUrl) ?? `subscription ${goToLower(cluster.subscriptionId)}`;
  return claimTenantProbe(tenant, clusterResourceId);
}
