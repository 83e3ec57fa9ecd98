/**
 * The reliability campaign's invariant "a non-definitive answer changes no stored ID"
 * (bench/reliability/nonDefinitiveAnswers.ts): which fired rules answered without a definitive
 * answer, and the check on the documents before and after a pass, also through checkPass.
 */
import { describe, expect, it } from "vitest";
import type { FaultRule, FaultRuleInput } from "../../../sandbox/faultInjector";
import { IdentityStore } from "../../../sandbox/identityStore";
import { checkPass, invariantCatalogue, invariantOf } from "../../../bench/reliability/invariants";
import type { NonDefinitiveAnswers } from "../../../bench/reliability/nonDefinitiveAnswers";
import { nonDefinitiveAnswersOf, nonDefinitiveViolations } from "../../../bench/reliability/nonDefinitiveAnswers";

const identityA = "/subscriptions/s/resourceGroups/rg-one/providers/Microsoft.ManagedIdentity/userAssignedIdentities/a";
const identityB = "/subscriptions/s/resourceGroups/rg-one/providers/Microsoft.ManagedIdentity/userAssignedIdentities/b";
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();
const smi = "/subscriptions/s/resourceGroups/rg-one/providers/Microsoft.ManagedIdentity/userAssignedIdentities/smi";
const desired = new Map([
  [keyA, identityA],
  [keyB, identityB],
]);

const rule = (input: Partial<FaultRuleInput>, triggered = 1): FaultRule => ({ target: "arm", kind: "status", id: "r", triggered, remaining: 0, ...input });

describe("nonDefinitiveAnswersOf", () => {
  it("takes a malformed 200 for an identity absent from ARM for what ARM answered instead: ResourceNotFound, definitive", () => {
    const rules = [
      rule({ kind: "malformedAnswer", match: { pathContains: "/resourcegroups/rg-one/" } }),
      rule({ kind: "bareStatus", statusCode: 404, match: { resourceId: identityB } }),
    ];
    const answers = nonDefinitiveAnswersOf(rules, desired, (resourceId) => resourceId !== identityB);
    expect([...answers.identityKeys].sort()).toEqual([keyA, keyB]);
    expect([...nonDefinitiveAnswersOf(rules.slice(0, 1), desired, (resourceId) => resourceId !== identityB).identityKeys]).toEqual([keyA]);
  });

  it.each([
    [
      "a 404 SubscriptionNotFound for one identity",
      [rule({ statusCode: 404, errorCode: "SubscriptionNotFound", match: { resourceId: identityA } })],
      [keyA],
      false,
    ],
    ["a bare 404 for the whole lane", [rule({ kind: "bareStatus", statusCode: 404, match: { pathContains: "/resourcegroups/rg-one/" } })], [keyA, keyB], false],
    ["a malformed ARM answer", [rule({ kind: "malformedAnswer", match: { resourceId: identityB } })], [keyB], false],
    ["ResourceNotFound (definitive)", [rule({ statusCode: 404, errorCode: "ResourceNotFound", match: { resourceId: identityA } })], [], false],
    ["a 403 (judged by its own invariant)", [rule({ statusCode: 403, errorCode: "AuthorizationFailed", match: { resourceId: identityA } })], [], false],
    ["a rule that did not fire", [rule({ kind: "bareStatus", statusCode: 404, match: { resourceId: identityA } }, 0)], [], false],
    ["a lane rule of another resource group", [rule({ kind: "bareStatus", statusCode: 404, match: { pathContains: "/resourcegroups/rg-two/" } })], [], false],
    ["a malformed data plane answer", [rule({ target: "dataPlane", kind: "malformedAnswer" })], [], true],
    ["a data plane 503", [rule({ target: "dataPlane", kind: "unavailable" })], [], false],
  ])("%s", (_title, rules, keys, msi) => {
    const answers = nonDefinitiveAnswersOf(rules, desired);
    expect([...answers.identityKeys].sort()).toEqual(keys);
    expect(answers.msiHalf).toBe(msi);
  });
});

type Entry = Record<string, unknown>;
function document(identities: Record<string, Entry>, msi: { smiClientId?: string } = {}): Record<string, unknown> {
  return {
    id: "doc",
    properties: {
      status: {
        dataPlaneOperatorsManagedIdentities: { identities },
        msiManagedIdentities: {
          serviceManagedIdentity: { resourceId: smi, ...(msi.smiClientId === undefined ? {} : { clientId: msi.smiClientId, principalId: "smi-p" }) },
        },
      },
    },
  };
}
const resolved = (resourceID: string, clientId: string): Entry => ({ resourceID, clientId, principalId: `${clientId}-p` });
const armAnswers = (...keys: string[]): NonDefinitiveAnswers => ({ identityKeys: new Set(keys), msiHalf: false });

