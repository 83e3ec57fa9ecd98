/**
 * Issue 10, item 1: a failure that is not about one identity (credential, ARM 401, ARM
 * unreachable) ends the pass before any write; stored IDs stay exactly as they were. Issue 28,
 * item 3: a failure about one identity that is not a definitive answer (persistent 5xx, 429, a
 * timeout, a reset, a 403 to the hook's own credential) keeps its stored IDs beside the error;
 * the same transient failure on every lookup of a pass is global.
 * Fakes at the sync seam; the same line against the sandbox is in
 * test/integration/credentialErrors.test.ts.
 */
import { describe, expect, it } from "vitest";
import { AzureAccessError } from "../../../resources/core/errors";
import { UserAssignedIdentityReadError } from "../../../resources/core/errors";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import type { JsonObject } from "../../../resources/core/json";
import type { ParsedResourceId } from "../../../resources/core/azureResourceId";
import { refreshManagedIdentityStatus } from "../../../resources/sync/refreshManagedIdentityStatus";
import { syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import { restError } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { Harness } from "../../fakes/syncHarness";
import { createHarness, declareInClusterDocument, parsedCluster } from "../../fakes/syncHarness";
import { buildServiceProviderClusterDocument, fixedNow, identityResourceId, locationOf, storedEntry, storedStatus, subtreeOf } from "../../fixtures/documents";

const location = locationOf();
const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const keyA = identityA.toLowerCase();
const hourEarlier = "2026-08-14T11:00:00Z";
const credential = "the managed identity with client ID 11111111-2222-3333-4444-555555555555";

const named = (name: string, message: string): Error => Object.assign(new Error(message), { name });
const nodeError = (code: string, message: string): Error => Object.assign(new Error(message), { name: "RestError", code });

/** A stored status with real IDs whose recheck is due, so the pass consults Azure. */
function storedDocument(): JsonObject {
  return buildServiceProviderClusterDocument({
    dataPlaneOperatorsManagedIdentities: storedStatus(
      [
        storedEntry(identityA, { clientId: "a-client", principalId: "a-principal" }),
        storedEntry(identityB, { clientId: "b-client", principalId: "b-principal" }),
      ],
      hourEarlier,
    ),
  });
}

function harnessWith(identityBScript: IdentityScript): Harness {
  const harness = createHarness({
    documents: [storedDocument()],
    identities: { [identityA]: { values: { clientId: "a-client", principalId: "a-principal" } }, [identityB]: identityBScript },
  });
  return { ...harness, dependencies: { ...harness.dependencies, credentialDescription: credential } };
}

async function passFails(harness: Harness): Promise<Error> {
  const desired = desiredIdentitySet({ a: identityA, b: identityB }).identities;
  declareInClusterDocument(harness, [identityA, identityB]);
  const error = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof Error)) throw new Error("expected the pass to fail");
  return error;
}

