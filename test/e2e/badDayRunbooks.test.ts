/**
 * The day-2 runbooks on a bad day (docs/runbooks/stop-managing-a-cluster.md), through the literal
 * `pulumi` CLI over the project's Pulumi.yaml in production's credential mode, over the demo fleet as
 * upstream's controllers leave it, while Entra ID refuses (through the sandbox's admin interface)
 * the tenant of two of its three clusters:
 * - each failed cluster's cause is printed once, in its own error; the stack's warning names the
 *   clusters and points at that error;
 * - a cluster removed from the list leaves the stack with `up --continue-on-error` or `up --target
 *   <its URN>`, while a plain `up` stops at the failing clusters before any delete;
 * - a mistyped cluster ID leaves a failed create in state, which removing it from the list and `up`
 *   deletes.
 * State is read back with `pulumi stack export`, Cosmos DB from the sandbox's container.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { demoTenantIds } from "../../sandbox/seed";
import { seedUpstreamStatus } from "../../sandbox/upstreamSeed";
import { SandboxAdminClient } from "../../sandbox/adminClient";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import type { LiteralDemoFleet } from "./engineHelpers";
import { removeLiteralStack, revokedCertificateFault, startLiteralDemoFleet } from "./engineHelpers";

const stackName = `bad-day-${process.pid}`;
/** The cause of Entra ID's refusal, as every message that carries it spells it. */
const cause = "AADSTS90033: The certificate used by the client has been revoked.";

interface StateResource {
  readonly urn: string;
  readonly type: string;
  readonly outputs?: { readonly failure?: { readonly cause: string; readonly halves: string[] } | null; readonly status?: string };
  readonly initErrors?: string[];
}

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let pulumi: LiteralDemoFleet["pulumi"];
let admin: SandboxAdminClient;
/** The two clusters of the refused tenant, and the third, whose tenant works. */
let refused: FleetClusterDescription[];
let healthy: FleetClusterDescription;

function nameOf(clusterResourceId: string): string {
  const [, , subscription, , resourceGroup, , , , name] = clusterResourceId.split("/");
  return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
}

/** The stack's clusters file (engineHelpers' initLiteralStack): the list the next command declares. */
function declare(clusterResourceIds: readonly string[]): void {
  writeFileSync(join(scratchDirectory, "clusters.json"), JSON.stringify(clusterResourceIds.map((clusterResourceId) => ({ clusterResourceId }))));
}

/** The cluster resources in state, by name, as `pulumi stack export` reads them back. */
async function clustersInState(): Promise<Map<string, StateResource>> {
  const exported = JSON.parse(await pulumi({}, "stack", "export")) as { deployment: { resources?: StateResource[] } };
  return new Map(
    (exported.deployment.resources ?? [])
      .filter((resource) => resource.type === resourceTypeToken)
      .map((resource): [string, StateResource] => [resource.urn.split("::").pop() ?? "", resource]),
  );
}

/** Every document of the container (the clusters', their subscriptions'), envelope and etag included. */
async function containerDocuments(): Promise<unknown[]> {
  const { resources } = await sandbox.cosmosContainer.items.readAll().fetchAll();
  return resources.sort((left, right) => String(left.id).localeCompare(String(right.id)));
}

async function document(cluster: FleetClusterDescription): Promise<unknown> {
  return (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read()).resource;
}

/** A command expected to fail: its output. */
function failing(run: Promise<string>): Promise<string> {
  return run.then(
    (output) => {
      throw new Error(`expected the command to fail:\n${output}`);
    },
    (error: unknown) => String(error),
  );
}

