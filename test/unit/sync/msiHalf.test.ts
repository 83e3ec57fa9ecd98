/**
 * The MSI half of a pass, a refresh and a delete (resources/core/msiManagedIdentities.ts, resources/sync/azureAnswers.ts, refreshManagedIdentityStatus.ts) at the
 * sync seam, with the real decision code and fakes for the store and the answer: upstream's gate,
 * one answer for every identity, nothing written of this half without a complete answer (the other
 * half still written), a conflict decided again, drift shown by refresh, and a delete that keeps
 * what someone else wrote.
 */
import { describe, expect, it } from "vitest";
import type { MsiAnswerSource } from "../../../resources/azure/managedIdentitiesDataPlane";
import { standInMsiAnswers } from "../../../resources/azure/managedIdentitiesDataPlane";
import type { JsonObject } from "../../../resources/core/json";
import { msiFingerprintOf } from "../../../resources/core/msiOutputs";
import { refreshManagedIdentityStatus } from "../../../resources/sync/refreshManagedIdentityStatus";
import { partialResultOf, syncManagedIdentityStatus } from "../../../resources/sync/syncManagedIdentityStatus";
import type { IdentityScript } from "../../fakes/scriptedUserAssignedIdentityReader";
import { resourceNotFoundError, restError } from "../../fakes/scriptedUserAssignedIdentityReader";
import type { Harness } from "../../fakes/syncHarness";
import { createHarness, parsedCluster, standInIds } from "../../fakes/syncHarness";
import { buildServiceProviderClusterDocument, identityResourceId, locationOf } from "../../fixtures/documents";
import { msiHalf } from "../../../resources/core/msiManagedIdentities";

const location = locationOf();
const controlPlane = identityResourceId("cp-control-plane");
const clusterApi = identityResourceId("cp-cluster-api-azure");
const smi = identityResourceId("service-managed-identity");
const after = (hours: number): Date => new Date(Date.parse("2026-08-15T01:02:03Z") + hours * 3_600_000);

/** An answer source that records each request and answers with `answer` (or fails with `failure`). */
function recordingAnswers(
  answer: MsiAnswerSource = standInMsiAnswers({ ...standInIds, overwriteAllowed: true }),
  failure?: Error,
): MsiAnswerSource & { requests: string[][] } {
  const requests: string[][] = [];
  return {
    requests,
    answer(identityUrl, identityIds, options) {
      requests.push([...identityIds]);
      return failure === undefined ? answer.answer(identityUrl, identityIds, options) : Promise.reject(failure);
    },
  };
}

function harnessWith(msiAnswers: MsiAnswerSource | "arm", identities: Readonly<Record<string, IdentityScript>> = {}): Harness {
  return createHarness({ documents: [buildServiceProviderClusterDocument()], msiAnswers, identities });
}

const documentOf = (harness: Harness): JsonObject => harness.store.get(location.partitionKey, location.documentId) as JsonObject;
const msiOf = (harness: Harness) => msiHalf.read(documentOf(harness)).status;
const pass = (harness: Harness, forceMsi = false) =>
  syncManagedIdentityStatus(harness.dependencies, { cluster: parsedCluster(), desired: undefined, force: false, forceMsi });

