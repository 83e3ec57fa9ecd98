/** ARO_HCP_RECHECK's value (resources/provider/recheckRequest.ts) and the program's check of it (program/recheck.ts). */
import { describe, expect, it } from "vitest";
import { parseRecheck, rechecksNow } from "../../../resources/provider/recheckRequest";
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
