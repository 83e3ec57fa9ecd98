/**
 * The sandbox's day-2 admin routes: identities in a chosen tenant (`POST /identities` with
 * `tenantId`), the demo fleet as upstream's controllers leave it (`POST /seed/upstream`,
 * sandbox/upstreamSeed.ts) and the fleet's clock (`POST /clock/advance`). Read back through the
 * admin interface and the sandbox's own document store.
 */
import { join } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import { AdminApiError, SandboxAdminClient } from "../../sandbox/adminClient";
import { identityResourceId } from "../../sandbox/identityStore";

let sandbox: Sandbox;
let admin: SandboxAdminClient;
let directory: string;

interface Half {
  readonly earliestRecheckTime?: string;
  readonly identities?: Record<string, { resourceID?: string; clientId?: string; principalId?: string; retrievalError?: string }>;
  readonly controlPlaneOperatorsIdentities?: Record<string, { clientId?: string }>;
  readonly serviceManagedIdentity?: { clientId?: string; principalId?: string };
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "sandbox-day-two-"));
  sandbox = await startSandbox({ certificateDirectory: directory, perClusterCredentials: true });
  admin = new SandboxAdminClient(sandbox.endpoints.admin, sandbox.adminToken);
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe("the sandbox's day-2 admin routes", () => {
  it("creates an identity in the tenant asked for", async () => {
    const tenantId = "9e1c3a5b-7d9f-4b1d-a3c5-e7f9a1b3c522";
    const id = identityResourceId("8c2e4f6a-1b3d-4c5e-8f7a-9b0c1d2e3f40", "day-two-rg", "in-a-tenant");
    expect(await admin.createIdentity(id, { tenantId })).toMatchObject({ id, tenantId });
    expect(await admin.getIdentity(id)).toMatchObject({ tenantId });
  });

  it("seeds the demo fleet with its status as upstream leaves it, and moves the fleet's clock", async () => {
    const before = Date.now();
    const fleet = await admin.seedUpstreamFleet();
    expect(fleet).toHaveLength(3);
    const halves = (): Array<{ dataPlane: Half; msi: Half }> =>
      fleet.map((cluster) => {
        const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as unknown as {
          properties: { status: { dataPlaneOperatorsManagedIdentities: Half; msiManagedIdentities: Half } };
        };
        return { dataPlane: document.properties.status.dataPlaneOperatorsManagedIdentities, msi: document.properties.status.msiManagedIdentities };
      });
    for (const [index, { dataPlane, msi }] of halves().entries()) {
      const cluster = fleet[index];
      for (const id of Object.values(cluster.dataPlaneOperators)) {
        const entry = dataPlane.identities?.[id.toLowerCase()];
        const identity = sandbox.identities.get(id);
        if (identity === undefined) expect(entry?.retrievalError).toContain("ERROR CODE: ResourceNotFound");
        else
          expect(entry).toEqual({
            resourceID: expect.stringMatching(/\/resourceGroups\//) as unknown,
            clientId: identity.clientId,
            principalId: identity.principalId,
          });
      }
      expect(msi.serviceManagedIdentity).toMatchObject({ clientId: sandbox.identities.get(cluster.serviceManagedIdentity)?.clientId });
      for (const half of [dataPlane, msi]) {
        const hours = (Date.parse(half.earliestRecheckTime ?? "") - before) / 3_600_000;
        expect(hours).toBeGreaterThanOrEqual(11.99);
        expect(hours).toBeLessThanOrEqual(18.01);
        expect(half.earliestRecheckTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      }
    }
    const recorded = halves();
    expect(await admin.advanceClock({ hours: 19 })).toBe(6);
    for (const [index, { dataPlane, msi }] of halves().entries()) {
      expect(Date.parse(recorded[index].dataPlane.earliestRecheckTime ?? "") - Date.parse(dataPlane.earliestRecheckTime ?? "")).toBe(19 * 3_600_000);
      expect(Date.parse(recorded[index].msi.earliestRecheckTime ?? "") - Date.parse(msi.earliestRecheckTime ?? "")).toBe(19 * 3_600_000);
    }
    const refused = await admin.advanceClock({ hours: -1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AdminApiError);
    expect((refused as AdminApiError).statusCode).toBe(400);
  });
});
