import type { JsonObject } from "../../../resources/core/json";
import { describe, expect, it } from "vitest";
import { desiredFromClusterDocument } from "../../../resources/core/clusterDocument";
import { buildClusterDocument, identityResourceId } from "../../fixtures/documents";

const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const smi = identityResourceId("service-managed-identity");

describe("desiredFromClusterDocument", () => {
  it("reads the desired set, deduplicated by key and sorted, the service managed identity and the control plane operators", () => {
    const document = buildClusterDocument({
      dataPlaneOperators: { zeta: identityB, alpha: identityA, beta: identityA.toUpperCase() },
      serviceManagedIdentity: smi,
    });
    expect(desiredFromClusterDocument(document)).toEqual({
      kind: "desired",
      identities: [
        { key: identityA.toLowerCase(), resourceId: identityA },
        { key: identityB.toLowerCase(), resourceId: identityB },
      ],
      serviceManagedIdentity: smi,
      identityUrl: ((document.properties as JsonObject).serviceProviderProperties as JsonObject).managedIdentitiesDataPlaneIdentityURL,
      controlPlaneOperators: (
        ((document.properties as JsonObject).customerProperties as JsonObject).platform as {
          operatorsAuthentication: { userAssignedIdentities: JsonObject };
        }
      ).operatorsAuthentication.userAssignedIdentities.controlPlaneOperators,
    });
  });

  it("reads a document without a dataPlaneOperators map, or with an empty one, as the empty set", () => {
    expect(desiredFromClusterDocument(buildClusterDocument({}))).toMatchObject({ kind: "desired", identities: [] });
    expect(desiredFromClusterDocument(buildClusterDocument({ dataPlaneOperators: {} }))).toMatchObject({ kind: "desired", identities: [] });
  });

  it("reports a cluster being deleted before any problem with its operators", () => {
    const document = buildClusterDocument({ dataPlaneOperators: { "operator-a": null }, deletionTimestamp: "2026-08-14T12:00:00Z" });
    expect(desiredFromClusterDocument(document)).toMatchObject({ kind: "deleting" });
  });

  it("returns every problem as a value naming the document's field, never throws", () => {
    const document = buildClusterDocument({ dataPlaneOperators: { "operator-a": identityA, "operator-b": null, "operator-c": "nope" } });
    const result = desiredFromClusterDocument(document);
    expect(result.kind).toBe("unreadable");
    expect(result.kind === "unreadable" ? result.problems : []).toEqual([
      "properties.customerProperties.platform.operatorsAuthentication.userAssignedIdentities.dataPlaneOperators.operator-b: identity resource ID is missing (null)",
      expect.stringContaining("userAssignedIdentities.dataPlaneOperators.operator-c: identity resource ID must start with '/subscriptions/'"),
    ]);
  });

  it("reports a document without properties as unreadable", () => {
    expect(desiredFromClusterDocument({ id: "x" })).toEqual({
      kind: "unreadable",
      problems: ["properties is a undefined, expected an object"],
      serviceManagedIdentity: undefined,
    });
  });
});
