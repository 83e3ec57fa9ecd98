/**
 * Adoption says so: `pulumi preview` (the literal CLI over the project's Pulumi.yaml) of a new
 * stack over the sandbox's `--seed upstream` fleet, whose documents are as upstream's controllers
 * leave them (sandbox/upstreamSeed.ts). The engine says "+ create" for every cluster; the program's
 * note says a create adopts, and the run report of the preview (ARO_HCP_RUN_RECORDS) says per
 * cluster and half that nothing changes in Cosmos; the `up` that adopts writes nothing. Then the
 * admin interface moves the fleet's clock past the rechecks, and the next preview says which
 * halves would ask Azure. No Azure request and no Cosmos write but the rechecks'.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedUpstreamStatus } from "../../sandbox/upstreamSeed";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import type { LiteralDemoFleet } from "./engineHelpers";
import { removeLiteralStack, startLiteralDemoFleet } from "./engineHelpers";

const stackName = `adoption-preview-${process.pid}`;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let pulumi: LiteralDemoFleet["pulumi"];

function documents(): Promise<unknown[]> {
  return Promise.all(
    fleet.map(
      async (cluster) =>
        (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<Record<string, unknown>>()).resource,
    ),
  );
}

function requests(): number[] {
  const { dataPlane, entra, arm, cosmos } = sandbox.statistics.snapshot();
  const writes = Object.values(cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0);
  return [dataPlane.requests, entra.tokensIssued, arm.getRequests, writes];
}

beforeAll(async () => {
  ({ scratchDirectory, sandbox, fleet, pulumi } = await startLiteralDemoFleet("aro-hcp-adoption-", stackName));
  seedUpstreamStatus(sandbox, fleet);
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("a preview of adopting a fleet whose status is current", () => {
  it("says per cluster that nothing changes in Cosmos, asking Azure nothing and writing nothing; once the clock passes the rechecks, that they would ask", async () => {
    const before = await documents();
    const asked = requests();
    const records = join(scratchDirectory, "preview-records.jsonl");
    const preview = await pulumi({ ARO_HCP_RUN_RECORDS: records }, "preview");
    expect(preview).toMatch(/\+ 4 to create/);
    expect(preview).toContain("3 clusters are new to this stack");
    const { reportRun, formatRunReport } = await import("../../resources/report/runReport");
    const report = reportRun(records);
    expect(report.verdict).toBe("ok");
    expect(report.counts).toEqual({ clusters: 3, current: 3 });
    for (const cluster of Object.values(report.clusters)) {
      expect(cluster).toMatchObject({ dataPlane: { outcome: "current", operation: "preview" }, msi: { outcome: "current", operation: "preview" } });
    }
    expect(formatRunReport(report)).toMatch(/^Run report: OK; 3 clusters: 3 current$/);

    // Adopting: nothing written, nothing asked; the report of the up says the same as the preview's.
    const adoption = join(scratchDirectory, "adoption-records.jsonl");
    expect(await pulumi({ ARO_HCP_RUN_RECORDS: adoption }, "up", "--yes", "--skip-preview")).toMatch(/\+ 4 created/);
    expect(reportRun(adoption).counts).toEqual({ clusters: 3, current: 3 });
    expect(requests(), "data plane requests, tokens, ARM reads, Cosmos writes of the preview and the adoption").toEqual(asked);
    expect(await documents(), "the documents, etags included").toEqual(before);

    // Day 2: 19 hours pass for the fleet (the admin interface's clock): every recheck comes due. A
    // preview with a refresh (which reads the recheck times from Cosmos) says the update would ask Azure.
    const admin = new SandboxAdminClient(sandbox.endpoints.admin, sandbox.adminToken);
    expect(await admin.advanceClock({ hours: 19 })).toBe(6);
    const dueRecords = join(scratchDirectory, "due-records.jsonl");
    expect(await pulumi({ ARO_HCP_RUN_RECORDS: dueRecords }, "preview", "--refresh")).toMatch(/~ 3 to update/);
    expect(reportRun(dueRecords).counts).toEqual({ clusters: 3, wouldAsk: 3 });
    expect(requests()[3], "Cosmos writes of the preview").toBe(asked[3]);
  }, 600_000);
});
