/**
 * A guest in upstream's documents, through the literal `pulumi` CLI over the project's Pulumi.yaml
 * in production's credential mode (each cluster read as its own SMI): a forced pass whose answers
 * equal what is stored writes nothing (ARO_HCP_RECHECK=all, and the pass after a failed pass), and a
 * cluster's SMI credential is used only in the tenant its identity URL names, at the configured
 * Entra ID authority, whatever the data plane's answer says. Cosmos, the sandbox's counters and
 * recording, the run report and the stack's outputs are read back.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { demoTenantIds } from "../../sandbox/seed";
import type { LiteralDemoFleet } from "./engineHelpers";
import { removeLiteralStack, revokedCertificateFault, startLiteralDemoFleet } from "./engineHelpers";

const stackName = `guest-${process.pid}`;

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let pulumi: LiteralDemoFleet["pulumi"];

async function documents(): Promise<unknown[]> {
  return Promise.all(
    fleet.map(
      async (cluster) => (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read()).resource as unknown,
    ),
  );
}

function cosmosWrites(): number {
  return Object.values(sandbox.statistics.snapshot().cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0);
}

function nameOf(cluster: FleetClusterDescription): string {
  const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
  return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
}

async function report(records: string) {
  const { reportRun } = await import("../../resources/report/runReport");
  return reportRun(records);
}

async function outputs(): Promise<unknown> {
  return JSON.parse(await pulumi({}, "stack", "output", "--json", "--show-secrets")) as unknown;
}

/** `pulumi up` expected to fail: its output. */
async function failingUp(extra: NodeJS.ProcessEnv): Promise<string> {
  return pulumi(extra, "up", "--yes", "--skip-preview", "--continue-on-error").then(
    (output) => {
      throw new Error(`the update was expected to fail:\n${output}`);
    },
    (error: unknown) => String(error),
  );
}

beforeAll(async () => {
  ({ scratchDirectory, sandbox, fleet, pulumi } = await startLiteralDemoFleet("aro-hcp-guest-", stackName));
  // Adoption writes the fleet's status once; from here on it is current.
  await pulumi({}, "up", "--yes", "--skip-preview");
}, 600_000);

afterAll(async () => {
  await removeLiteralStack(sandbox, scratchDirectory, stackName);
});

describe("a forced pass that finds nothing new", () => {
  it("ARO_HCP_RECHECK=all over a current fleet asks Azure for every cluster and writes nothing: every _etag unchanged, the report says current", async () => {
    const before = await documents();
    const outputsBefore = await outputs();
    const writesBefore = cosmosWrites();
    const { arm, dataPlane } = sandbox.statistics.snapshot();
    const records = join(scratchDirectory, "recheck-all.jsonl");

    await pulumi({ ARO_HCP_RECHECK: "all", ARO_HCP_RUN_RECORDS: records }, "up", "--yes", "--skip-preview");

    const after = sandbox.statistics.snapshot();
    expect(after.arm.getRequests, "each cluster's data plane operators were read from ARM").toBeGreaterThan(arm.getRequests);
    for (const cluster of fleet) {
      const key = cluster.clusterResourceId.toLowerCase();
      expect(after.dataPlane.requestsByCluster[key] ?? 0, `${key} was asked at its identity URL`).toBeGreaterThan(dataPlane.requestsByCluster[key] ?? 0);
    }
    expect(cosmosWrites() - writesBefore, "Cosmos document writes").toBe(0);
    expect(await documents(), "every document, _etag included").toEqual(before);
    expect(await outputs(), "the stack's outputs").toEqual(outputsBefore);
    const rechecked = await report(records);
    expect(rechecked.verdict).toBe("ok");
    for (const cluster of fleet) expect(rechecked.clusters[nameOf(cluster)]).toMatchObject({ outcome: "current" });
  }, 300_000);

  it("the pass after a failed pass, with the fault cleared, asks Azure again and writes nothing", async () => {
    const refusedTenant = demoTenantIds[1];
    const refused = fleet.filter((cluster) => cluster.tenantId === refusedTenant);
    expect(refused.length).toBeGreaterThan(0);
    const before = await documents();
    sandbox.faults.add(revokedCertificateFault(refusedTenant));
    try {
      expect(await failingUp({ ARO_HCP_RECHECK: "all" })).toContain(`tenant ${refusedTenant}`);
    } finally {
      sandbox.faults.clear();
    }
    expect(await documents(), "the failed pass wrote nothing").toEqual(before);

    // No recheck is due: only the stored failure makes this pass ask Azure again.
    const writesBefore = cosmosWrites();
    const { dataPlane } = sandbox.statistics.snapshot();
    const records = join(scratchDirectory, "after-failure.jsonl");
    await pulumi({ ARO_HCP_RUN_RECORDS: records }, "up", "--yes", "--skip-preview");
    for (const cluster of refused) {
      const key = cluster.clusterResourceId.toLowerCase();
      expect(sandbox.statistics.snapshot().dataPlane.requestsByCluster[key] ?? 0, `${key} was asked again`).toBeGreaterThan(
        dataPlane.requestsByCluster[key] ?? 0,
      );
    }
    expect(cosmosWrites() - writesBefore, "Cosmos document writes").toBe(0);
    expect(await documents(), "every document, _etag included").toEqual(before);
    const recovered = await report(records);
    expect(recovered.verdict).toBe("ok");
    for (const cluster of fleet) expect(recovered.clusters[nameOf(cluster)]).toMatchObject({ outcome: "current" });
  }, 300_000);
});