// A credential's own failure is the cause, alone: its message (azure/credentials.ts) names the credential and what to set.
const globalFailures: ReadonlyArray<[string, unknown, string]> = [
  ["CredentialUnavailableError", named("CredentialUnavailableError", "ManagedIdentityCredential: no token"), "ManagedIdentityCredential: no token"],
  ["AuthenticationRequiredError", named("AuthenticationRequiredError", "sign-in required"), "sign-in required"],
  ["AuthenticationError (token endpoint 500 or 401)", named("AuthenticationError", "token endpoint answered 500"), "token endpoint answered 500"],
  ["ARM 401", restError("InvalidAuthenticationToken", 401, "The access token is invalid."), "InvalidAuthenticationToken (HTTP 401)"],
  ["ARM unreachable: ENOTFOUND", nodeError("ENOTFOUND", "getaddrinfo ENOTFOUND management.example"), "ENOTFOUND"],
  ["ARM unreachable: ECONNREFUSED", nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1"), "ECONNREFUSED"],
  ["ARM untrusted certificate", nodeError("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"), "SELF_SIGNED_CERT_IN_CHAIN"],
];

describe("a global failure in a sync pass", () => {
  it.each(globalFailures)("%s: throws AzureAccessError naming the credential, zero writes, stored IDs unchanged", async (_title, error, code) => {
    const harness = harnessWith({ error });
    const before = JSON.stringify(harness.store.get(location.partitionKey, location.documentId));
    const failure = await passFails(harness);
    expect(failure).toBeInstanceOf(AzureAccessError);
    expect(failure).not.toBeInstanceOf(UserAssignedIdentityReadError);
    const credentialFailure = (error as Error).name !== "RestError" && !("code" in (error as object));
    if (credentialFailure)
      expect(failure.message.startsWith(`${code}. Cluster ${location.clusterName}: no identity was checked; nothing was written`)).toBe(true);
    else expect(failure.message).toContain(code);
    expect(failure.message).toContain(`Credential in use: ${credential}.`);
    expect(failure.message).toContain("nothing was written");
    expect(harness.store.patches()).toHaveLength(0);
    expect(JSON.stringify(harness.store.get(location.partitionKey, location.documentId))).toBe(before);
  });

  it("does not retry a credential failure or an ARM 401", async () => {
    for (const error of [named("CredentialUnavailableError", "no token"), restError("InvalidAuthenticationToken", 401, "invalid")]) {
      const harness = harnessWith({ error });
      await passFails(harness);
      expect(harness.reader.calledKeys.filter((key) => key === identityB.toLowerCase())).toHaveLength(1);
    }
  });

  it("retries an unreachable endpoint within the deadline before calling it global", async () => {
    const harness = harnessWith({ error: nodeError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:1") });
    const failure = await passFails(harness);
    expect(failure).toBeInstanceOf(AzureAccessError);
    expect(harness.reader.calledKeys.filter((key) => key === identityB.toLowerCase()).length).toBeGreaterThan(1);
    expect(harness.store.patches()).toHaveLength(0);
  });
});

describe("a failure about one identity in a sync pass (issue 28 item 3: stored IDs change only on a definitive answer)", () => {
  const bWithIds = { resourceID: identityB, clientId: "b-client", principalId: "b-principal" };
  it.each([
    ["persistent 503", restError("ServiceUnavailable", 503, "busy"), "ServiceUnavailable (HTTP 503): busy"],
    ["persistent 429", restError("TooManyRequests", 429, "slow down"), "TooManyRequests (HTTP 429): slow down"],
    ["a connection reset", nodeError("ECONNRESET", "read ECONNRESET"), "ECONNRESET: read ECONNRESET"],
    ["a 403 to the hook's own credential", restError("AuthorizationFailed", 403, "no access"), "AuthorizationFailed (HTTP 403): no access"],
  ])(
    "%s: keeps that entry's stored IDs beside the error, leaves the recheck open, writes the other identity and fails naming it",
    async (_title, error, retrievalError) => {
      const harness = harnessWith({ error });
      const failure = await passFails(harness);
      expect(failure).toBeInstanceOf(UserAssignedIdentityReadError);
      expect(failure.message).toContain(`${identityB}: ${retrievalError} [stored IDs kept]`);
      expect(harness.store.patches()).toHaveLength(1);
      const subtree = subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as JsonObject;
      const identities = subtree.identities as JsonObject;
      expect(identities[keyA]).toEqual({ resourceID: identityA, clientId: "a-client", principalId: "a-principal" });
      expect(identities[identityB.toLowerCase()]).toEqual({ ...bWithIds, retrievalError });
      expect(subtree.earliestRecheckTime).toBeUndefined();
    },
  );

  it("a 403 read with the cluster's own credential is definitive: clears that entry's IDs", async () => {
    const harness = harnessWith({ error: restError("AuthorizationFailed", 403, "no access") });
    const failure = await passFails({ ...harness, dependencies: { ...harness.dependencies, credentialScope: "cluster" } });
    expect(failure.message).toContain(`${identityB}: AuthorizationFailed (HTTP 403): no access [no IDs stored]`);
    const identities = (subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as JsonObject).identities as JsonObject;
    expect(identities[identityB.toLowerCase()]).toEqual({ resourceID: identityB, retrievalError: "AuthorizationFailed (HTTP 403): no access" });
  });

  it("idsOnLookupFailure 'clear' restores upstream's rule: a persistent 503 clears that entry's IDs", async () => {
    const harness = harnessWith({ error: restError("ServiceUnavailable", 503, "busy") });
    const dependencies = { ...harness.dependencies, options: { ...harness.dependencies.options, idsOnLookupFailure: "clear" as const } };
    await passFails({ ...harness, dependencies });
    const identities = (subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as JsonObject).identities as JsonObject;
    expect(identities[identityB.toLowerCase()]).toEqual({ resourceID: identityB, retrievalError: "ServiceUnavailable (HTTP 503): busy" });
  });

  it.each([
    ["503 on every lookup", restError("ServiceUnavailable", 503, "busy"), "ServerError"],
    ["a timeout on every lookup", Object.assign(new Error("aborted"), { name: "AbortError" }), "Timeout"],
    ["429 on every lookup", restError("TooManyRequests", 429, "slow down"), "Throttled"],
  ])("%s: a global failure, nothing written, every stored ID as it was", async (_title, error, failureClass) => {
    const harness = createHarness({ documents: [storedDocument()], identities: { [identityA]: { error }, [identityB]: { error } } });
    const before = JSON.stringify(harness.store.get(location.partitionKey, location.documentId));
    const failure = await passFails(harness);
    expect(failure).toBeInstanceOf(AzureAccessError);
    expect(failure.message).toContain(`all 2 identity lookups failed the same transient way (${failureClass}: `);
    expect(failure.message).toContain("nothing was written");
    expect(harness.store.patches()).toHaveLength(0);
    expect(JSON.stringify(harness.store.get(location.partitionKey, location.documentId))).toBe(before);
  });

  it("503 on every lookup, one retry cut by the deadline: still one transient class, a global failure, nothing written", async () => {
    const harness = createHarness({ documents: [storedDocument()], syncOptions: { lookupTimeoutInMs: 1_000 } });
    let callsOfB = 0;
    const reader = {
      getUserAssignedIdentity: (resourceId: ParsedResourceId, options: { readonly abortSignal: AbortSignal }) => {
        if (resourceId.key === identityB.toLowerCase() && (callsOfB += 1) > 1) {
          // B's retry hangs until the lookup deadline aborts it.
          return new Promise<never>((_resolve, reject) => options.abortSignal.addEventListener("abort", () => reject(options.abortSignal.reason as Error)));
        }
        return Promise.reject(restError("ServiceUnavailable", 503, "busy"));
      },
    };
    // Real time from the fixture's now: the deadline is a real timer, so the clock the backoff reads must run too.
    const start = Date.now();
    const realTime = {
      now: () => new Date(fixedNow.getTime() + Date.now() - start),
      sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    };
    const before = JSON.stringify(harness.store.get(location.partitionKey, location.documentId));
    const failure = await passFails({ ...harness, dependencies: { ...harness.dependencies, ...realTime, userAssignedIdentityReader: reader } });
    expect(callsOfB).toBe(2);
    expect(failure).toBeInstanceOf(AzureAccessError);
    expect(failure.message).toContain("all 2 identity lookups failed the same transient way (ServerError: ServiceUnavailable (HTTP 503): busy)");
    expect(harness.store.patches()).toHaveLength(0);
    expect(JSON.stringify(harness.store.get(location.partitionKey, location.documentId))).toBe(before);
  });

  it("failures of different transient classes are recorded per identity, IDs kept", async () => {
    const harness = createHarness({
      documents: [storedDocument()],
      identities: { [identityA]: { error: restError("ServiceUnavailable", 503, "busy") }, [identityB]: { error: restError("TooManyRequests", 429, "slow") } },
    });
    const failure = await passFails(harness);
    expect(failure).toBeInstanceOf(UserAssignedIdentityReadError);
    const identities = (subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as JsonObject).identities as JsonObject;
    expect(identities[keyA]).toEqual({
      resourceID: identityA,
      clientId: "a-client",
      principalId: "a-principal",
      retrievalError: "ServiceUnavailable (HTTP 503): busy",
    });
    expect(identities[identityB.toLowerCase()]).toEqual({ ...bWithIds, retrievalError: "TooManyRequests (HTTP 429): slow" });
  });

  it("404: records NotFound as data and does not fail", async () => {
    const harness = harnessWith({ error: restError("ResourceNotFound", 404, "gone") });
    const desired = desiredIdentitySet({ a: identityA, b: identityB }).identities;
    declareInClusterDocument(harness, [identityA, identityB]);
    const result = await syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired, force: false });
    expect(result.failures).toEqual([]);
    expect(
      ((subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as JsonObject).identities as JsonObject)[identityB.toLowerCase()],
    ).toEqual({
      resourceID: identityB,
      retrievalError: "ResourceNotFound (HTTP 404): gone",
    });
  });
});

describe("a global failure in a refresh", () => {
  it("fails with AzureAccessError instead of reporting drift, and writes nothing", async () => {
    const harness = harnessWith({ error: named("CredentialUnavailableError", "no token") });
    const known = { identities: { [keyA]: { resourceID: identityA, clientId: "a-client", principalId: "a-principal" } } };
    const failure = await refreshManagedIdentityStatus(harness.dependencies, parsedCluster(), known).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(failure).toBeInstanceOf(AzureAccessError);
    expect(harness.store.patches()).toHaveLength(0);
  });

  it("still reports a 403 on one identity as drift", async () => {
    const harness = harnessWith({ error: restError("AuthorizationFailed", 403, "no access") });
    const stored = subtreeOf(harness.store.get(location.partitionKey, location.documentId)) as never;
    const result = await refreshManagedIdentityStatus(harness.dependencies, parsedCluster(), stored);
    expect(result.drift).toEqual([`identity ${identityB.toLowerCase()}: lookup now fails in Azure with AuthorizationFailed (HTTP 403)`]);
  });
});