/** The error the engine prints under a resource in "Diagnostics", up to the next blank line. */
function diagnosticOf(output: string, resourceName: string): string {
  const heading = `ServiceProviderClusterIdentityStatus (${resourceName}):\n`;
  const start = output.indexOf(heading);
  if (start === -1) return "";
  const end = output.indexOf("\n\n", start);
  return output.slice(start, end === -1 ? undefined : end);
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

beforeAll(async () => {
  ({ scratchDirectory, sandbox, fleet, pulumi } = await startLiteralDemoFleet("aro-hcp-bad-day-", stackName));
  seedUpstreamStatus(sandbox, fleet);
  admin = new SandboxAdminClient(sandbox.endpoints.admin, sandbox.adminToken);
  refused = fleet.filter((cluster) => cluster.tenantId === demoTenantIds[0]);
  const others = fleet.filter((cluster) => cluster.tenantId !== demoTenantIds[0]);
  if (refused.length !== 2 || others.length !== 1) throw new Error("the demo fleet has two clusters in its first tenant and one in the other");
  healthy = others[0];
  // Adopted while every tenant works.
  expect(await pulumi({}, "up", "--yes", "--skip-preview")).toMatch(/\+ 4 created/);
  await admin.addFault(revokedCertificateFault(demoTenantIds[0]));
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("a bad day: Entra ID refuses the tenant of two of the three clusters", () => {
  it("prints each failed cluster's cause once, in its own error; the stack's warning names the clusters and points at it", async () => {
    const before = await Promise.all(refused.map(document));
    const output = await failing(pulumi({ ARO_HCP_RECHECK: "all" }, "up", "--yes", "--skip-preview", "--continue-on-error"));
    const [messages, outputs = ""] = output.split("\nOutputs:\n");
    // The live lines and "Diagnostics": the cause once per failed cluster, inside its own error.
    expect(occurrences(messages, cause), messages).toBe(refused.length);
    for (const cluster of refused) {
      const name = nameOf(cluster.clusterResourceId);
      const diagnostic = diagnosticOf(messages, name);
      expect(occurrences(diagnostic, cause), messages).toBe(1);
      expect(diagnostic).toContain(`tenant ${demoTenantIds[0]}`);
      // Both halves failed: the MSI half's part says what became of it without the cause again.
      expect(diagnostic).toContain(`and: the same cause. Cluster ${name}: nothing of status.msiManagedIdentities was written`);
    }
    // The stack's warning, live and under "Diagnostics": the two clusters by resource name, pointing at the first's error.
    const warnings = messages.split("\n").filter((line) => line.includes("warning: 2 clusters failed with one cause, stated in the error of "));
    expect(warnings, messages).toHaveLength(2);
    for (const warning of warnings) {
      for (const cluster of refused) expect(warning).toContain(nameOf(cluster.clusterResourceId));
      expect(warning).not.toContain("AADSTS");
    }
    // "Outputs:" prints the `clusters` stack output, whose `failure` keeps the cause per failed cluster for `pulumi stack output`.
    expect(occurrences(outputs, cause), outputs).toBe(refused.length);
    // Without it, the whole output holds each failed cluster's cause once.
    const suppressed = await failing(pulumi({}, "up", "--yes", "--skip-preview", "--continue-on-error", "--suppress-outputs"));
    expect(suppressed).not.toContain("\nOutputs:\n");
    expect(occurrences(suppressed, cause), suppressed).toBe(refused.length);
    expect(await Promise.all(refused.map(document)), "the refused clusters' documents, etags included").toEqual(before);
  }, 300_000);

  it("lets a cluster leave the stack with up --continue-on-error, which a plain up does not reach, writing nothing", async () => {
    const healthyName = nameOf(healthy.clusterResourceId);
    declare(refused.map((cluster) => cluster.clusterResourceId));
    const before = await containerDocuments();

    // A plain up: the refused clusters (whose last update failed, so it runs again) stop the engine before any delete.
    const plain = await failing(pulumi({}, "up", "--yes", "--skip-preview"));
    expect(plain).toContain(cause);
    expect(plain).not.toMatch(/deleted/);
    expect([...(await clustersInState()).keys()]).toContain(healthyName);

    // With --continue-on-error the delete runs; the command still fails, for the refused clusters.
    const continued = await failing(pulumi({}, "up", "--yes", "--skip-preview", "--continue-on-error"));
    expect(continued).toMatch(/- 1 deleted/);
    expect(continued).toContain(`${healthyName} deleted`);
    for (const cluster of refused) expect(diagnosticOf(continued, nameOf(cluster.clusterResourceId))).toContain(cause);
    const state = await clustersInState();
    expect([...state.keys()].sort()).toEqual(refused.map((cluster) => nameOf(cluster.clusterResourceId)).sort());
    for (const cluster of refused) expect(state.get(nameOf(cluster.clusterResourceId))?.outputs?.failure?.cause).toContain(cause);
    // A delete writes nothing: every document as it was, the removed cluster's etag included.
    expect(await containerDocuments()).toEqual(before);
  }, 300_000);

  it("lets a cluster leave the stack with up --target <its URN>, which runs nothing else and succeeds", async () => {
    const healthyName = nameOf(healthy.clusterResourceId);
    // The cluster back in the list: its create adopts it again (the command fails for the refused clusters).
    declare(fleet.map((cluster) => cluster.clusterResourceId));
    await failing(pulumi({}, "up", "--yes", "--skip-preview", "--continue-on-error"));
    const urn = (await clustersInState()).get(healthyName)?.urn;
    expect(urn).toBeDefined();

    declare(refused.map((cluster) => cluster.clusterResourceId));
    const before = await containerDocuments();
    const asked = (): number[] => [sandbox.statistics.snapshot().dataPlane.requests, sandbox.statistics.snapshot().entra.requests];
    const askedBefore = asked();
    const targeted = await pulumi({}, "up", "--yes", "--skip-preview", "--target", urn ?? "");
    expect(targeted).toMatch(/- 1 deleted/);
    expect(targeted).not.toMatch(/updated|error:/);
    const state = await clustersInState();
    expect([...state.keys()].sort()).toEqual(refused.map((cluster) => nameOf(cluster.clusterResourceId)).sort());
    // The refused clusters were not run: their failure stays recorded, and neither the data plane nor Entra ID was asked.
    for (const cluster of refused) expect(state.get(nameOf(cluster.clusterResourceId))?.outputs?.failure?.cause).toContain(cause);
    expect(asked(), "data plane and Entra ID requests").toEqual(askedBefore);
    expect(await containerDocuments()).toEqual(before);
  }, 300_000);

  it("records a mistyped cluster ID as a failed create in state, which removing it from the list and up deletes, writing nothing", async () => {
    // The refusal ends and the fleet recovers, so that the typos are the runs' only failures.
    await admin.clearFaults();
    const listed = fleet.map((cluster) => cluster.clusterResourceId);
    declare(listed);
    await pulumi({}, "up", "--yes", "--skip-preview");
    // A typo in the name, and one in the subscription (no document of that subscription either).
    const nameTypo = fleet[0].clusterResourceId.replace(/demo-cluster-one$/, "demo-cluster-on3");
    const subscriptionTypo = fleet[0].clusterResourceId.replace(/^(\/subscriptions\/[0-9a-f-]+)0\//, (_, subscription: string) => `${subscription}1/`);
    expect(new Set([...listed, nameTypo, subscriptionTypo]).size).toBe(fleet.length + 2);
    const before = await containerDocuments();

    declare([...listed, nameTypo]);
    const failed = await failing(pulumi({}, "up", "--yes", "--skip-preview"));
    expect(diagnosticOf(failed, nameOf(nameTypo))).toMatch(/the HCPOpenShiftCluster document of cluster .*demo-cluster-on3 .* does not exist after 2 s/);
    // What the engine keeps: the resource, its create's error and the failure in its outputs, no status.
    const recorded = (await clustersInState()).get(nameOf(nameTypo));
    expect(recorded?.initErrors).toEqual([expect.stringContaining("does not exist after 2 s ('aro-hcp-identity-status:documentWaitSeconds')")]);
    expect(recorded?.outputs?.failure).toMatchObject({ halves: ["dataPlaneOperators", "msiIdentities"] });
    expect(recorded?.outputs?.status).toBe("{}");
    expect(await pulumi({}, "preview")).toMatch(/~ 1 to update/);

    // Every later update runs it again; the subscription's typo fails naming the settings, and is kept the same way.
    declare([...listed, nameTypo, subscriptionTypo]);
    const again = await failing(pulumi({}, "up", "--yes", "--skip-preview", "--continue-on-error"));
    expect(diagnosticOf(again, nameOf(nameTypo))).toContain("does not exist after 2 s");
    expect(diagnosticOf(again, nameOf(subscriptionTypo))).toMatch(/none of the documents of cluster .* is in container 'Resources'/);
    expect((await clustersInState()).get(nameOf(subscriptionTypo))?.initErrors).toEqual([expect.stringContaining("none of the documents of cluster")]);

    declare(listed);
    const removed = await pulumi({}, "up", "--yes", "--skip-preview");
    expect(removed).toMatch(/- 2 deleted/);
    expect([...(await clustersInState()).keys()].sort()).toEqual(listed.map(nameOf).sort());
    // No document was created for either typo, and none was written.
    expect(await containerDocuments()).toEqual(before);
  }, 300_000);
});
