/**
 * Adoption says so: `pulumi preview` (the literal CLI over the project's Pulumi.yaml) of a new
 * stack over a fleet whose status is already current, as upstream's controllers keep it. The
 * engine says "+ create" for every cluster; the program's note says a create adopts and writes
 * nothing current, and the run report of the preview (ARO_HCP_RUN_RECORDS) says per cluster and
 * half that nothing changes in Cosmos. No Azure request, no Cosmos write, in the preview nor in
 * the `up` that adopts.
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedDemoFleet } from "../../sandbox/seed";
import { initLiteralStack, removeLiteralStack, runLiteralPulumi } from "./engineHelpers";

const projectDirectory = resolve(__dirname, "..", "..");
const stackName = `adoption-preview-${process.pid}`;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let environment: NodeJS.ProcessEnv;

function pulumi(extra: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  return runLiteralPulumi(projectDirectory, { ...environment, ...extra }, stackName, ...args);
}

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
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-adoption-")));
  sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca"), perClusterCredentials: true });
  fleet = seedDemoFleet(sandbox);
  environment = await initLiteralStack(
    sandbox,
    scratchDirectory,
    stackName,
    fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId })),
  );
  // The status made current, as upstream's controllers keep it; then the stack forgotten, its config kept.
  await pulumi({}, "up", "--yes", "--skip-preview");
  await pulumi({}, "stack", "rm", "--yes", "--force", "--preserve-config");
  await pulumi({}, "stack", "init");
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("a preview of adopting a fleet whose status is current", () => {
  it("says per cluster that nothing changes in Cosmos, asking Azure nothing and writing nothing", async () => {
    const before = await documents();
    const asked = requests();
    const records = join(scratchDirectory, "preview-records.jsonl");
    const preview = await pulumi({ ARO_HCP_RUN_RECORDS: records }, "preview");
    expect(preview).toMatch(/\+ 4 to create/);
    expect(preview).toContain("3 clusters are new to this stack");
    const { reportRun, formatRunReport } = await import("../../cli/runReport");
    const report = reportRun(records);
    expect(report.verdict).toBe("ok");
    expect(report.counts).toEqual({ clusters: 3, current: 3 });
    for (const cluster of Object.values(report.clusters)) {
      expect(cluster).toMatchObject({ dataPlane: { outcome: "current", operation: "preview" }, msi: { outcome: "current", operation: "preview" } });
    }
    expect(formatRunReport(report)).toMatch(/^Run report: OK; 3 clusters: 3 current$/);

    // A cluster whose recheck is due would be asked: the preview says which.
    const due = fleet[0];
    sandbox.documents.patch(
      due.partitionKey,
      due.serviceProviderClusterDocumentId,
      "/properties/status/dataPlaneOperatorsManagedIdentities/earliestRecheckTime",
      "2000-01-01T00:00:00Z",
    );
    const dueRecords = join(scratchDirectory, "due-records.jsonl");
    await pulumi({ ARO_HCP_RUN_RECORDS: dueRecords }, "preview");
    expect(
      Object.values(reportRun(dueRecords).clusters)
        .map((cluster) => cluster.dataPlane.outcome)
        .sort(),
    ).toEqual(["current", "current", "wouldAsk"]);
    expect(requests(), "data plane requests, tokens, ARM reads, Cosmos writes of the previews").toEqual(asked);
    expect((await documents()).slice(1), "the documents, etags included").toEqual(before.slice(1));
  }, 600_000);
});
