/**
 * Issue 10, item 1, with a reachable token endpoint and the right IDENTITY_HEADER: the token
 * endpoint answering 500, ARM answering 401 and ARM unreachable are global failures (nothing
 * stored changes, the document reads back byte-for-byte); a 403 on one identity stays a failure
 * of that identity (its entry is cleared, the other keeps its IDs). Real provider and SDK clients
 * against the in-process sandbox, faults from its fault injector.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Scenario } from "../fixtures/globalFailureScenario";
import {
  clientIdFor,
  closedPort,
  createFails,
  globalFailureLeavesDocumentUnchanged,
  readStatus,
  startScenario,
  storeResolvedStatus,
} from "../fixtures/globalFailureScenario";

let scenario: Scenario;

beforeAll(async () => {
  scenario = await startScenario(4);
});

afterAll(async () => {
  await scenario?.stop();
});

beforeEach(() => {
  process.env.COSMOS_KEY = scenario.sandbox.cosmosKey;
});

afterEach(() => {
  delete process.env.COSMOS_KEY;
  scenario.sandbox.faults.clear();
});

describe("global failures: nothing written", () => {
  it("the token endpoint answers 500", async () => {
    scenario.sandbox.faults.add({ target: "token", kind: "status", statusCode: 500, errorCode: "server_error", message: "token service down", probability: 1 });
    const clientId = clientIdFor(4);
    const message = await globalFailureLeavesDocumentUnchanged(scenario.sandbox, scenario.clusters[0], { managedIdentityClientId: clientId });
    expect(message).toMatch(new RegExp(`^the managed identity with client ID ${clientId} `));
    expect(scenario.sandbox.statistics.token.responsesByStatus["500"]).toBeGreaterThan(0);
    expect(scenario.sandbox.statistics.arm.getRequests).toBe(0);
  });

  it("ARM answers 401", async () => {
    scenario.sandbox.faults.add({
      target: "arm",
      kind: "status",
      statusCode: 401,
      errorCode: "InvalidAuthenticationToken",
      message: "The access token is invalid.",
      probability: 1,
    });
    const clientId = clientIdFor(5);
    const message = await globalFailureLeavesDocumentUnchanged(scenario.sandbox, scenario.clusters[1], { managedIdentityClientId: clientId });
    expect(message).toContain("Azure Resource Manager refused the credential's token");
    expect(message).toContain("InvalidAuthenticationToken (HTTP 401)");
    expect(message).toContain(`Credential in use: the managed identity with client ID ${clientId}`);
    expect(scenario.sandbox.statistics.arm.getRequests).toBeGreaterThan(0);
  });

  it("the ARM endpoint cannot be reached (connection refused), after retries within the lookup deadline", async () => {
    const clientId = clientIdFor(6);
    const message = await globalFailureLeavesDocumentUnchanged(scenario.sandbox, scenario.clusters[2], {
      managedIdentityClientId: clientId,
      armEndpoint: `https://127.0.0.1:${await closedPort()}`,
      lookupTimeoutSeconds: "2",
    });
    expect(message).toContain("the Azure Resource Manager endpoint cannot be reached");
    expect(message).toContain("ECONNREFUSED");
    expect(message).toContain("'aro-hcp-identity-status:armEndpoint'");
    expect(message).toContain(`Credential in use: the managed identity with client ID ${clientId}`);
  });
});

describe("a failure about one identity stays per identity", () => {
  it("a 403 on one identity to the hook's own credential keeps that entry's stored IDs beside the error, and fails naming it", async () => {
    const { sandbox } = scenario;
    const cluster = scenario.clusters[3];
    const [denied, allowed] = Object.values(cluster.dataPlaneOperators) as [string, string];
    sandbox.faults.add({
      target: "arm",
      kind: "status",
      statusCode: 403,
      errorCode: "AuthorizationFailed",
      message: "no access to this identity",
      match: { resourceId: denied },
      probability: 1,
    });
    await storeResolvedStatus(sandbox, cluster);
    const error = await createFails(sandbox, cluster, { managedIdentityClientId: clientIdFor(7) });
    expect(error.message).toContain(`${denied}: AuthorizationFailed (HTTP 403)`);
    const status = await readStatus(sandbox, cluster);
    // The refusal is about the hook's credential, not the identity (issue 28 item 3): only a 403
    // to the cluster's own credential would clear the stored IDs.
    const deniedIdentity = sandbox.identities.get(denied)!;
    expect(status?.identities?.[denied.toLowerCase()]).toEqual({
      resourceID: denied,
      clientId: deniedIdentity.clientId,
      principalId: deniedIdentity.principalId,
      retrievalError: "AuthorizationFailed (HTTP 403): no access to this identity",
    });
    const identity = sandbox.identities.get(allowed)!;
    expect(status?.identities?.[allowed.toLowerCase()]).toEqual({ resourceID: allowed, clientId: identity.clientId, principalId: identity.principalId });
  });
});
