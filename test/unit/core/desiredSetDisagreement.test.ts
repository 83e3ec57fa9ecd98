/**
 * The message for inputs that name another desired set than the cluster document
 * (resources/core/errors.ts), at the sizes clusters declare: a cluster may name
 * hundreds of identities, and the message names the first few of each list and counts the rest.
 */
import { describe, expect, it } from "vitest";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import { desiredSetDisagreement, listedIdentities } from "../../../resources/core/errors";

const identity = (index: number): string =>
  `/subscriptions/a232a67c-660a-5246-b601-20bbd270ba06/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/operator-${index}`;
const set = (indexes: readonly number[]) => desiredIdentitySet(Object.fromEntries(indexes.map((index) => [`operator-${index}`, identity(index)]))).identities;

describe("desired set disagreement message", () => {
  it("names every identity of short lists", () => {
    const message = desiredSetDisagreement(set([0, 1]), set([0]), "document-id", "cluster rg/c")?.message ?? "";
    expect(message).toContain(`The inputs name: ${identity(0)}, ${identity(1)}. The document names: ${identity(0)}`);
    expect(message).toContain(`only in the inputs: ${identity(1)}; only in the document: none`);
  });

  it("names the first identities of a long list and counts the rest, so 200 identities stay one readable message", () => {
    const document = Array.from({ length: 200 }, (_, index) => index);
    const error = desiredSetDisagreement(set([0]), set(document), "document-id", "cluster rg/c");
    const message = error?.message ?? "";
    expect(message).toMatch(/^the dataPlaneOperators input names other identities than the cluster's HCPOpenShiftCluster document/);
    expect(message).toContain(`The inputs name: ${identity(0)}. The document names: `);
    expect(message).toContain(` and ${200 - listedIdentities} more\n`);
    expect(message).toMatch(new RegExp(`only in the document: (\\S+, ){${listedIdentities - 1}}\\S+ and ${199 - listedIdentities} more$`, "m"));
    expect(message.split("/providers/").length - 1).toBe(1 + listedIdentities + listedIdentities);
    expect(desiredSetDisagreement(set(document), set(document), "document-id", "cluster rg/c")).toBeUndefined();
  });
});
