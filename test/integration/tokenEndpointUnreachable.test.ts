/**
 * Issue 10, item 1: a managed-identity token endpoint that cannot be reached (connection refused)
 * is a global failure: nothing stored changes. Own file, own process: MSAL keeps the endpoint it
 * saw first (test/fixtures/globalFailureScenario.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Scenario } from "../fixtures/globalFailureScenario";
import { clientIdFor, closedPort, globalFailureLeavesDocumentUnchanged, startScenario } from "../fixtures/globalFailureScenario";

let scenario: Scenario;

beforeAll(async () => {
  scenario = await startScenario(1, { endpoint: `http://127.0.0.1:${await closedPort()}/msi/token` });
  process.env.COSMOS_KEY = scenario.sandbox.cosmosKey;
});

afterAll(async () => {
  await scenario?.stop();
});

it("fails before any write naming the managed identity; stored IDs unchanged; no token request reached the sandbox", async () => {
  const clientId = clientIdFor(3);
  const message = await globalFailureLeavesDocumentUnchanged(scenario.sandbox, scenario.clusters[0], { managedIdentityClientId: clientId });
  expect(message).toMatch(new RegExp(`^the managed identity with client ID ${clientId} `));
  expect(scenario.sandbox.statistics.token.requests).toBe(0);
  expect(scenario.sandbox.statistics.arm.getRequests).toBe(0);
});