describe("nonDefinitiveViolations", () => {
  const before = document({ [keyA]: resolved(identityA, "a1"), [keyB]: resolved(identityB, "b1") }, { smiClientId: "s1" });

  it("accepts stored IDs kept beside the error, and a change of an identity the answer was not about", () => {
    const after = document({
      [keyA]: { ...resolved(identityA, "a1"), retrievalError: "SubscriptionNotFound (HTTP 404): no" },
      [keyB]: resolved(identityB, "b2"),
    });
    expect(nonDefinitiveViolations(armAnswers(keyA), before, after)).toEqual([]);
  });

  it("flags stored IDs cleared or replaced on a non-definitive answer", () => {
    const after = document({ [keyA]: { resourceID: identityA, retrievalError: "HTTP404 (HTTP 404): 404 page not found" }, [keyB]: resolved(identityB, "b2") });
    const violations = nonDefinitiveViolations(armAnswers(keyA, keyB), before, after);
    expect(violations).toEqual([
      `${keyA}: a non-definitive answer from ARM changed its stored IDs (clientId a1 became undefined)`,
      `${keyB}: a non-definitive answer from ARM changed its stored IDs (clientId b1 became b2)`,
    ]);
  });

  it("flags a non-definitive answer recorded as ResourceNotFound, even without IDs before", () => {
    const empty = document({ [keyA]: { resourceID: identityA } });
    const after = document({ [keyA]: { resourceID: identityA, retrievalError: "ResourceNotFound (HTTP 404): gone" } });
    expect(nonDefinitiveViolations(armAnswers(keyA), empty, after)).toEqual([
      `${keyA}: a non-definitive answer from ARM was taken for ResourceNotFound (ResourceNotFound (HTTP 404): gone)`,
    ]);
    // Unchanged by the pass (a failure before any write): not this pass's record.
    expect(nonDefinitiveViolations(armAnswers(keyA), after, after)).toEqual([]);
  });

  it("leaves entries another writer changed to them", () => {
    const after = document({ [keyA]: resolved(identityA, "theirs"), [keyB]: resolved(identityB, "b1") });
    expect(nonDefinitiveViolations(armAnswers(keyA), before, after, { entries: new Set([keyA]), wholeSubtree: false })).toEqual([]);
    expect(nonDefinitiveViolations(armAnswers(keyA), before, after, { entries: new Set(), wholeSubtree: true })).toEqual([]);
  });

  it("flags the MSI half's stored IDs changed on a malformed or partial data plane answer, and accepts them kept", () => {
    const answers: NonDefinitiveAnswers = { identityKeys: new Set(), msiHalf: true };
    const cleared = document({ [keyA]: resolved(identityA, "a1"), [keyB]: resolved(identityB, "b1") });
    expect(nonDefinitiveViolations(answers, before, cleared)).toEqual([
      `${smi.toLowerCase()}: a non-definitive answer from the data plane (malformed or partial) changed its stored IDs in the MSI half (clientId s1 became undefined)`,
    ]);
    expect(nonDefinitiveViolations(answers, before, structuredClone(before))).toEqual([]);
    expect(nonDefinitiveViolations({ identityKeys: new Set(), msiHalf: false }, before, cleared)).toEqual([]);
  });
});

describe("checkPass with non-definitive answers", () => {
  it("counts a stored ID cleared by another 404 against the invariant 'a non-definitive answer changes no stored ID'", () => {
    const identities = new IdentityStore();
    identities.create(identityA, { clientId: "a1", principalId: "a1-p" });
    const before = document({ [keyA]: resolved(identityA, "a1") });
    const after = document({ [keyA]: { resourceID: identityA, retrievalError: "SubscriptionNotFound (HTTP 404): no" } });
    const record = {
      outcome: "lookupFailed" as const,
      before,
      after,
      expectedForeign: { id: "doc", properties: { status: {} } },
      desired: new Map([[keyA, identityA]]),
      reportedStatus: undefined,
      deletedDuringPass: false,
      errorMessage: "doc",
      documentId: "doc",
      nonDefinitiveAnswers: armAnswers(keyA),
    };
    const violations = checkPass(record, identities, []);
    const index = invariantCatalogue.findIndex((invariant) => invariant.key === "nonDefinitiveAnswers");
    const attributed = violations.filter((violation) => invariantOf(violation) === index);
    expect(attributed).toEqual([`${keyA}: a non-definitive answer from ARM changed its stored IDs (clientId a1 became undefined)`]);
    // The same pass with the IDs kept breaks no invariant.
    const kept = document({ [keyA]: { ...resolved(identityA, "a1"), retrievalError: "SubscriptionNotFound (HTTP 404): no" } });
    expect(checkPass({ ...record, after: kept }, identities, [])).toEqual([]);
  });
});
