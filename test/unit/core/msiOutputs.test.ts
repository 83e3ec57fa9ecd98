/**
 * The MSI half's fingerprints as users' state holds them: the text written byte for byte, read back
 * exactly, and each malformed part named. Hashes computed outside the module (sha256 of the key, and
 * of `clientId\nprincipalId` with NUL for an absent value).
 */
import { describe, expect, it } from "vitest";
import { decodeMsiOutputs, encodeMsiOutputs, msiStatusFromOutputs, readMsiOutputsText } from "../../../resources/core/msiOutputs";
import type { MsiManagedIdentities } from "../../../resources/core/msiManagedIdentities";

const identityA =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/identity-a";
const keyA = identityA.toLowerCase();
const identityB = identityA.replace("identity-a", "identity-b");
const keyB = identityB.toLowerCase();

const half: MsiManagedIdentities = {
  earliestRecheckTime: "2026-12-01T19:13:44Z",
  controlPlaneOperatorsIdentities: { [keyB]: { resourceId: identityB }, [keyA]: { resourceId: identityA, clientId: "client-a", principalId: "principal-a" } },
  serviceManagedIdentity: { resourceId: identityB, clientId: "client-b" },
};
const text =
  `{"earliestRecheckTime":"2026-12-01T19:13:44Z","controlPlaneOperators":{"35e20c3aa680":"ba0c5c73","6db46bc53838":"dcc0d065"},` +
  `"serviceManagedIdentity":["6db46bc53838","7ff8c4ac"]}`;

describe("the MSI half in the outputs", () => {
  it("is written byte for byte, keys in order", () => {
    expect(JSON.stringify(encodeMsiOutputs(half))).toBe(text);
    expect(JSON.stringify(encodeMsiOutputs({}))).toBe("{}");
  });

  it("reads back exactly, and absent is the empty half", () => {
    expect(readMsiOutputsText(text)).toEqual({ status: JSON.parse(text) as unknown, problems: [] });
    expect(readMsiOutputsText(undefined)).toEqual({ status: {}, problems: [] });
    expect(msiStatusFromOutputs(text)).toEqual({ earliestRecheckTime: "2026-12-01T19:13:44Z", identityCount: 3 });
  });

  it("finds the keys at hand again, and gives an identity not at hand a stand-in key", () => {
    const { status, fingerprint } = decodeMsiOutputs(readMsiOutputsText(text).status, [keyA]);
    expect(status).toEqual({
      earliestRecheckTime: "2026-12-01T19:13:44Z",
      controlPlaneOperatorsIdentities: { [keyA]: { resourceId: keyA }, "(identity 6db46bc53838)": { resourceId: "(identity 6db46bc53838)" } },
      serviceManagedIdentity: { resourceId: "(identity 6db46bc53838)" },
    });
    expect([...fingerprint]).toEqual([
      [keyA, "ba0c5c73"],
      ["(identity 6db46bc53838)", "dcc0d065"],
      ["(service managed identity)", "(identity 6db46bc53838) 7ff8c4ac"],
    ]);
  });

  it.each([
    ["text of a list", "[]", "is a string, expected the MSI status as JSON text of an object"],
    ["an object instead of its text", {}, "is an object, expected the MSI status as JSON text of an object"],
    ["operators as a list", '{"controlPlaneOperators":[]}', "controlPlaneOperators is not an object"],
    ["an operator keyed by something else", '{"controlPlaneOperators":{"xyz":"ba0c5c73"}}', "controlPlaneOperators['xyz'] is not a key hash and a value hash"],
    ["a service managed identity of one hash", '{"serviceManagedIdentity":["35e20c3aa680"]}', "serviceManagedIdentity is not a key hash and a value hash"],
    [
      "a service managed identity of three values",
      '{"serviceManagedIdentity":["35e20c3aa680","ba0c5c73","x"]}',
      "serviceManagedIdentity is not a key hash and a value hash",
    ],
    ["a numeric recheck time", '{"earliestRecheckTime":5}', "earliestRecheckTime is not a string"],
  ])("names the problem with %s", (_title, value, problem) => {
    expect(readMsiOutputsText(value).problems).toEqual([problem]);
  });
});