describe("the MSI half of a pass", () => {
  it("asks nothing inside its recheck window, then asks once for every identity and writes the answer", async () => {
    const answers = recordingAnswers();
    const harness = harnessWith(answers);
    await pass(harness);
    expect(answers.requests).toEqual([]);
    harness.clock.set(after(1));
    const result = await pass(harness);
    expect(answers.requests).toEqual([[clusterApi, controlPlane, smi]]);
    expect(result.msiWorkReason).toBe("recheckDue");
    const msi = msiOf(harness);
    expect(msi.serviceManagedIdentity).toEqual({ resourceId: smi, ...standInIds });
    expect(msi.controlPlaneOperatorsIdentities?.[controlPlane.toLowerCase()]).toEqual({ resourceId: controlPlane, ...standInIds });
    expect(Date.parse(msi.earliestRecheckTime ?? "")).toBeGreaterThan(after(12).getTime());
  });

  it("writes nothing of this half when the answer cannot be had, says so, and still writes the other half", async () => {
    const failure = Object.assign(new Error("the Managed Identities data plane at dp.example answered HTTP 503 (ServiceUnavailable: busy)"), {
      statusCode: 503,
    });
    const harness = harnessWith(recordingAnswers(undefined, failure));
    harness.clock.set(after(1));
    const before = msiOf(harness);
    const error = (await pass(harness).catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ name: "MsiIdentitiesError" });
    expect(error.message).toMatch(/^the Managed Identities data plane .* answered HTTP 503.*nothing of status\.msiManagedIdentities was written/);
    expect(msiOf(harness)).toEqual(before);
    // The data plane operators' half (due too, with an empty set) was written beside it.
    expect(partialResultOf(error)?.wrote).toBe(true);
  });

  it("writes nothing of an answer that misses an identity it asked for", async () => {
    const partial: MsiAnswerSource = {
      answer: (_url, ids) => Promise.resolve(ids.slice(1).map((resourceId) => ({ resourceId, clientId: "c", objectId: "p" }))),
    };
    const harness = harnessWith(partial);
    harness.clock.set(after(1));
    const before = msiOf(harness);
    await expect(pass(harness)).rejects.toThrow(/the answer holds nothing for \S+cp-cluster-api-azure\b/);
    expect(msiOf(harness)).toEqual(before);
  });

  it("in processCredential mode reads every identity through ARM: a 404 is the data plane's null, any other failure writes nothing", async () => {
    const harness = harnessWith("arm", {
      [clusterApi]: { error: resourceNotFoundError(clusterApi) },
      [controlPlane]: { values: { clientId: "cp-c", principalId: "cp-p" } },
      [smi]: { values: { clientId: "smi-c", principalId: "smi-p" } },
    });
    harness.clock.set(after(1));
    await pass(harness);
    expect(msiOf(harness).controlPlaneOperatorsIdentities).toEqual({
      [clusterApi.toLowerCase()]: { resourceId: clusterApi },
      [controlPlane.toLowerCase()]: { resourceId: controlPlane, clientId: "cp-c", principalId: "cp-p" },
    });
    const failing = harnessWith("arm", {
      [clusterApi]: { values: { clientId: "x", principalId: "y" } },
      [controlPlane]: { error: restError("InternalServerError", 500, "boom") },
      [smi]: { values: { clientId: "smi-c", principalId: "smi-p" } },
    });
    failing.clock.set(after(1));
    const before = msiOf(failing);
    await expect(pass(failing)).rejects.toThrow(
      /^InternalServerError \(HTTP 500\): .*, reading .*cp-control-plane through Azure Resource Manager\. .*nothing of status\.msiManagedIdentities was written/,
    );
    expect(msiOf(failing)).toEqual(before);
  });

  it("after a conflict, writes nothing of this half over a current one another writer left", async () => {
    const harness = harnessWith(recordingAnswers());
    harness.clock.set(after(1));
    const theirs = "2026-08-16T00:00:00Z";
    harness.store.beforeNextPatch(location.documentId, (store) => {
      store.mutate(location.partitionKey, location.documentId, (document) => {
        ((document.properties as JsonObject).status as JsonObject).msiManagedIdentities = {
          ...(((document.properties as JsonObject).status as JsonObject).msiManagedIdentities as JsonObject),
          earliestRecheckTime: theirs,
        };
      });
    });
    await pass(harness);
    expect(msiOf(harness).earliestRecheckTime).toBe(theirs);
    expect(msiOf(harness).serviceManagedIdentity?.clientId).not.toBe(standInIds.clientId);
  });
});

describe("the MSI half of a refresh", () => {
  it("shows a change in Cosmos as drift without asking, and a change in Azure once the recheck is due", async () => {
    const answers = recordingAnswers();
    const harness = harnessWith(answers);
    const recorded = msiOf(harness);
    const known = () => ({ status: recorded, fingerprint: msiFingerprintOf(recorded) });
    harness.store.mutate(location.partitionKey, location.documentId, (document) => {
      (
        ((document.properties as JsonObject).status as JsonObject).msiManagedIdentities as { serviceManagedIdentity: JsonObject }
      ).serviceManagedIdentity.clientId = "tampered";
    });
    const inWindow = await refreshManagedIdentityStatus(harness.dependencies, parsedCluster(), {}, known);
    expect(inWindow.drift).toEqual(["msiManagedIdentities: the service managed identity changed in Cosmos"]);
    expect(answers.requests).toEqual([]);
    harness.clock.set(after(1));
    const due = await refreshManagedIdentityStatus(harness.dependencies, parsedCluster(), {}, known);
    expect(due.drift).toContain("msiManagedIdentities: the service managed identity changed in Cosmos");
    expect(due.drift).toContain("msiManagedIdentities: the service managed identity: clientId and principalId changed in Azure");
    expect(due.drift).toContain(
      `msiManagedIdentities: control plane operator identity ${controlPlane.toLowerCase()}: clientId and principalId changed in Azure`,
    );
    expect(answers.requests).toHaveLength(1);
    expect(harness.store.patches()).toHaveLength(0);
  });
});

