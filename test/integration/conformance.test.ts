/**
 * The conformance suite: upstream ARO-HCP's own credential chain, in Go, with the modules its
 * backend pins (tools/conformance), against a per-cluster sandbox seeded with the demo fleet
 * (subscriptions in two tenants), after the hook recorded every cluster in
 * clusterServiceManagedIdentity mode through the provider seam with the real SDK clients.
 *
 * - Upstream's client reads the identities the hook recorded in Cosmos, with the same clientId and
 *   principalId, and the control plane operator identities and SMI from one data plane request;
 *   both halves as recorded decode and encode byte for byte with Go types that mirror upstream's
 *   (tools/go-vectors: a mirror of ARO-HCP's types, not an import).
 * - What must be refused is refused as real Azure refuses it.
 * - The data plane's answers in another order and casing, with a deleted identity's nulls and a
 *   challenge in another tenant, are read by upstream's client.
 * - The hook's requests equal upstream's client's, as the sandbox recorded them, with one
 *   deliberate difference: a challenge naming another tenant than the identity URL's tid, which
 *   upstream's client follows, the hook refuses without asking for a token.
 *
 * The Go program is built once into .cache/conformance (tools/build-go-tool.sh conformance) and reused
 * while its sources do not change.
 */
import { expectStateKeptWithFailure } from "../fixtures/storedDocument";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialModeSettings } from "../../cli/sandboxSettings";
import type { JsonObject } from "../../resources/core/json";
import { createManagedIdentityStatusProvider } from "../../resources/provider/managedIdentityStatusProvider";
import { sandboxDescription } from "../../sandbox/endpointsFile";
import type { RecordedRequest } from "../../sandbox/requestRecorder";
import { type Sandbox, startSandbox } from "../../sandbox/sandbox";
import { type FleetClusterDescription, seedDemoFleet } from "../../sandbox/seed";

const run = promisify(execFile);
const projectDirectory = resolve(__dirname, "..", "..");

interface IdentityRead {
  resourceId: string;
  clientId: string | null;
  principalId: string | null;
  error?: { statusCode?: number; code?: string; message: string };
}
interface ConformanceResult {
  modules: Record<string, string>;
  deviations: string[];
  clusters: Array<{
    clusterResourceId: string;
    dataPlaneOperators: Record<string, IdentityRead>;
    controlPlaneOperators: Record<string, IdentityRead>;
    serviceManagedIdentity?: IdentityRead;
    errors?: string[];
  }>;
  refusals?: Array<{ description: string; expected: string; statusCode: number; code?: string; wwwAuthenticate?: string; error?: string; passed: boolean }>;
  passed: boolean;
}

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let directory: string;
let program: string;
/** The tools/go-vectors binary: Go types mirroring upstream's decode and encode a document's status halves. */
let goVectors: string;
let endpointsPath: string;
let hookRequests: RecordedRequest[];
let goRequests: RecordedRequest[];
let chainResult: ConformanceResult;
let provider: ReturnType<typeof createManagedIdentityStatusProvider>;
let providerConfig: Record<string, string>;
let hookOutcomes: string[];

