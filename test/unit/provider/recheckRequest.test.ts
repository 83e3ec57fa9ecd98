/** ARO_HCP_RECHECK's value (resources/core/recheckValue.ts), what the provider makes of it (resources/provider/recheckRequest.ts) and the program's check of it (program/recheck.ts). */
import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimTenantProbe, forcedHalves, rechecksNow, refreshFailedThisRun, tenantOfIdentityUrl } from "../../../resources/provider/recheckRequest";
import { parseRecheck } from "../../../resources/core/recheckValue";
import { checkRecheck } from "../../../program/recheck";

const cluster = (name: string): string =>
  `/subscriptions/1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/${name}`;

describe("ARO_HCP_RECHECK", () => {
  it("names no cluster when unset or blank, every cluster with all, else the clusters listed in any casing", () => {
    expect(rechecksNow(cluster("one"), {})).toBe(false);
    expect(rechecksNow(cluster("one"), { ARO_HCP_RECHECK: "  " })).toBe(false);
    expect(rechecksNow(cluster("one"), { ARO_HCP_RECHECK: "ALL" })).toBe(true);
    const listed = { ARO_HCP_RECHECK: `${cluster("one").toUpperCase()}, ${cluster("two")}` };
    expect(rechecksNow(cluster("one"), listed)).toBe(true);
    expect(rechecksNow(cluster("two"), listed)).toBe(true);
    expect(rechecksNow(cluster("three"), listed)).toBe(false);
  });

  it("refuses a value that is not a cluster resource ID, naming it; such a value rechecks nothing", () => {
    const parsed = parseRecheck(`${cluster("one")},one`);
    expect(parsed).toMatchObject({ ok: false });
    expect(parsed.ok ? "" : parsed.reason).toContain("ARO_HCP_RECHECK names 'one', which is not a cluster resource ID");
    expect(rechecksNow(cluster("one"), { ARO_HCP_RECHECK: `${cluster("one")},one` })).toBe(false);
  });

  it("is refused by the program when it names a cluster the update does not declare", () => {
    expect(() => checkRecheck(cluster("one"), [cluster("one"), cluster("two")])).not.toThrow();
    expect(() => checkRecheck("all", [])).not.toThrow();
    expect(() => checkRecheck(cluster("three"), [cluster("one")])).toThrow(
      `ARO_HCP_RECHECK names a cluster this update does not declare (${cluster("three").toLowerCase()})`,
    );
  });
});

describe("ARO_HCP_RECHECK=tenants", () => {
  it("reads a cluster's tenant from its identity URL and makes the first cluster of each tenant its probe", () => {
    expect(
      tenantOfIdentityUrl("https://eastus.identity.azure.net/subscriptions/s/credentials/v2/identities?arpid=a&tid=4B6D8F0A-2C4E-4A6B-8D0F-1A3C5E7A9B11&oid=o"),
    ).toBe("4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7a9b11");
    expect(tenantOfIdentityUrl("https://eastus.identity.azure.net/no-tenant")).toBeUndefined();
    expect(tenantOfIdentityUrl("not a URL")).toBeUndefined();
    const tenants = { ARO_HCP_RECHECK: "tenants" };
    expect(parseRecheck("tenants")).toEqual({ ok: true, value: { kind: "tenants" } });
    expect(claimTenantProbe("tenant-probe-a", cluster("probe-one"))).toBe(true);
    expect(claimTenantProbe("tenant-probe-a", cluster("probe-two"))).toBe(false);
    expect(claimTenantProbe("tenant-probe-a", cluster("PROBE-ONE"))).toBe(true);
    expect(claimTenantProbe("tenant-probe-b", cluster("probe-three"))).toBe(true);
    expect([cluster("probe-one"), cluster("probe-two"), cluster("probe-three")].map((id) => rechecksNow(id, tenants))).toEqual([true, false, true]);
    expect(rechecksNow(cluster("probe-one"), {})).toBe(false);
    expect(() => checkRecheck("tenants", [cluster("one")])).not.toThrow();
  });
});

describe("a refresh that failed in this run", () => {
  it("makes the run's update recheck the cluster's both halves; a later refresh that passed, another operation or no records file do not", () => {
    const file = join(mkdtempSync(join(tmpdir(), "recheck-records-")), "run.jsonl");
    const record = (name: string, operation: string, outcome: string) =>
      JSON.stringify({ cluster: name, clusterResourceId: cluster(name), operation, at: "2026-12-05T00:00:00.000Z", dataPlane: outcome, msi: outcome });
    writeFileSync(
      file,
      [record("one", "read", "failed"), record("two", "read", "failed"), record("two", "read", "current"), record("three", "update", "failed"), ""].join("\n"),
    );
    const environment = { ARO_HCP_RUN_RECORDS: file };
    expect(refreshFailedThisRun(cluster("ONE").replace("ONE", "one").toUpperCase(), environment)).toBe(true);
    expect(refreshFailedThisRun(cluster("two"), environment)).toBe(false);
    expect(refreshFailedThisRun(cluster("three"), environment)).toBe(false);
    expect(refreshFailedThisRun(cluster("one"), {})).toBe(false);
    expect(forcedHalves([], cluster("one"), environment).force).toEqual({ dataPlane: true, msi: true });
    expect(forcedHalves([], cluster("two"), environment).force).toEqual({ dataPlane: false, msi: false });
  });
});