describe("a cluster's SMI credential goes only to its own tenant, at the configured authority", () => {
  const smiClientOf = (cluster: FleetClusterDescription): string => {
    const clientId = cluster.serviceManagedIdentityClientId ?? sandbox.identities.get(cluster.serviceManagedIdentity)?.clientId;
    if (clientId === undefined) throw new Error(`no client ID for ${cluster.serviceManagedIdentity}`);
    return clientId.toLowerCase();
  };

  it.each([
    [
      "another tenant",
      (): unknown => demoTenantIds[1],
      "/tenant_id",
      (cluster: FleetClusterDescription) => `names tenant_id "${demoTenantIds[1]}", but the cluster's identity URL names tenant ${cluster.tenantId ?? ""}`,
    ],
    [
      "an authority on another host of the sandbox",
      (): unknown => `${sandbox.connection().endpoints.arm}/`,
      "/authentication_endpoint",
      () => `names authentication_endpoint "${sandbox.connection().endpoints.arm}/", but the configured Entra ID authority is`,
    ],
  ])(
    "an answer naming %s: no request goes there, that cluster alone fails, nothing is written",
    async (_name, value, pointer, message) => {
      const target = fleet.find((cluster) => cluster.tenantId === demoTenantIds[0]);
      if (target === undefined) throw new Error("the demo fleet has a cluster in its first tenant");
      const before = await documents();
      const writesBefore = cosmosWrites();
      const records = join(scratchDirectory, `pin-${pointer.slice(1)}.jsonl`);
      sandbox.faults.add({
        target: "dataPlane",
        kind: "malformedAnswer",
        match: { clusterResourceId: target.clusterResourceId },
        answerEdits: [{ op: "set", pointer, value: value(), identityId: target.serviceManagedIdentity }],
        count: 1000,
      });
      sandbox.recorder.start();
      let output: string;
      try {
        output = await failingUp({ ARO_HCP_RECHECK: "all", ARO_HCP_RUN_RECORDS: records });
      } finally {
        sandbox.recorder.stop();
        sandbox.faults.clear();
      }
      expect(output).toContain(message(target));

      const { requests } = sandbox.recorder.snapshot();
      const smiClient = smiClientOf(target);
      const smiTokenRequests = requests.filter((request) => request.target === "entra" && request.form?.client_id?.toLowerCase() === smiClient);
      expect(smiTokenRequests, "token requests of the cluster's SMI").toEqual([]);
      expect(
        requests.filter((request) => request.target === "arm" && request.path.includes("oauth2")),
        "token requests at the ARM host",
      ).toEqual([]);
      // The other clusters were asked, with their own SMIs' credentials, and are current.
      const others = fleet.filter((cluster) => cluster !== target);
      for (const cluster of others) {
        expect(
          requests.some((request) => request.target === "entra" && request.form?.client_id?.toLowerCase() === smiClientOf(cluster)),
          `${cluster.clusterResourceId} got its SMI's token`,
        ).toBe(true);
      }
      expect(cosmosWrites() - writesBefore, "Cosmos document writes").toBe(0);
      expect(await documents(), "every document, _etag included").toEqual(before);
      const pinned = await report(records);
      expect(pinned.verdict).toBe("failed");
      expect(pinned.causes.map((group) => group.resources)).toEqual([[nameOf(target)]]);
      for (const cluster of others) expect(pinned.clusters[nameOf(cluster)]).toMatchObject({ outcome: "current" });

      // The fault gone, the next pass asks again and writes nothing: the stored IDs were never in doubt.
      await pulumi({}, "up", "--yes", "--skip-preview");
      expect(await documents()).toEqual(before);
    },
    300_000,
  );
});
