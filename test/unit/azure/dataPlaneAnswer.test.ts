/**
 * The data plane's answer as the hook reads it (resources/azure/dataPlaneAnswer.ts): as strict on
 * types as upstream's client (Go's encoding/json into msi-dataplane's structs refuses the whole
 * answer for one field of another type), and stricter where "the identity is gone" is at stake.
 */
import { describe, expect, it } from "vitest";
import { readDataPlaneAnswer } from "../../../resources/azure/dataPlaneAnswer";

const first = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/first";
const entry = (fields: Record<string, unknown> = {}) => ({
  resource_id: first,
  client_id: "c",
  object_id: "o",
  tenant_id: "t",
  client_secret: "secret",
  not_after: "2030-01-01T00:00:00Z",
  custom_claims: { xms_az_nwperimid: [], xms_az_rid: "not a field of upstream's type" },
  ...fields,
});
const read = (body: unknown) => readDataPlaneAnswer(200, typeof body === "string" ? body : JSON.stringify(body), "dp.example");

describe("readDataPlaneAnswer", () => {
  it("reads each entry's resource_id, client_id and object_id; null stays null, fields Go ignores are ignored", () => {
    const answer = read({ explicit_identities: [entry(), entry({ resource_id: "/second", client_id: null, object_id: null })], unknown_field: 1 });
    expect(answer.map(({ resourceId, clientId, objectId }) => ({ resourceId, clientId, objectId }))).toEqual([
      { resourceId: first, clientId: "c", objectId: "o" },
      { resourceId: "/second", clientId: null, objectId: null },
    ]);
  });

  it.each([
    ["client_id a number", { explicit_identities: [entry({ client_id: 12345 })] }, "explicit_identities[0].client_id is a number, expected a string or null"],
    ["object_id a boolean", { explicit_identities: [entry({ object_id: true })] }, "explicit_identities[0].object_id is a boolean, expected a string or null"],
    [
      "tenant_id an object",
      { explicit_identities: [entry(), entry({ tenant_id: {} })] },
      "explicit_identities[1].tenant_id is an object, expected a string or null",
    ],
    ["not_after a number", { explicit_identities: [entry({ not_after: 1 })] }, "explicit_identities[0].not_after is a number, expected a string or null"],
    [
      "custom_claims an array",
      { explicit_identities: [entry({ custom_claims: [] })] },
      "explicit_identities[0].custom_claims is an array, expected an object or null",
    ],
    [
      "a network perimeter that is a number",
      { explicit_identities: [entry({ custom_claims: { xms_az_nwperimid: ["a", 2] } })] },
      "explicit_identities[0].custom_claims.xms_az_nwperimid[1] is a number, expected a string or null",
    ],
    ["explicit_identities an object", { explicit_identities: {} }, "explicit_identities is an object, expected an array or null"],
    ["an entry that is a string", { explicit_identities: ["x"] }, "explicit_identities[0] is a string, expected an object or null"],
    ["a top-level client_id that is a number", { client_id: 1, explicit_identities: [entry()] }, "client_id is a number, expected a string or null"],
    [
      "a delegated resource's implicit identity with a numeric object_id",
      { explicit_identities: [entry()], delegated_resources: [{ implicit_identity: { object_id: 3 } }] },
      "delegated_resources[0].implicit_identity.object_id is a number, expected a string or null",
    ],
    ["a body that is an array", [entry()], "the answer is an array, expected an object or null"],
  ])("refuses the whole answer with %s, naming the field", (_title, body, problem) => {
    expect(() => read(body)).toThrow(`the Managed Identities data plane at dp.example answered what upstream's client refuses whole: ${problem}`);
  });

  it.each([
    ["no explicit_identities", {}, "answered with no explicit_identities"],
    ["a null body", null, "answered with no explicit_identities"],
    ["an empty body", "", "answered with no explicit_identities"],
    ["a body that is not JSON", "<html>", "answered a body that is not JSON"],
    ["an entry without resource_id", { explicit_identities: [entry({ resource_id: "" })] }, "answered an entry without resource_id (explicit_identities[0])"],
    ["a null entry (Go reads it as an empty one)", { explicit_identities: [null] }, "answered an entry without resource_id (explicit_identities[0])"],
    [
      "an entry without client_id",
      { explicit_identities: [entry({ client_id: undefined })] },
      `answered an entry that has no client_id (explicit_identities[0], ${first})`,
    ],
    [
      "an entry without object_id",
      { explicit_identities: [entry({ object_id: undefined })] },
      `answered an entry that has no object_id (explicit_identities[0], ${first})`,
    ],
  ])("refuses %s", (_title, body, problem) => {
    expect(() => read(body)).toThrow(`the Managed Identities data plane at dp.example ${problem}`);
  });

  it("names the status and the service's error for an error answer", () => {
    expect(() => readDataPlaneAnswer(404, JSON.stringify({ error: { code: "NotFound", message: "no such identity\nsecond line" } }), "dp.example")).toThrow(
      "the Managed Identities data plane at dp.example answered HTTP 404 (NotFound: no such identity)",
    );
    expect(() => readDataPlaneAnswer(404, "404 page not found", "dp.example")).toThrow("answered HTTP 404 (no error body)");
  });
});
