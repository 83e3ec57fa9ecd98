/**
 * The data plane's answer as the hook reads it (resources/azure/dataPlaneAnswer.ts): as strict on
 * types as upstream's client (Go's encoding/json into msi-dataplane's structs refuses the whole
 * answer for one field of another type), and stricter where "the identity is gone" is at stake.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DataPlaneError, credentialFor, readDataPlaneAnswer } from "../../../resources/azure/dataPlaneAnswer";
import { SandboxCertificateAuthority } from "../../../sandbox/certificateAuthority";

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

describe("the SMI credential's pin (credentialFor)", () => {
  const smi = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/smi";
  const tid = "4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7a9b11";
  let clientSecret: string;

  beforeAll(async () => {
    const authority = await SandboxCertificateAuthority.create("pin test CA");
    const leaf = await authority.issue("pin test leaf");
    clientSecret = Buffer.from(`${leaf.privateKeyPem}\n${leaf.certificatePem}`).toString("base64");
  });

  const answerWith = (fields: Record<string, unknown>) =>
    read({
      explicit_identities: [
        entry({ resource_id: smi, tenant_id: tid, client_secret: clientSecret, authentication_endpoint: "https://login.microsoftonline.com/", ...fields }),
      ],
    });
  const pinned = (fields: Record<string, unknown>, authorityHost = "https://login.microsoftonline.com") =>
    credentialFor(answerWith(fields), smi, { tenantId: tid, authorityHost }, Date.parse("2026-01-01T00:00:00Z"));

  it.each([
    ["the same tenant and authority", {}],
    ["the tenant in uppercase", { tenant_id: tid.toUpperCase() }],
    ["the authority without its trailing slash", { authentication_endpoint: "https://login.microsoftonline.com" }],
    ["the authority with its default port and another case", { authentication_endpoint: "HTTPS://Login.MicrosoftOnline.com:443/" }],
  ])("accepts %s, and uses that tenant at the configured authority", (_name, fields) => {
    const credential = pinned(fields);
    expect(credential).toMatchObject({ resourceId: smi, clientId: "c", authorityHost: "https://login.microsoftonline.com" });
    expect(credential.tenantId.toLowerCase()).toBe(tid);
  });

  it("accepts a sovereign cloud's authority when the stack is configured for that cloud, and refuses the public one there", () => {
    expect(pinned({ authentication_endpoint: "https://login.microsoftonline.us/" }, "https://login.microsoftonline.us").authorityHost).toBe(
      "https://login.microsoftonline.us",
    );
    expect(() => pinned({ authentication_endpoint: "https://login.microsoftonline.com/" }, "https://login.microsoftonline.us")).toThrow(
      'names authentication_endpoint "https://login.microsoftonline.com/", but the configured Entra ID authority is https://login.microsoftonline.us',
    );
    expect(() => pinned({ authentication_endpoint: "https://login.chinacloudapi.cn/" }, "https://login.microsoftonline.com")).toThrow(DataPlaneError);
  });

  it.each([
    [
      "another tenant",
      { tenant_id: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" },
      'names tenant_id "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", but the cluster\'s identity URL names tenant ' + tid,
    ],
    ["a tenant that is not a GUID", { tenant_id: "common" }, 'names tenant_id "common"'],
    ["another host", { authentication_endpoint: "https://login.example.net/" }, 'names authentication_endpoint "https://login.example.net/"'],
    ["another port", { authentication_endpoint: "https://login.microsoftonline.com:8443/" }, "names authentication_endpoint"],
    ["plain http", { authentication_endpoint: "http://login.microsoftonline.com/" }, "names authentication_endpoint"],
    ["a look-alike host", { authentication_endpoint: "https://login.microsoftonline.com.example.net/" }, "names authentication_endpoint"],
    ["a value that is not a URL", { authentication_endpoint: "login.microsoftonline.com" }, "names authentication_endpoint"],
  ])("refuses %s before anything is signed, naming the field, the value received and the value expected", (_name, fields, message) => {
    expect(() => pinned(fields)).toThrow(message);
    expect(() => pinned(fields)).toThrow("no assertion was signed");
  });

  it("shows only the start of a long value", () => {
    expect(() => pinned({ authentication_endpoint: `https://${"a".repeat(500)}.example/` })).toThrow(/"https:\/\/a{112}…"/);
  });
});
