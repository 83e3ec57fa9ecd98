/**
 * Issue 10: a managed-identity token endpoint that hangs longer than `lookupTimeoutSeconds` is a
 * failure of the credential, not of any identity: nothing stored changes. Before the fix, each
 * lookup's deadline fired while it waited for the token and was recorded as a per-identity
 * Timeout, which cleared every stored clientId/principalId of the cluster.
 *
 * Real provider and SDK clients against the in-process sandbox; the sandbox holds every token
 * request for 8 s (a `delay` fault) and the lookup deadline is 2 s. Own file, own process: MSAL
 * keeps the managed-identity source process-wide (test/fixtures/globalFailureScenario.ts).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Scenario } from "../fixtures/globalFailureScenario";
import { clientIdFor, globalFailureLeavesDocumentUnchanged, startScenario } from "../fixtures/globalFailureScenario";

let scenario: Scenario;

beforeAll(async () => {
  scenario = await startScenario(1);
  process.env.COSMOS_KEY = scenario.sandbox.cosmosKey;
});

afterAll(async () => {
  await scenario?.stop();
});

it("fails before any write with AzureAccessError naming the credential and the timeout; stored IDs unchanged; no ARM request", async () => {
  const { sandbox } = scenario;
  sandbox.faults.add({ target: "token", kind: "delay", delayInMs: 8_000, probability: 1 });
  const clientId = clientIdFor(8);
  const message = await globalFailureLeavesDocumentUnchanged(sandbox, scenario.clusters[0], { managedIdentityClientId: clientId, lookupTimeoutSeconds: "2" });
  expect(message).toContain("lookupTimeoutSeconds");
  expect(message).toContain(`Credential in use: the managed identity with client ID ${clientId}`);
  // The token request did reach the endpoint (it hung there), and no identity was asked for.
  expect(sandbox.statistics.token.requests).toBeGreaterThan(0);
  expect(sandbox.statistics.arm.getRequests).toBe(0);
});
