/**
 * The MSI half of the status (resources/core/msiManagedIdentities.ts): the subtree
 * as upstream's types encode it, checked against what Go itself wrote for the same declarations,
 * answers and clock (test/fixtures/goVectors.json, printed by tools/go-vectors with upstream's Go
 * types and encoding/json); upstream's gate; and answers that decide nothing.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { MsiAnswerEntry } from "../../../resources/core/msiManagedIdentities";
import { decideMsiStatus, msiHalf, msiRequestedIdentities, standInAnswer } from "../../../resources/core/msiManagedIdentities";
import { msiDesiredSet } from "../../../resources/core/clusterDocument";
import type { JsonObject } from "../../../resources/core/json";

interface MsiVector {
  readonly name: string;
  readonly controlPlaneOperators: Readonly<Record<string, string>>;
  readonly serviceManagedIdentity: string;
  readonly answer: readonly MsiAnswerEntry[];
  readonly now: string;
  readonly random: number;
  readonly subtree: string;
}

const vectors = (
  JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../fixtures/goVectors.json"), "utf8")) as { readonly msiSubtrees: readonly MsiVector[] }
).msiSubtrees;

function desiredOf(vector: Pick<MsiVector, "controlPlaneOperators" | "serviceManagedIdentity">) {
  const result = msiDesiredSet(vector.controlPlaneOperators, vector.serviceManagedIdentity);
  if (!result.ok) throw new Error(result.problems.join("; "));
  return result.desired;
}

const smi = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/smi";
const cp = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/control-plane";
const now = new Date("2026-08-14T12:00:00Z");

describe("the msiManagedIdentities subtree", () => {
  it("has Go's vectors to check against", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(3);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))("is written as Go writes it: %s", (_name, vector) => {
    const decided = decideMsiStatus(desiredOf(vector), vector.answer, new Date(vector.now), () => vector.random);
    expect(decided.ok).toBe(true);
    if (!decided.ok) return;
    expect(JSON.stringify(msiHalf.toJson(decided.status))).toBe(JSON.stringify(JSON.parse(vector.subtree)));
    // And Go's subtree reads back without a problem, equal to ours.
    const read = msiHalf.readSubtree(JSON.parse(vector.subtree));
    expect(read.problems).toEqual([]);
    expect(msiHalf.equals(read.status, decided.status)).toBe(true);
  });

  it("keeps fields it does not know, of the subtree and of its entries, after the known ones", () => {
    const decided = decideMsiStatus(
      desiredOf({ controlPlaneOperators: { cp }, serviceManagedIdentity: smi }),
      standInAnswer([cp, smi], { clientId: "c", principalId: "p" }),
      now,
      () => 0,
    );
    if (!decided.ok) throw new Error(decided.problem);
    const stored: JsonObject = {
      futureField: 1,
      controlPlaneOperatorsIdentities: { [cp.toLowerCase()]: { resourceId: cp, tenantId: "t" } },
      serviceManagedIdentity: { resourceId: smi, tenantId: "t" },
    };
    expect(msiHalf.toJson(decided.status, stored)).toEqual({
      earliestRecheckTime: "2026-08-15T00:00:00Z",
      controlPlaneOperatorsIdentities: { [cp.toLowerCase()]: { resourceId: cp, clientId: "c", principalId: "p", tenantId: "t" } },
      serviceManagedIdentity: { resourceId: smi, clientId: "c", principalId: "p", tenantId: "t" },
      futureField: 1,
    });
  });
});

describe("the MSI half's decisions", () => {
  const desired = desiredOf({ controlPlaneOperators: { "control-plane": cp }, serviceManagedIdentity: smi });

  it("asks for every control plane operator identity, then the service managed identity", () => {
    expect(msiRequestedIdentities(desired)).toEqual([cp, smi]);
  });

  const entry = (resourceId: string, clientId: string | null = "c", objectId: string | null = "p") => ({ resourceId, clientId, objectId });
  it.each([
    ["one entry too few", [entry(smi)], /^the answer holds nothing for .*control-plane$/],
    [
      "an identity it was not asked for in place of one",
      [entry(smi), entry(`${cp}-other`)],
      /^the answer names .*control-plane-other, which was not asked for$/,
    ],
    [
      "an identity it was not asked for besides",
      [entry(smi), entry(cp), entry(`${cp}-other`)],
      /^the answer names .*control-plane-other, which was not asked for$/,
    ],
    ["one identity twice", [entry(smi), entry(cp), entry(cp.toUpperCase())], /^the answer holds 3 identities where 2 were asked for$/],
    [
      "a null client_id beside an object_id",
      [entry(smi), entry(cp, null, "p")],
      /^the answer's client_id for .*control-plane is null but its object_id is not/,
    ],
    ["a null object_id beside a client_id", [entry(smi, "c", null), entry(cp)], /^the answer's object_id for .*\/smi is null but its client_id is not/],
  ])("decides nothing on an answer with %s", (_title, answer, problem) => {
    const decided = decideMsiStatus(desired, answer, now, () => 0);
    expect(decided.ok).toBe(false);
    if (!decided.ok) expect(decided.problem).toMatch(problem);
  });

  it("takes the data plane's null for both IDs as the identity being gone, and an empty string as a value", () => {
    const decided = decideMsiStatus(desired, [entry(cp.toUpperCase(), null, null), entry(smi, "", "")], now, () => 0);
    expect(decided).toMatchObject({
      ok: true,
      status: {
        controlPlaneOperatorsIdentities: { [cp.toLowerCase()]: { resourceId: cp } },
        serviceManagedIdentity: { resourceId: smi, clientId: "", principalId: "" },
      },
    });
  });

  it("refuses a cluster document without a service managed identity, or with a null or malformed operator ID, naming the field", () => {
    const result = msiDesiredSet({ a: null, b: "nope", "": cp }, undefined);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.stringMatching(/controlPlaneOperators\.: operator name must not be empty/),
      expect.stringMatching(/controlPlaneOperators\.a: identity resource ID is missing \(null\)/),
      expect.stringMatching(/controlPlaneOperators\.b: identity resource ID/),
      expect.stringMatching(/userAssignedIdentities\.serviceManagedIdentity is not set/),
    ]);
  });

  it("honours the recheck time only while the stored identities are the desired ones", () => {
    const decided = decideMsiStatus(desired, standInAnswer(msiRequestedIdentities(desired), { clientId: "c", principalId: "p" }), now, () => 0);
    if (!decided.ok) throw new Error(decided.problem);
    const stored = decided.status;
    expect(msiHalf.workReason(desired, stored, now)).toBeUndefined();
    expect(msiHalf.workReason(desired, stored, new Date("2026-08-15T00:00:00Z"))).toBe("recheckDue");
    expect(msiHalf.workReason(desired, { ...stored, earliestRecheckTime: undefined }, now)).toBe("neverChecked");
    const otherSmi = desiredOf({ controlPlaneOperators: { "control-plane": cp }, serviceManagedIdentity: `${smi}-2` });
    expect(msiHalf.workReason(otherSmi, stored, now)).toBe("desiredSetChanged");
    const fewer = desiredOf({ controlPlaneOperators: {}, serviceManagedIdentity: smi.toUpperCase() });
    expect(msiHalf.workReason(fewer, stored, now)).toBe("desiredSetChanged");
    expect(msiHalf.workReason(desired, {}, now)).toBe("desiredSetChanged");
  });
});
