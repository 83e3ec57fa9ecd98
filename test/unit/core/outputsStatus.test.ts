/**
 * The small status of the provider outputs, stored as its JSON text: what it writes, and that
 * reading it back with the keys at hand gives the document's subtree again. The hash and digest vectors were
 * produced outside Node (`printf %s <key> | sha256sum`, Python's hashlib and base64).
 */
import { describe, expect, it } from "vitest";
import {
  decodeOutputsStatus,
  encodeOutputsStatus,
  inputsDigest,
  keyHashOf,
  operatorNamesFromKeys,
  operatorNamesFromOutputs,
} from "../../../resources/core/outputsStatus";
import { outputsStatusText, readOutputsStatusText, statusFromOutputs } from "../../../resources/core/outputsStatus";
import type { DataPlaneOperatorsManagedIdentities } from "../../../resources/core/serviceProviderClusterDocument";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";

const identityA =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/identity-a";
const keyA = identityA.toLowerCase();
const identityB = identityA.replace("identity-a", "identity-b");
const keyB = identityB.toLowerCase();
const foreign = identityA.replace("identity-a", "someone-elses");
const foreignKey = foreign.toLowerCase();

const subtree: DataPlaneOperatorsManagedIdentities = {
  identities: {
    [keyA]: { resourceID: identityA, clientId: "client-a", principalId: "principal-a" },
    [keyB]: { resourceID: identityB, retrievalError: "ResourceNotFound (HTTP 404): gone" },
    [foreignKey]: { resourceID: foreign, clientId: "client-f", principalId: "principal-f" },
  },
  earliestRecheckTime: "2026-12-01T19:13:44Z",
};

describe("keyHashOf and inputsDigest", () => {
  it("match vectors computed outside Node", () => {
    expect(keyHashOf(keyA)).toBe("35e20c3aa680");
    expect(inputsDigest({ "operator-a": identityA }, null)).toBe("hzPlozmBSiQnIjGyKeG-AG");
    expect(inputsDigest(null, null)).toBe("lcubT4TO_xMsx6h12MGSv0");
  });

  it("digests the map independently of key order, and tells apart what diff must see", () => {
    expect(inputsDigest({ a: identityA, b: identityB }, null)).toBe(inputsDigest({ b: identityB, a: identityA }, null));
    const digests = new Set([
      inputsDigest({ a: identityA }, null),
      inputsDigest({ a: identityA.replace("identity-a", "IDENTITY-A") }, null),
      inputsDigest({ b: identityA }, null),
      inputsDigest({ a: identityA }, identityB),
      inputsDigest({}, null),
      inputsDigest(null, null),
      inputsDigest(null, identityB),
    ]);
    expect(digests.size).toBe(7);
  });
});

describe("encodeOutputsStatus", () => {
  const names = operatorNamesFromKeys([
    ["operator-a", keyA],
    ["operator-b", keyB],
  ]);

  it("names declared identities by operator without their IDs, and keeps the others as in Cosmos", () => {
    expect(encodeOutputsStatus(subtree, names)).toEqual({
      earliestRecheckTime: "2026-12-01T19:13:44Z",
      operators: {
        "operator-a": { keyHash: keyHashOf(keyA), clientId: "client-a", principalId: "principal-a" },
        "operator-b": { keyHash: keyHashOf(keyB), retrievalError: "ResourceNotFound (HTTP 404): gone" },
      },
      identities: { [foreignKey]: { resourceID: foreign, clientId: "client-f", principalId: "principal-f" } },
    });
  });

  it("is less than half the size of the subtree for declared identities", () => {
    const declared: DataPlaneOperatorsManagedIdentities = { ...subtree, identities: { [keyA]: subtree.identities![keyA], [keyB]: subtree.identities![keyB] } };
    expect(JSON.stringify(encodeOutputsStatus(declared, names)).length * 2).toBeLessThan(JSON.stringify(declared).length);
  });

  it("keeps a resourceID that is not its key in another case", () => {
    const odd: DataPlaneOperatorsManagedIdentities = { identities: { [keyA]: { resourceID: identityB, clientId: "c" } } };
    const encoded = encodeOutputsStatus(odd, names);
    expect(encoded.operators?.["operator-a"]).toEqual({ keyHash: keyHashOf(keyA), clientId: "c", resourceID: identityB });
    expect(decodeOutputsStatus(encoded, [keyA])).toEqual(odd);
  });
});

