/**
 * Recheck now (ARO_HCP_RECHECK, resources/provider/recheckRequest.ts) through the literal `pulumi`
 * CLI over the project's Pulumi.yaml, in production's credential mode: identities deleted and
 * recreated with new IDs stay stale in Cosmos through a plain `up` (no recheck is due), and one
 * `up` with the variable naming their cluster corrects both halves at once, asking Azure for that
 * cluster only. The same recheck of one cluster is the probe of its tenant's credential. Cosmos
 * and the run report are read back.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { demoTenantIds } from "../../sandbox/seed";
import type { LiteralDemoFleet } from "./engineHelpers";
import { removeLiteralStack, revokedCertificateFault, startLiteralDemoFleet } from "./engineHelpers";

const stackName = `recheck-${process.pid}`;

type Entry = { readonly clientId?: string; readonly principalId?: string };
interface Status {
  readonly dataPlaneOperatorsManagedIdentities?: { readonly identities?: Record<string, Entry> };
  readonly msiManagedIdentities?: { readonly controlPlaneOperatorsIdentities?: Record<string, Entry> };
}

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let pulumi: LiteralDemoFleet["pulumi"];

async function document(cluster: FleetClusterDescription): Promise<{ _etag?: string; properties?: { status?: Status } } | undefined> {
  return (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<{ properties?: { status?: Status } }>())
    .resource;
}

function nameOf(cluster: FleetClusterDescription): string {
  const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
  return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
}

beforeAll(async () => {
  ({ scratchDirectory, sandbox, fleet, pulumi } = await startLiteralDemoFleet("aro-hcp-recheck-", stackName));
  await pulumi({}, "up", "--yes", "--skip-preview");
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("recheck now (ARO_HCP_RECHECK)", () => {
  it("corrects identities recreated with new IDs before their recheck is due, asking Azure for the named cluster only", async () => {
    const [first, ...rest] = fleet;
    const dataPlaneIdentity = Object.values(first.dataPlaneOperators)[0];
    const controlPlaneIdentity = Object.values(first.controlPlaneOperators ?? {})[0];
    // Deleted and recreated under the same names: new client and principal IDs.
    const recreated = [dataPlaneIdentity, controlPlaneIdentity].map((id) => sandbox.identities.rotate(id));
    const recorded = (await document(first))?.properties?.status;

    // A plain up: no recheck is due, nothing is asked, the stale IDs stay (the problem).
    await pulumi({}, "up", "--yes", "--skip-preview");
    expect((await document(first))?.properties?.status).toEqual(recorded);

    // One up naming the cluster (in other casing): both halves asked now, and corrected.
    const othersBefore = await Promise.all(rest.map(document));
    const armBefore = { ...sandbox.statistics.snapshot().arm.requestsByIdentity };
    const records = join(scratchDirectory, "recheck-records.jsonl");
    const output = await pulumi({ ARO_HCP_RECHECK: first.clusterResourceId.toUpperCase(), ARO_HCP_RUN_RECORDS: records }, "up", "--yes", "--skip-preview");
    expect(output).toMatch(/~ 1 updated/);
    const status = (await document(first))?.properties?.status;
    expect(status?.dataPlaneOperatorsManagedIdentities?.identities?.[dataPlaneIdentity.toLowerCase()]).toMatchObject({
      clientId: recreated[0]?.clientId,
      principalId: recreated[0]?.principalId,
    });
    expect(status?.msiManagedIdentities?.controlPlaneOperatorsIdentities?.[controlPlaneIdentity.toLowerCase()]).toMatchObject({
      clientId: recreated[1]?.clientId,
      principalId: recreated[1]?.principalId,
    });
    expect(await Promise.all(rest.map(document)), "the other clusters' documents, etags included").toEqual(othersBefore);
    const asked = Object.entries(sandbox.statistics.snapshot().arm.requestsByIdentity)
      .filter(([id, count]) => count !== (armBefore[id] ?? 0))
      .map(([id]) => id);
    expect(asked.length).toBeGreaterThan(0);
    for (const id of asked) expect(Object.values(first.dataPlaneOperators).map((operator) => operator.toLowerCase())).toContain(id);

    // The run report: that cluster written in both halves, the others current.
    const { reportRun } = await import("../../resources/report/runReport");
    const rechecked = reportRun(records);
    expect(rechecked.verdict).toBe("ok");
    expect(rechecked.clusters[nameOf(first)]).toMatchObject({ dataPlane: { outcome: "written", operation: "update" }, msi: { outcome: "written" } });
    for (const cluster of rest) expect(rechecked.clusters[nameOf(cluster)]).toMatchObject({ outcome: "current" });
  }, 600_000);

  it("refuses a value naming a cluster the update does not declare, before anything is declared", async () => {
    const before = await Promise.all(fleet.map(document));
    const stranger = fleet[0].clusterResourceId.replace("demo-cluster-one", "no-such-cluster");
    const refused = await pulumi({ ARO_HCP_RECHECK: stranger }, "up", "--yes", "--skip-preview").then(
      () => "",
      (error: unknown) => String(error),
    );
    expect(refused).toContain(`ARO_HCP_RECHECK names a cluster this update does not declare (${stranger.toLowerCase()})`);
    const notAnId = await pulumi({ ARO_HCP_RECHECK: "demo-cluster-one" }, "up", "--yes", "--skip-preview").then(
      () => "",
      (error: unknown) => String(error),
    );
    expect(notAnId).toContain("ARO_HCP_RECHECK names 'demo-cluster-one', which is not a cluster resource ID");
    expect(await Promise.all(fleet.map(document))).toEqual(before);
  }, 300_000);

  it("probes a tenant's credential: a recheck of one of its clusters fails at once, named in the report, with nothing written", async () => {
    const probe = fleet.find((cluster) => cluster.tenantId === demoTenantIds[1]);
    if (probe === undefined) throw new Error("the demo fleet has a cluster in its second tenant");
    sandbox.faults.add(revokedCertificateFault(demoTenantIds[1]));
    try {
      const before = await Promise.all(fleet.map(document));
      const records = join(scratchDirectory, "probe-records.jsonl");
      // A plain up is green: no recheck is due, so the refused credential goes unseen.
      await pulumi({ ARO_HCP_RUN_RECORDS: records }, "up", "--yes", "--skip-preview");
      const failed = await pulumi({ ARO_HCP_RECHECK: probe.clusterResourceId, ARO_HCP_RUN_RECORDS: records }, "up", "--yes", "--skip-preview").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(failed).toContain(`tenant ${demoTenantIds[1]}`);
      expect(await Promise.all(fleet.map(document))).toEqual(before);
      const { reportRun } = await import("../../resources/report/runReport");
      const probed = reportRun(records);
      expect(probed.verdict).toBe("failed");
      expect(probed.causes).toHaveLength(1);
      expect(probed.causes[0].resources).toEqual([nameOf(probe)]);
      expect(probed.causes[0].cause).toContain(demoTenantIds[1]);

      // The same probe over the fleet: ARO_HCP_RECHECK=tenants rechecks one cluster of each tenant.
      const armBefore = { ...sandbox.statistics.snapshot().arm.requestsByIdentity };
      const tenantRecords = join(scratchDirectory, "tenant-records.jsonl");
      const probedTenants = await pulumi({ ARO_HCP_RECHECK: "tenants", ARO_HCP_RUN_RECORDS: tenantRecords }, "up", "--yes", "--skip-preview").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(probedTenants).toContain(`tenant ${demoTenantIds[1]}`);
      const byTenant = reportRun(tenantRecords);
      expect(byTenant.causes.map((group) => group.resources)).toEqual([[nameOf(probe)]]);
      // Of the first tenant's two clusters, one was asked: its identities alone were read from ARM.
      const firstTenant = fleet.filter((cluster) => cluster.tenantId === demoTenantIds[0]);
      const askedClusters = firstTenant.filter((cluster) =>
        Object.values(cluster.dataPlaneOperators).some(
          (id) => (sandbox.statistics.snapshot().arm.requestsByIdentity[id.toLowerCase()] ?? 0) !== (armBefore[id.toLowerCase()] ?? 0),
        ),
      );
      expect(askedClusters).toHaveLength(1);
      // The refused tenant's cluster: nothing written.
      expect(await document(probe)).toEqual(before[fleet.indexOf(probe)]);
    } finally {
      sandbox.faults.clear();
    }
  }, 300_000);
});