/** Runs a command with `input` on its standard input; its standard output. */
function runWithInput(command: string, args: readonly string[], cwd: string, input: string): Promise<{ stdout: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = execFile(command, [...args], { cwd, env: { ...process.env, GOTOOLCHAIN: "local" }, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${command} ${args.join(" ")}: ${stderr}`));
      else resolvePromise({ stdout });
    });
    child.stdin?.end(input);
  });
}

/** Runs the conformance program against the sandbox; its JSON result, whether it passed or not. */
async function conformance(...flags: string[]): Promise<ConformanceResult> {
  const out = join(directory, `result-${Date.now()}.json`);
  await run(program, ["-endpoints", endpointsPath, "-out", out, ...flags], { timeout: 120_000 }).catch((error: { code?: number }) => {
    // Exit 1: the result names what failed; anything else is the program failing.
    if (error.code !== 1) throw error;
  });
  return JSON.parse(readFileSync(out, "utf8")) as ConformanceResult;
}

function serviceProviderCluster(cluster: FleetClusterDescription): JsonObject {
  const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
  return (document.properties as JsonObject).status as JsonObject;
}

beforeAll(async () => {
  const built = await run("bash", [join(projectDirectory, "tools", "build-go-tool.sh"), "conformance"], { timeout: 600_000 });
  program = built.stdout.trim().split("\n").pop() ?? "";
  const builtVectors = await run("bash", [join(projectDirectory, "tools", "build-go-tool.sh"), "go-vectors"], { timeout: 600_000 });
  goVectors = builtVectors.stdout.trim().split("\n").pop() ?? "";
  directory = mkdtempSync(join(tmpdir(), "conformance-"));
  sandbox = await startSandbox({ perClusterCredentials: true, certificateDirectory: join(directory, "sandbox") });
  fleet = seedDemoFleet(sandbox);
  endpointsPath = join(directory, "sandbox", "endpoints.json");
  writeFileSync(endpointsPath, JSON.stringify(sandboxDescription(sandbox, sandbox.caBundlePath ?? "", join(directory, "clusters.json"), fleet)), {
    mode: 0o600,
  });

  // The hook, as a user configures production's mode: each cluster read as its own SMI.
  providerConfig = {
    cosmosEndpoint: sandbox.endpoints.cosmos,
    cosmosDatabase: sandbox.database,
    cosmosKey: sandbox.cosmosKey,
    armEndpoint: sandbox.endpoints.arm,
    tlsCaFile: sandbox.caBundlePath ?? "",
    documentWaitSeconds: "1",
    lookupTimeoutSeconds: "10",
    ...credentialModeSettings(sandbox.credentialChain),
  };
  provider = createManagedIdentityStatusProvider({ config: { get: (key) => providerConfig[key] } });
  sandbox.recorder.start();
  const outcomes = await Promise.allSettled(fleet.map((cluster) => provider.create({ clusterResourceId: cluster.clusterResourceId })));
  hookRequests = sandbox.recorder.snapshot().requests;
  hookOutcomes = outcomes.map((outcome) => (outcome.status === "rejected" ? String(outcome.reason) : "recorded"));

  // Upstream's chain alone, recorded the same way.
  sandbox.recorder.start();
  chainResult = await conformance("-refusals=false");
  goRequests = sandbox.recorder.snapshot().requests;
  sandbox.recorder.stop();
}, 600_000);

afterAll(async () => {
  await sandbox?.stop();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

describe("upstream's Go client against the sandbox", () => {
  it("is built from the modules ARO-HCP's backend pins, and reads every identity the hook recorded, with the same clientId and principalId", () => {
    expect(chainResult.modules).toMatchObject({
      "github.com/Azure/msi-dataplane": "v0.4.3",
      "github.com/Azure/azure-sdk-for-go/sdk/azidentity": "v1.13.1",
      "github.com/AzureAD/microsoft-authentication-library-for-go": "v1.7.2",
      "github.com/Azure/azure-sdk-for-go/sdk/azcore": "v1.21.1",
      "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/msi/armmsi": "v1.3.0",
    });
    expect(chainResult.clusters.flatMap((cluster) => cluster.errors ?? [])).toEqual([]);
    expect(chainResult.passed).toBe(true);
    expect(hookOutcomes, "the hook's create of each cluster").toEqual(fleet.map(() => "recorded"));
    for (const cluster of fleet) {
      const read = chainResult.clusters.find((entry) => entry.clusterResourceId === cluster.clusterResourceId);
      const recorded = ((serviceProviderCluster(cluster).dataPlaneOperatorsManagedIdentities as JsonObject).identities ?? {}) as Record<string, JsonObject>;
      const uniqueIds = [...new Set(Object.values(cluster.dataPlaneOperators).map((id) => id.toLowerCase()))].sort();
      expect(Object.keys(read?.dataPlaneOperators ?? {}).sort(), cluster.clusterResourceId).toEqual(uniqueIds);
      expect(Object.keys(recorded).sort(), cluster.clusterResourceId).toEqual(uniqueIds);
      for (const id of uniqueIds) {
        const goRead = read?.dataPlaneOperators[id];
        const stored = recorded[id] ?? {};
        if (cluster.missingIdentities.some((missing) => missing.toLowerCase() === id)) {
          // Both saw ARM's 404 for the identity that does not exist.
          expect(goRead?.error).toMatchObject({ statusCode: 404, code: "ResourceNotFound" });
          expect(stored.clientId ?? null, id).toBeNull();
          expect(JSON.stringify(stored.retrievalError)).toContain("ResourceNotFound");
        } else {
          expect(goRead?.clientId, id).toBeTruthy();
          expect({ clientId: goRead?.clientId, principalId: goRead?.principalId }, id).toEqual({ clientId: stored.clientId, principalId: stored.principalId });
        }
      }
      // The control plane operator identities and the SMI, from one data plane request: what the
      // identities hold, and what the document's msiManagedIdentities holds (the hook's half, where it keeps it).
      const controlPlaneIds = [...new Set(Object.values(cluster.controlPlaneOperators ?? {}).map((id) => id.toLowerCase()))].sort();
      expect(Object.keys(read?.controlPlaneOperators ?? {}).sort()).toEqual(controlPlaneIds);
      const msi = serviceProviderCluster(cluster).msiManagedIdentities as JsonObject;
      const storedControlPlane = (msi.controlPlaneOperatorsIdentities ?? {}) as Record<string, JsonObject>;
      for (const id of [...controlPlaneIds, cluster.serviceManagedIdentity.toLowerCase()]) {
        const identity = sandbox.identities.get(id);
        const isSmi = id === cluster.serviceManagedIdentity.toLowerCase();
        const goRead = isSmi ? read?.serviceManagedIdentity : read?.controlPlaneOperators[id];
        const stored = (isSmi ? msi.serviceManagedIdentity : storedControlPlane[id]) as JsonObject | undefined;
        expect({ clientId: goRead?.clientId, principalId: goRead?.principalId }, id).toEqual({
          clientId: identity?.clientId,
          principalId: identity?.principalId,
        });
        expect({ clientId: stored?.clientId, principalId: stored?.principalId }, `${id} in msiManagedIdentities`).toEqual({
          clientId: goRead?.clientId,
          principalId: goRead?.principalId,
        });
      }
    }
  });

  it("writes both halves of the status as Go types mirroring upstream's decode and encode them, byte for byte (no field of its own: the decode is strict)", async () => {
    for (const cluster of fleet) {
      const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
      const { stdout } = await runWithInput(goVectors, ["-decode"], projectDirectory, JSON.stringify(document));
      const decoded = JSON.parse(stdout) as { msiManagedIdentities: JsonObject; dataPlaneOperatorsManagedIdentities: JsonObject };
      const status = serviceProviderCluster(cluster);
      // Byte for byte in field order, as Go's encoder wrote the same values.
      expect(JSON.stringify(decoded.msiManagedIdentities), cluster.clusterResourceId).toBe(JSON.stringify(status.msiManagedIdentities));
      expect(JSON.stringify(decoded.dataPlaneOperatorsManagedIdentities), cluster.clusterResourceId).toBe(
        JSON.stringify(status.dataPlaneOperatorsManagedIdentities),
      );
    }
  });

  it("writes nothing over a status as upstream's controllers leave it: a new stack adopting the fleet changes no document, etag included", async () => {
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
    for (const cluster of fleet) {
      // What a typed Replace of upstream's leaves: both halves as Go encodes them, with a recheck time of its own.
      const document = sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId) as JsonObject;
      const { stdout } = await runWithInput(goVectors, ["-decode"], projectDirectory, JSON.stringify(document));
      const decoded = JSON.parse(stdout) as { msiManagedIdentities: JsonObject; dataPlaneOperatorsManagedIdentities: JsonObject };
      for (const [half, value] of Object.entries(decoded)) {
        sandbox.documents.patch(cluster.partitionKey, cluster.serviceProviderClusterDocumentId, `/properties/status/${half}`, {
          ...value,
          earliestRecheckTime: inAnHour,
        });
      }
    }
    const before = fleet.map((cluster) => structuredClone(sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId)));
    const requestsBefore = sandbox.statistics.snapshot();
    // A provider of a new stack: no state, every cluster created.
    const adopting = createManagedIdentityStatusProvider({ config: { get: (key) => providerConfig[key] } });
    await Promise.all(fleet.map((cluster) => adopting.create({ clusterResourceId: cluster.clusterResourceId })));
    expect(fleet.map((cluster) => sandbox.documents.read(cluster.partitionKey, cluster.serviceProviderClusterDocumentId))).toEqual(before);
    const requestsAfter = sandbox.statistics.snapshot();
    expect(requestsAfter.cosmos.documentWritesByMethod).toEqual(requestsBefore.cosmos.documentWritesByMethod);
    expect([requestsAfter.dataPlane.requests, requestsAfter.arm.getRequests]).toEqual([requestsBefore.dataPlane.requests, requestsBefore.arm.getRequests]);
  });

  it("is refused what real Azure refuses: no token, another cluster's SMI, another cluster's identities, a token of the wrong tenant at ARM", async () => {
    const result = await conformance();
    const [first, second, third] = fleet as [FleetClusterDescription, FleetClusterDescription, FleetClusterDescription];
    const chain = sandbox.credentialChain;
    expect(result.refusals).toEqual([
      // The challenge names the cluster's own tenant, as its identity URL does (tid).
      expect.objectContaining({
        statusCode: 401,
        wwwAuthenticate: `Bearer authorization="${chain.entraAuthorityHost}/${first.tenantId ?? ""}"`,
        passed: true,
      }),
      expect.objectContaining({ statusCode: 404, code: "NotFound", passed: true }),
      expect.objectContaining({
        description: `${second.clusterResourceId}'s identity read with ${first.clusterResourceId}'s SMI token`,
        statusCode: 403,
        code: "AuthorizationFailed",
        passed: true,
      }),
      expect.objectContaining({
        description: `${third.clusterResourceId}'s identity read with ${first.clusterResourceId}'s SMI token`,
        statusCode: 401,
        code: "InvalidAuthenticationTokenTenant",
        wwwAuthenticate: `Bearer authorization_uri="${chain.entraAuthorityHost}/${third.tenantId ?? ""}", error="invalid_token", error_description="The access token is from the wrong issuer."`,
        passed: true,
      }),
    ]);
    expect(result.passed).toBe(true);
  });

  it("reads answers in another order and casing, a deleted identity's nulls, and follows a challenge in another tenant", async () => {
    const [first, , third] = fleet as [FleetClusterDescription, FleetClusterDescription, FleetClusterDescription];
    const [deleted] = Object.values(first.controlPlaneOperators ?? {}) as [string];
    const identity = sandbox.identities.get(deleted);
    const challengeTenant = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
    sandbox.credentials.answerVariation = { shuffleOrder: true, changeResourceIdCasing: true };
    sandbox.credentials.setChallengeTenant(challengeTenant, [third.clusterResourceId]);
    sandbox.identities.delete(deleted);
    sandbox.recorder.start();
    try {
      const result = await conformance("-refusals=false");
      expect(result.clusters.flatMap((cluster) => cluster.errors ?? [])).toEqual([]);
      const firstRead = result.clusters.find((cluster) => cluster.clusterResourceId === first.clusterResourceId);
      expect(firstRead?.controlPlaneOperators[deleted.toLowerCase()]).toEqual({ resourceId: deleted.toLowerCase(), clientId: null, principalId: null });
      expect(firstRead?.serviceManagedIdentity?.clientId).toBe(first.serviceManagedIdentityClientId);
      // The first party got its token for cluster three in the tenant the challenge named.
      const thirdPath = new URL(third.identityUrl ?? "").pathname;
      const authorized = sandbox.recorder
        .snapshot()
        .requests.filter((entry) => entry.target === "dataPlane" && entry.path === thirdPath && entry.status === 200);
      expect(authorized.map((entry) => entry.token?.tenantId)).toEqual([challengeTenant, challengeTenant]);
    } finally {
      sandbox.recorder.stop();
      sandbox.credentials.answerVariation = { shuffleOrder: false, changeResourceIdCasing: false };
      sandbox.credentials.setChallengeTenant(third.tenantId ?? "", [third.clusterResourceId]);
      sandbox.identities.create(deleted, { clientId: identity?.clientId ?? "", principalId: identity?.principalId ?? "", tenantId: identity?.tenantId ?? "" });
    }
  });
});

/** What must be equal of a request, per target, in a form that compares across clients. */
function comparable(entry: RecordedRequest): Record<string, unknown> {
  const common = { method: entry.method, path: entry.path, query: entry.query, contentType: entry.contentType, status: entry.status };
  const token = entry.token === undefined ? undefined : { audience: entry.token.audience, tenantId: entry.token.tenantId, clientId: entry.token.clientId };
  if (entry.target === "dataPlane") return { ...common, body: entry.body, token };
  if (entry.target === "arm") return { ...common, token };
  // A token request as Entra reads it. MSAL for Node (under @azure/identity, which the hook uses)
  // and MSAL for Go write two things differently that Entra reads alike, and that neither the hook
  // nor upstream chooses: the content type's spacing before `charset`, and the OpenID scopes MSAL
  // for Go adds (Entra ignores them in client credentials). Those two are compared as Entra reads them.
  const form = entry.form;
  return {
    method: entry.method,
    path: entry.path,
    contentType: entry.contentType?.split(";")[0]?.trim().toLowerCase(),
    status: entry.status,
    grantType: form?.grant_type,
    clientId: form?.client_id,
    assertionType: form?.client_assertion_type,
    scope: form?.scope
      ?.split(" ")
      .filter((scope) => !["openid", "offline_access", "profile", "email"].includes(scope))
      .sort(),
    assertion: form?.assertionHeader === undefined ? undefined : { alg: form.assertionHeader.alg, x5cCertificates: form.assertionHeader.x5cCertificates },
    // An SMI's token for ARM is the hook's own request (assertionTokenCredential.ts), not MSAL for
    // Node's: it is compared whole, as Entra receives it from upstream's client.
    ...(isArmTokenRequest(entry) ? smiTokenRequest(entry) : {}),
  };
}

function isArmTokenRequest(entry: RecordedRequest): boolean {
  // The first party asks for the data plane's audience; every other token of the chain is an SMI's for ARM.
  const dataPlaneScope = `${sandbox.credentialChain.dataPlaneAudience.replace(/\/+$/, "")}/.default`;
  return entry.target === "entra" && entry.method === "POST" && !(entry.form?.scope ?? "").split(" ").includes(dataPlaneScope);
}

/** What an SMI's token request sends besides the fields every token request is compared on. */
function smiTokenRequest(entry: RecordedRequest): Record<string, unknown> {
  const form = entry.form;
  const header = form?.assertionHeader;
  return {
    fields: form?.fields,
    rawScope: form?.scope,
    claims: form?.claims,
    clientInfo: form?.client_info,
    contentTypeAsSent: entry.contentType,
    assertionHeader: header === undefined ? undefined : { fields: header.fields, typ: header.typ, claimNames: header.claimNames },
    // Standard base64 with padding (MSAL for Go), which Entra reads as base64url does.
    thumbprintEncoding: header?.["x5t#S256"] === undefined ? undefined : /[+/=]/.test(header["x5t#S256"]) ? "base64" : "base64url-or-either",
  };
}

/** The requests of the data plane operators' chain (the SMI's credential, tokens, ARM reads), in a stable order. */
function chainRequests(requests: readonly RecordedRequest[], target: RecordedRequest["target"]): Array<Record<string, unknown>> {
  const smis = new Set(fleet.map((cluster) => cluster.serviceManagedIdentity.toLowerCase()));
  return requests
    .filter((entry) => entry.target === target && !(entry.target === "entra" && entry.method === "GET"))
    .filter((entry) => {
      if (target !== "dataPlane") return true;
      const ids = (entry.body as { identityIds?: string[] } | undefined)?.identityIds ?? [];
      return ids.length === 1 && smis.has(ids[0]?.toLowerCase() ?? "");
    })
    .map(comparable)
    .sort((left, right) => JSON.stringify(left).localeCompare(JSON.stringify(right)));
}

describe("the hook's requests against upstream's client's, as the sandbox received them", () => {
  it("asks the data plane for each SMI's credential exactly as msi-dataplane v0.4.3 does", () => {
    expect(chainRequests(hookRequests, "dataPlane")).toEqual(chainRequests(goRequests, "dataPlane"));
  });

  it("asks the data plane for each cluster's control plane operator identities and SMI in one request, as FetchMSIIdentitiesInfo does", () => {
    // Upstream builds identityIds from a Go map (random order; of two operators sharing an identity
    // in different casing, either spelling comes first), so the IDs are compared as a set, lowercased.
    const msiRequests = (requests: readonly RecordedRequest[]): Array<Record<string, unknown>> =>
      requests
        .filter((entry) => entry.target === "dataPlane" && ((entry.body as { identityIds?: string[] } | undefined)?.identityIds?.length ?? 0) > 1)
        .map((entry) => {
          const ids = (entry.body as { identityIds: string[] }).identityIds;
          return { ...comparable(entry), body: { identityIds: ids.map((id) => id.toLowerCase()).sort() } };
        })
        .sort((left, right) => JSON.stringify(left).localeCompare(JSON.stringify(right)));
    const upstream = msiRequests(goRequests);
    expect(upstream).toHaveLength(fleet.length * 2);
    expect(msiRequests(hookRequests)).toEqual(upstream);
  });

  it("asks Entra for the first party's and each SMI's token as azidentity does (form, scope, assertion algorithm and chain)", () => {
    expect(chainRequests(hookRequests, "entra")).toEqual(chainRequests(goRequests, "entra"));
  });

  it("reads each identity at ARM as armmsi does, with the SMI's token", () => {
    expect(chainRequests(hookRequests, "arm")).toEqual(chainRequests(goRequests, "arm"));
  });

  it("refuses a challenge naming another tenant than the identity URL's tid, which upstream's client follows: no token asked there, nothing read or written", async () => {
    const [, , third] = fleet as [FleetClusterDescription, FleetClusterDescription, FleetClusterDescription];
    const challengeTenant = "6e7f8a9b-0c1d-4e2f-a3b4-c5d6e7f8a9b0";
    const path = new URL(third.identityUrl ?? "").pathname.toLowerCase();
    const atThird = (requests: readonly RecordedRequest[]): RecordedRequest[] =>
      requests.filter((entry) => entry.target === "dataPlane" && entry.path.replace(/\/$/, "").toLowerCase() === path);
    sandbox.credentials.setChallengeTenant(challengeTenant, [third.clusterResourceId]);
    try {
      for (const half of ["dataPlaneOperatorsManagedIdentities", "msiManagedIdentities"]) {
        sandbox.documents.patch(
          third.partitionKey,
          third.serviceProviderClusterDocumentId,
          `/properties/status/${half}/earliestRecheckTime`,
          "2000-01-01T00:00:00Z",
        );
      }
      const before = structuredClone(sandbox.documents.read(third.partitionKey, third.serviceProviderClusterDocumentId));
      // A provider of other settings holds no credential yet (the process keeps one adapter set per settings): it asks the data plane.
      const config: Record<string, string> = { ...providerConfig, documentWaitSeconds: "2" };
      const fresh = createManagedIdentityStatusProvider({ config: { get: (key) => config[key] } });
      sandbox.recorder.start();
      const error = (await fresh.create({ clusterResourceId: third.clusterResourceId }).then(
        () => undefined,
        (caught: unknown) => caught,
      )) as (Error & { properties?: unknown }) | undefined;
      const hook = sandbox.recorder.snapshot().requests;
      expect(error?.name).toBe("ClusterCredentialError");
      expect(error?.message).toContain(`challenged for a token in tenant ${challengeTenant}, but the cluster's identity URL`);
      expect(error?.message).toContain(`names tenant ${third.tenantId ?? ""} (its tid)`);
      expectStateKeptWithFailure(error);
      expect(sandbox.documents.read(third.partitionKey, third.serviceProviderClusterDocumentId)).toEqual(before);
      // The hook: the challenge only, no first-party token for that tenant (nor any token, any ARM read).
      expect(atThird(hook).length).toBeGreaterThan(0);
      expect(atThird(hook).map((entry) => [entry.status, entry.token])).toEqual(atThird(hook).map(() => [401, undefined]));
      expect(hook.filter((entry) => entry.target === "entra" && entry.method === "POST")).toEqual([]);
      expect(hook.filter((entry) => entry.target === "arm")).toEqual([]);

      // Upstream's client follows the same challenge: the first party's token of that tenant, and an answer.
      const clustersFile = join(directory, "third.json");
      writeFileSync(clustersFile, JSON.stringify([third]));
      sandbox.recorder.start();
      const result = await conformance("-refusals=false", "-clusters", clustersFile);
      const upstream = atThird(sandbox.recorder.snapshot().requests);
      expect(result.passed).toBe(true);
      expect(upstream.filter((entry) => entry.status === 200).map((entry) => entry.token?.tenantId)).toEqual([challengeTenant, challengeTenant]);
    } finally {
      sandbox.recorder.stop();
      sandbox.credentials.setChallengeTenant(third.tenantId ?? "", [third.clusterResourceId]);
    }
  });
});