describe("fixedIdentity over real IDs (issue 44 item 8)", () => {
  /** The stand-in as the fixedIdentity adapters build it: overwriting refused unless allowed. */
  const standIn = (overwriteAllowed: boolean) => standInMsiAnswers({ ...standInIds, overwriteAllowed });

  it("refuses the half of a document whose stored IDs are not the stand-in's, naming them and the setting, with nothing asked or written", async () => {
    const source = standIn(false);
    const answers = { ...recordingAnswers(source), standIn: source.standIn };
    const harness = harnessWith(answers);
    harness.clock.set(after(1));
    const before = structuredClone(msiOf(harness));
    const error = (await pass(harness).catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ name: "MsiIdentitiesError" });
    expect(error.message).toContain("credentialMode fixedIdentity would write the fixed identity's IDs over 3 stored identities whose IDs are not its own");
    expect(error.message).toContain("'aro-hcp-identity-status:allowFixedIdentityOverwrite' (or ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE)");
    for (const identity of [controlPlane, clusterApi, smi]) expect(error.message).toContain(identity);
    expect(answers.requests).toEqual([]);
    // This half as it was; the data plane operators' half is decided on its own.
    expect(msiOf(harness)).toEqual(before);
  });

  it("writes the stand-in's IDs over them when allowFixedIdentityOverwrite says so", async () => {
    const source = standIn(true);
    const harness = harnessWith(source);
    harness.clock.set(after(1));
    await pass(harness);
    expect(msiOf(harness).serviceManagedIdentity).toEqual({ resourceId: smi, ...standInIds });
  });

  it("rechecks a half that holds only the stand-in's IDs, or none, as before", async () => {
    const harness = harnessWith(standIn(true));
    harness.clock.set(after(1));
    await pass(harness);
    // From now on the stored IDs are the stand-in's own: the guard lets every later recheck through.
    const guarded = createHarness({ documents: [documentOf(harness)], msiAnswers: standIn(false) });
    guarded.clock.set(after(20));
    const result = await pass(guarded);
    expect(result.msiWorkReason).toBe("recheckDue");
    expect(Date.parse(msiOf(guarded).earliestRecheckTime ?? "")).toBeGreaterThanOrEqual(after(20 + 12).getTime());
    // An empty half (a cluster new to the fleet) holds nothing to protect.
    const empty = structuredClone(documentOf(harness));
    ((empty.properties as JsonObject).status as JsonObject).msiManagedIdentities = {};
    const fresh = createHarness({ documents: [empty], msiAnswers: standIn(false) });
    await pass(fresh);
    expect(msiOf(fresh).serviceManagedIdentity).toEqual({ resourceId: smi, ...standInIds });
  });
});

describe("processCredential beside upstream's stand-in: no turns taken (issue 54 item 3)", () => {
  const armIdentities = Object.fromEntries(
    [controlPlane, clusterApi, smi].map((id, index) => [id, { values: { clientId: `arm-client-${index}`, principalId: `arm-principal-${index}` } }]),
  );

  it("refuses to write ARM's IDs over a half upstream's stand-in recorded, naming the setting and the mode to run, with nothing read or written", async () => {
    // Upstream's stand-in wrote the half: one fixed identity's IDs for every identity.
    const stand = harnessWith(standInMsiAnswers({ ...standInIds, overwriteAllowed: true }));
    stand.clock.set(after(1));
    await pass(stand);
    const recorded = structuredClone(documentOf(stand));
    expect(msiOf(stand).serviceManagedIdentity).toEqual({ resourceId: smi, ...standInIds });

    // Its recheck comes due, and the hook in processCredential mode gets there first.
    const hook = createHarness({ documents: [recorded], msiAnswers: "arm", identities: armIdentities });
    hook.clock.set(after(20));
    const error = (await pass(hook, true).catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ name: "MsiIdentitiesError" });
    expect(error.message).toContain("credentialMode processCredential would write the IDs ARM gives its own credential over 3 stored identities");
    expect(error.message).toContain("run credentialMode fixedIdentity with its identity");
    expect(error.message).toContain("allowFixedIdentityOverwrite");
    expect(msiOf(hook)).toEqual(msiHalf.read(recorded).status);
  });

  it("writes ARM's IDs over the stand-in's for the one update that allows it, and rechecks its own half as before", async () => {
    const stand = harnessWith(standInMsiAnswers({ ...standInIds, overwriteAllowed: true }));
    stand.clock.set(after(1));
    await pass(stand);
    const allowed = createHarness({
      documents: [documentOf(stand)],
      msiAnswers: "arm",
      identities: armIdentities,
      syncOptions: { allowFixedIdentityOverwrite: true },
    });
    allowed.clock.set(after(20));
    await pass(allowed, true);
    expect(msiOf(allowed).serviceManagedIdentity).toEqual({ resourceId: smi, clientId: "arm-client-2", principalId: "arm-principal-2" });
    // Real IDs from here on: the guard lets every later recheck through.
    const guarded = createHarness({ documents: [documentOf(allowed)], msiAnswers: "arm", identities: armIdentities });
    guarded.clock.set(after(40));
    expect((await pass(guarded)).msiWorkReason).toBe("recheckDue");
  });
});
