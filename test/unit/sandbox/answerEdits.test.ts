/**
 * The sandbox's `malformedAnswer` and `bareStatus` faults (sandbox/answerEdits.ts,
 * sandbox/faultInjector.ts): which edits a rule may carry, and what each does to an answer.
 */
import { describe, expect, it } from "vitest";
import { editArmAnswer, editDataPlaneAnswer } from "../../../sandbox/answerEdits";
import { FaultInjector } from "../../../sandbox/faultInjector";

const first = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/first";
const second = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/second";
const answer = () => ({
  explicit_identities: [
    { resource_id: first, client_id: "c1", object_id: "o1" },
    { resource_id: second, client_id: "c2", object_id: "o2" },
  ],
});

describe("editDataPlaneAnswer", () => {
  it("sets or removes a field of the first entry, or of the entry answering for identityId (any casing)", () => {
    expect(editDataPlaneAnswer(answer(), [{ op: "set", pointer: "/client_id", value: 7 }]).explicit_identities).toEqual([
      { resource_id: first, client_id: 7, object_id: "o1" },
      { resource_id: second, client_id: "c2", object_id: "o2" },
    ]);
    expect(editDataPlaneAnswer(answer(), [{ op: "remove", identityId: second.toUpperCase(), pointer: "/object_id" }]).explicit_identities).toEqual([
      { resource_id: first, client_id: "c1", object_id: "o1" },
      { resource_id: second, client_id: "c2" },
    ]);
  });

  it("drops an entry, adds one for another identity, or edits the whole answer; the original is untouched", () => {
    const original = answer();
    expect(editDataPlaneAnswer(original, [{ op: "dropEntry", identityId: first }]).explicit_identities).toEqual([original.explicit_identities[1]]);
    expect(editDataPlaneAnswer(original, [{ op: "addEntry", identityId: second, resourceId: "/other" }]).explicit_identities).toEqual([
      ...original.explicit_identities,
      { resource_id: "/other", client_id: "c2", object_id: "o2" },
    ]);
    expect(editDataPlaneAnswer(original, [{ op: "set", within: "answer", pointer: "/explicit_identities", value: {} }])).toEqual({ explicit_identities: {} });
    expect(original).toEqual(answer());
  });
});

describe("editArmAnswer", () => {
  it("sets and removes fields of the identity body", () => {
    const body = { id: first, properties: { clientId: "c", principalId: "p" } };
    expect(
      editArmAnswer(body, [
        { op: "set", pointer: "/properties/clientId", value: 1 },
        { op: "remove", pointer: "/properties/principalId" },
      ]),
    ).toEqual({ id: first, properties: { clientId: 1 } });
    expect(body.properties).toEqual({ clientId: "c", principalId: "p" });
  });
});

describe("FaultInjector rules of the new kinds", () => {
  it.each([
    [{ target: "cosmos", kind: "bareStatus", statusCode: 404 }, /arm and dataPlane targets only/],
    [{ target: "arm", kind: "bareStatus" }, /statusCode of 400 or more/],
    [{ target: "arm", kind: "malformedAnswer" }, /answerEdits, a non-empty array/],
    [{ target: "arm", kind: "malformedAnswer", answerEdits: [{ op: "dropEntry" }] }, /dataPlane target only/],
    [{ target: "dataPlane", kind: "malformedAnswer", answerEdits: [{ op: "set", pointer: "client_id", value: 1 }] }, /JSON pointer starting with '\/'/],
    [{ target: "dataPlane", kind: "malformedAnswer", answerEdits: [{ op: "set", pointer: "/client_id" }] }, /needs value/],
    [{ target: "dataPlane", kind: "malformedAnswer", answerEdits: [{ op: "addEntry" }] }, /needs resourceId/],
    [{ target: "dataPlane", kind: "malformedAnswer", answerEdits: [{ op: "swap" }] }, /needs op/],
  ])("refuses %j", (input, message) => {
    expect(() => new FaultInjector().add(input as never)).toThrow(message);
  });

  it("accepts a bare 404 for ARM and a malformed data plane answer", () => {
    const faults = new FaultInjector();
    faults.add({ target: "arm", kind: "bareStatus", statusCode: 404, body: "404 page not found" });
    faults.add({ target: "dataPlane", kind: "malformedAnswer", answerEdits: [{ op: "set", pointer: "/client_id", value: null }] });
    expect(faults.take({ target: "arm", method: "GET", path: "/x" }).rule?.kind).toBe("bareStatus");
    expect(faults.take({ target: "dataPlane", method: "POST", path: "/x" }).rule?.kind).toBe("malformedAnswer");
  });
});