describe("decodeOutputsStatus", () => {
  const names = operatorNamesFromKeys([
    ["operator-a", keyA],
    ["operator-b", keyB],
  ]);
  const encoded = encodeOutputsStatus(subtree, names);

  it("gives back the subtree, up to the case of resourceID, from the keys at hand", () => {
    const decoded = decodeOutputsStatus(encoded, [keyB, keyA, foreignKey]);
    expect(decoded.earliestRecheckTime).toBe(subtree.earliestRecheckTime);
    expect(dataPlaneHalf.equals({ identities: decoded.identities }, { identities: subtree.identities })).toBe(true);
  });

  it("gives an operator whose key is not at hand a stand-in key that equals no real key", () => {
    const decoded = decodeOutputsStatus(encoded, [keyA]);
    expect(Object.keys(decoded.identities ?? {}).sort()).toEqual(["(operator operator-b)", foreignKey, keyA].sort());
    expect(dataPlaneHalf.equals({ identities: decoded.identities }, { identities: subtree.identities })).toBe(false);
  });

  it("recovers the operator names from outputs written earlier (what refresh re-encodes with)", () => {
    expect(encodeOutputsStatus(subtree, operatorNamesFromOutputs(encoded))).toEqual(encoded);
  });
});

describe("the status as JSON text", () => {
  const encoded = encodeOutputsStatus(subtree, operatorNamesFromKeys([["operator-a", keyA]]));

  it("is one string that reads back as what encode wrote", () => {
    const text = outputsStatusText(encoded);
    expect(typeof text).toBe("string");
    expect(readOutputsStatusText(text)).toEqual({ status: encoded, problems: [] });
  });

  it.each([
    ["an object instead of its text", {}, /expected the status as JSON text/],
    ["text that is not JSON", "{", /is not JSON text/],
    ["text of a list", "[]", /expected an object/],
    ["an operator without a key hash", JSON.stringify({ operators: { a: { clientId: "c" } } }), /operators\['a'\] is not a valid entry/],
    ["an operator with a number for clientId", JSON.stringify({ operators: { a: { keyHash: "35e20c3aa680", clientId: 1 } } }), /operators\['a'\]/],
    ["operators as a string", JSON.stringify({ operators: "a" }), /operators is a string/],
    [
      "an operator list of more than five values",
      JSON.stringify({ operators: { a: ["35e20c3aa680", null, null, null, null, "x"] } }),
      /operators\['a'\] is not a valid entry/,
    ],
    ["an operator that is null", JSON.stringify({ operators: { a: null } }), /operators\['a'\] is not a valid entry/],
    ["an operator list whose key hash is too short", JSON.stringify({ operators: { a: ["35e20c3aa6", "c"] } }), /operators\['a'\] is not a valid entry/],
    ["an identity keyed in mixed case", JSON.stringify({ identities: { [identityA]: { resourceID: identityA } } }), /not keyed by the lowercased resource ID/],
    ["a recheck time that is not a time", JSON.stringify({ earliestRecheckTime: "soon" }), /earliestRecheckTime/],
  ])("names the problem with %s", (_title, value, problem) => {
    expect(readOutputsStatusText(value).problems.join("; ")).toMatch(problem);
  });

  it("gives a program the object from the text, from an object (a user's mock), and nothing from anything else", () => {
    expect(statusFromOutputs(outputsStatusText(encoded))).toEqual(encoded);
    expect(statusFromOutputs(encoded)).toBe(encoded);
    expect(statusFromOutputs(undefined)).toBeUndefined();
    expect(statusFromOutputs("{")).toBeUndefined();
    expect(statusFromOutputs("[]")).toBeUndefined();
    expect(statusFromOutputs(5)).toBeUndefined();
  });
});

describe("the status text users' state holds", () => {
  const text =
    `{"earliestRecheckTime":"2026-12-01T19:13:44Z","operators":{"operator-a":["35e20c3aa680","client-a","principal-a"],` +
    `"operator-b":["6db46bc53838",null,null,"ResourceNotFound (HTTP 404): gone"]},` +
    `"identities":{"${foreignKey}":{"resourceID":"${foreign}","clientId":"client-f","principalId":"principal-f"}}}`;
  const names = operatorNamesFromKeys([
    ["operator-a", keyA],
    ["operator-b", keyB],
  ]);

  it("is written byte for byte", () => {
    expect(outputsStatusText(encodeOutputsStatus(subtree, names))).toBe(text);
  });

  it("reads back as the entries it lists, each operator's list as the object it stands for", () => {
    expect(readOutputsStatusText(text)).toEqual({
      status: {
        earliestRecheckTime: "2026-12-01T19:13:44Z",
        operators: {
          "operator-a": { keyHash: "35e20c3aa680", clientId: "client-a", principalId: "principal-a" },
          "operator-b": { keyHash: "6db46bc53838", retrievalError: "ResourceNotFound (HTTP 404): gone" },
        },
        identities: { [foreignKey]: { resourceID: foreign, clientId: "client-f", principalId: "principal-f" } },
      },
      problems: [],
    });
  });
});
