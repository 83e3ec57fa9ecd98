/**
 * The literal CLI: `pulumi up`, `refresh`, `up --expect-no-changes` and `destroy` typed in the
 * project directory, as the README tells a user to. The engine reads the project's Pulumi.yaml,
 * starts the Node.js language host (`pulumi-language-nodejs`, built by tools/build-pulumi-cli.sh),
 * which runs index.ts through the SDK's TypeScript support; the dynamic provider runs in the
 * provider host our shim starts. No Automation API, no wrapper of ours, no ARO_HCP_PROJECT_DIR.
 * Cosmos is read back after each step.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sandbox } from "../../sandbox/sandbox";
import { startSandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { seedFleet, seedNamedCluster } from "../../sandbox/seed";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { engineModule, literalCliEnvironment, runLiteralPulumi } from "./engineHelpers";

interface StoredIdentity {
  readonly clientId?: string;
  readonly principalId?: string;
}
interface StoredDocument {
  readonly properties?: {
    readonly status?: {
      readonly dataPlaneOperatorsManagedIdentities?: { readonly identities?: Record<string, StoredIdentity> };
      readonly msiManagedIdentities?: unknown;
    };
  };
}

const projectDirectory = resolve(__dirname, "..", "..");
const stackName = `literal-cli-${process.pid}`;
const stackFile = join(projectDirectory, `Pulumi.${stackName}.yaml`);

let sandbox: Sandbox;
let fleet: FleetClusterDescription[];
let scratchDirectory: string;
let environment: NodeJS.ProcessEnv;

function pulumi(...args: string[]): Promise<string> {
  return runLiteralPulumi(projectDirectory, environment, stackName, ...args);
}

/** As {@link pulumi}, in a shell without the README's PULUMI_NODEJS_TRANSPILE_ONLY: the engine's default, index.ts type-checked by ts-node. */
function pulumiTypeChecked(...args: string[]): Promise<string> {
  const { PULUMI_NODEJS_TRANSPILE_ONLY: _skipped, ...shell } = environment;
  return runLiteralPulumi(projectDirectory, shell, stackName, ...args);
}

async function storedIdentities(cluster: FleetClusterDescription): Promise<Record<string, StoredIdentity>> {
  const { resource } = await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<StoredDocument>();
  return resource?.properties?.status?.dataPlaneOperatorsManagedIdentities?.identities ?? {};
}

/** The resource name of a cluster's status: its subscription, group and name, lowercased (program/declareFleet.ts). */
function resourceNameOf(cluster: FleetClusterDescription): string {
  const [, , subscription, , resourceGroup, , , , name] = cluster.clusterResourceId.split("/");
  return `${subscription}/${resourceGroup}/${name}`.toLowerCase();
}

/** The names of the cluster resources `pulumi stack export` lists, sorted. */
async function resourceNamesInState(): Promise<string[]> {
  const exported = JSON.parse(await pulumi("stack", "export")) as { deployment: { resources?: Array<{ type: string; urn: string }> } };
  return (exported.deployment.resources ?? [])
    .filter((resource) => resource.type === resourceTypeToken)
    .map((resource) => resource.urn.split("::").pop() ?? "")
    .sort();
}

/** Every cluster's ServiceProviderCluster document as Cosmos holds it, envelope and etag included. */
function documents(): Promise<Array<StoredDocument | undefined>> {
  return Promise.all(
    fleet.map(
      async (cluster) => (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<StoredDocument>()).resource,
    ),
  );
}

async function expectRecorded(cluster: FleetClusterDescription): Promise<void> {
  const identities = await storedIdentities(cluster);
  for (const identityId of Object.values(cluster.dataPlaneOperators)) {
    const expected = sandbox.identities.get(identityId);
    expect(expected?.clientId).toBeTruthy();
    expect(identities[identityId.toLowerCase()], identityId).toMatchObject({ clientId: expected?.clientId, principalId: expected?.principalId });
  }
  // The MSI half: the data plane's answer for the control plane operator identities and the SMI.
  const { resource } = await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<StoredDocument>();
  const msi = resource?.properties?.status?.msiManagedIdentities as
    { controlPlaneOperatorsIdentities?: Record<string, StoredIdentity>; serviceManagedIdentity?: StoredIdentity } | undefined;
  for (const identityId of Object.values(cluster.controlPlaneOperators ?? {})) {
    const expected = sandbox.identities.get(identityId);
    expect(msi?.controlPlaneOperatorsIdentities?.[identityId.toLowerCase()], identityId).toMatchObject({
      clientId: expected?.clientId,
      principalId: expected?.principalId,
    });
  }
  const smi = sandbox.identities.get(cluster.serviceManagedIdentity);
  expect(msi?.serviceManagedIdentity).toMatchObject({ clientId: smi?.clientId, principalId: smi?.principalId });
}

beforeAll(async () => {
  scratchDirectory = realpathSync(mkdtempSync(join(tmpdir(), "aro-hcp-literal-cli-")));
  // Production's credential mode: each cluster read as its own service managed identity, through the data plane.
  sandbox = await startSandbox({ certificateDirectory: join(scratchDirectory, "sandbox-ca"), perClusterCredentials: true });
  fleet = seedFleet(sandbox, { clusters: 2, identitiesPerCluster: 2 });
  const engine = engineModule();
  const command = await engine.engineCommand();
  const { settingsForRunningSandbox } = await import("../../cli/sandboxSettings");
  const settings = settingsForRunningSandbox(sandbox);
  const clustersFile = join(scratchDirectory, "clusters.json");
  writeFileSync(
    clustersFile,
    JSON.stringify(fleet.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }))),
  );
  for (const directory of ["state", "home"]) {
    mkdirSync(join(scratchDirectory, directory));
  }
  // A user's shell: the CLI's bin directory on PATH, their own backend and passphrase, and the
  // sandbox's variables (`source .sandbox/env.sh`). Nothing of the project's wrappers. It follows the
  // README in skipping ts-node's type check of index.ts (npm test has checked it): about 3 s less
  // per engine command here; the first `up` below runs without it, the engine's default.
  environment = literalCliEnvironment(command.root, {
    PULUMI_BACKEND_URL: `file://${join(scratchDirectory, "state")}`,
    PULUMI_HOME: join(scratchDirectory, "home"),
    PULUMI_CONFIG_PASSPHRASE: "literal-cli-test-passphrase",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    ...settings.environment,
  });
  await pulumi("stack", "init");
  for (const [key, value] of Object.entries({ ...settings.config, documentWaitSeconds: "2", clustersFile })) {
    await pulumi("config", "set", `aro-hcp-identity-status:${key}`, value);
  }
}, 300_000);

afterAll(async () => {
  await sandbox?.stop();
  rmSync(stackFile, { force: true });
  if (scratchDirectory !== undefined) {
    rmSync(scratchDirectory, { recursive: true, force: true });
  }
});

describe("the literal pulumi CLI in the project directory (Node.js language host, index.ts)", () => {
  it("runs up, refresh, a no-change up and destroy, with Cosmos read back after each", async () => {
    const up = await pulumiTypeChecked("up", "--yes", "--skip-preview");
    expect(up).toMatch(/\+ 3 created/);
    for (const cluster of fleet) {
      await expectRecorded(cluster);
    }
    // Read in production's mode: per cluster, the SMI's credential for its lookups, then one answer
    // naming every control plane operator identity and the SMI for the MSI half; ARM refused nothing.
    const credentialsIssued = sandbox.statistics.snapshot().dataPlane.credentialsIssued;
    const msiIdentities = (cluster: FleetClusterDescription): number =>
      new Set(Object.values(cluster.controlPlaneOperators ?? {}).map((id) => id.toLowerCase())).size + 1;
    expect(credentialsIssued).toBe(fleet.reduce((sum, cluster) => sum + 1 + msiIdentities(cluster), 0));
    expect(sandbox.statistics.snapshot().arm.responsesByStatus["403"]).toBeUndefined();
    const state = readFileSync(join(scratchDirectory, "state", ".pulumi", "stacks", "aro-hcp-identity-status", `${stackName}.json`), "utf8");
    expect(state.includes(sandbox.cosmosKey), "the Cosmos key is in the state").toBe(false);
    expect(readFileSync(stackFile, "utf8").includes(sandbox.cosmosKey), "the Cosmos key is in the stack file").toBe(false);

    const writes = (): number => Object.values(sandbox.statistics.snapshot().cosmos.documentWritesByMethod).reduce((sum, count) => sum + count, 0);
    const writesBefore = writes();
    const calls = (): number[] => {
      const { dataPlane, entra, arm } = sandbox.statistics.snapshot();
      return [dataPlane.requests, entra.tokensIssued, arm.getRequests];
    };
    const callsBefore = calls();
    // A stack the previous version wrote named each resource after its cluster alone: the same
    // resources under those names. The first `up` of this version moves them by aliases (matched by
    // the cluster ID each resource's outputs record): nothing created, deleted or written.
    const exportFile = join(scratchDirectory, "previous-names.json");
    const exported = JSON.parse(await pulumi("stack", "export")) as {
      deployment: { resources: Array<{ urn: string; type: string; outputs?: { clusterResourceId?: string } }> };
    };
    for (const resource of exported.deployment.resources.filter((candidate) => candidate.type === resourceTypeToken)) {
      resource.urn = resource.urn.replace(/::[^:]+$/, `::${resource.outputs?.clusterResourceId?.split("/").pop() ?? ""}`);
    }
    writeFileSync(exportFile, JSON.stringify(exported));
    await pulumi("stack", "import", "--file", exportFile);
    const moved = await pulumi("up", "--yes", "--skip-preview");
    expect(moved).not.toMatch(/created|deleted/);
    expect(moved).toMatch(/3 unchanged/);
    expect(await resourceNamesInState()).toEqual(fleet.map((cluster) => resourceNameOf(cluster)).sort());
    expect(await pulumi("refresh", "--yes")).toMatch(/3 unchanged/);
    await pulumi("up", "--yes", "--expect-no-changes");
    for (const cluster of fleet) {
      await expectRecorded(cluster);
    }
    expect(writes(), "document writes by refresh and the no-change up").toBe(writesBefore);
    // Inside the recheck window nothing needs Azure: no data plane call, no token, no ARM read.
    expect(calls(), "data plane requests, tokens issued, ARM reads by refresh and the no-change up").toEqual(callsBefore);

    // A delete relinquishes (issue 44 item 3): the engine's plan says `[retain]`, and Cosmos keeps
    // every document as last written, its etag and instanceVersion included.
    const recorded = await documents();
    const destroyed = await pulumi("destroy", "--yes");
    expect(destroyed).toMatch(/\[retain\]/);
    expect(destroyed).toMatch(/- 3 deleted/);
    expect(await documents(), "the documents, their etags included, after destroy").toEqual(recorded);
    expect(writes(), "document writes by destroy").toBe(writesBefore);

    // Adopting a fleet whose status is current (issue 44 item 2): a new stack's first up creates
    // the resources and writes nothing to Cosmos, asking Azure nothing either.
    expect(await resourceNamesInState()).toEqual([]);
    const adoption = await pulumi("up", "--yes");
    expect(adoption).toMatch(/\+ 3 created/);
    expect(await documents(), "the documents, their etags included, after adoption").toEqual(recorded);
    expect(writes(), "document writes by the adoption").toBe(writesBefore);
    expect(calls(), "data plane requests, tokens issued, ARM reads by the adoption").toEqual(callsBefore);
  }, 600_000);

  it("refuses an up whose fleet is empty over a stack that holds clusters, naming allowEmptyFleet; with it true, the up goes ahead", async () => {
    const clustersFile = join(scratchDirectory, "clusters.json");
    const clusterNames = fleet.map(resourceNameOf).sort();
    const clustersInState = resourceNamesInState;
    await pulumi("up", "--yes", "--skip-preview");
    for (const cluster of fleet) {
      await expectRecorded(cluster);
    }
    const recorded = await documents();
    try {
      // An empty clusters list, as the CLI stores one (`config set` of '[]' stores the text, which Pulumi.yaml's
      // `type: array` refuses): the literal `up --yes` fails before anything is declared. (An empty clustersFile
      // takes the same path once read: test/program/emptyFleet.test.ts.)
      await pulumi("config", "rm", "aro-hcp-identity-status:clustersFile");
      await pulumi("config", "set", "--path", "aro-hcp-identity-status:clusters[0].clusterResourceId", fleet[0].clusterResourceId);
      await pulumi("config", "rm", "--path", "aro-hcp-identity-status:clusters[0]");
      expect(readFileSync(stackFile, "utf8")).toContain("aro-hcp-identity-status:clusters: []");
      await expect(pulumi("up", "--yes")).rejects.toThrow(
        new RegExp(
          `aro-hcp-identity-status:clusters declares no cluster, but stack organization/aro-hcp-identity-status/${stackName} holds 2 of them \\(${clusterNames.join(", ")}\\).*set aro-hcp-identity-status:allowEmptyFleet to true`,
        ),
      );
      expect(await clustersInState()).toEqual(clusterNames);
      expect(await documents(), "the documents, their etags included").toEqual(recorded);

      await pulumi("config", "set", "aro-hcp-identity-status:allowEmptyFleet", "true");
      expect(await pulumi("up", "--yes")).toMatch(/- 2 deleted/);
      expect(await clustersInState()).toEqual([]);
    } finally {
      for (const key of ["allowEmptyFleet", "clusters"]) {
        await pulumi("config", "rm", `aro-hcp-identity-status:${key}`);
      }
      await pulumi("config", "set", "aro-hcp-identity-status:clustersFile", clustersFile);
    }
  }, 600_000);

  it("fails `refresh --run-program` over a database typo, or another container that exists, naming the setting, and state keeps every resource", async () => {
    const resourcesInState = async (): Promise<string[]> => {
      const exported = JSON.parse(await pulumi("stack", "export")) as { deployment: { resources?: Array<{ urn: string }> } };
      return (exported.deployment.resources ?? []).map((resource) => resource.urn).sort();
    };
    await pulumi("up", "--yes", "--skip-preview");
    const before = await resourcesInState();
    expect(before.filter((urn) => urn.includes(resourceTypeToken))).toHaveLength(fleet.length);
    const recorded = await documents();
    const database = sandbox.connection().database;
    try {
      await pulumi("config", "set", "aro-hcp-identity-status:cosmosDatabase", `${database}-typo`);
      await expect(pulumi("refresh", "--run-program", "--yes")).rejects.toThrow(`'aro-hcp-identity-status:cosmosDatabase' (now '${database}-typo')`);
      expect(await resourcesInState()).toEqual(before);
      expect(await documents(), "the documents, their etags included").toEqual(recorded);
    } finally {
      await pulumi("config", "set", "aro-hcp-identity-status:cosmosDatabase", database);
    }
    // Another container of the same database, which exists (an ARO-HCP database holds several): none of
    // the clusters' documents is there, nor their subscriptions'; state must keep every resource.
    const otherContainer = "Billing";
    await sandbox.cosmosContainer.database.containers.createIfNotExists({ id: otherContainer, partitionKey: { paths: ["/partitionKey"] } });
    try {
      await pulumi("config", "set", "aro-hcp-identity-status:cosmosContainer", otherContainer);
      const refused = await pulumi("refresh", "--run-program", "--yes").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(refused).toContain(`'aro-hcp-identity-status:cosmosContainer' (now '${otherContainer}')`);
      expect(refused).toContain("the missing documents do not prove the cluster deleted");
      // Through the literal CLI too, each resource's error starts with the cause and names its cluster by the resource's name.
      // (the engine puts "Preview failed: " before a refresh's error).
      expect(refused).toMatch(
        new RegExp(`error: (Preview failed: )?none of the documents of cluster ${resourceNameOf(fleet[0])} is in container '${otherContainer}'`),
      );
      expect(await resourcesInState()).toEqual(before);
      expect(await documents(), "the documents, their etags included").toEqual(recorded);
    } finally {
      await pulumi("config", "set", "aro-hcp-identity-status:cosmosContainer", sandbox.container);
    }
  }, 600_000);
  it("fails a preview once for each setting that is wrong for the whole fleet, before any Azure or Cosmos request", async () => {
    const requests = (): number[] => {
      const { dataPlane, entra, arm, cosmos } = sandbox.statistics.snapshot();
      return [dataPlane.requests, entra.requests, arm.getRequests, cosmos.requests];
    };
    const key = (name: string): string => `aro-hcp-identity-status:${name}`;
    const audience = (await pulumi("config", "get", key("dataPlaneAudience"))).trim();
    const certificateFile = (await pulumi("config", "get", key("firstPartyCertificateFile"))).trim();
    const refusal = (): Promise<string> =>
      pulumi("preview").then(
        () => "",
        (error: unknown) => String(error),
      );
    // The engine prints a diagnostic live and again under "Diagnostics:"; one resource of the fleet fails, once.
    const onceInDiagnostics = (output: string, text: string): number => {
      expect(output).toMatch(/\b1 errored\b/);
      return (output.split("Diagnostics:")[1] ?? "").split(text).length - 1;
    };
    const before = requests();
    try {
      await pulumi("config", "rm", key("dataPlaneAudience"));
      const missingAudience = await refusal();
      expect(missingAudience).toMatch(/'aro-hcp-identity-status:dataPlaneAudience' \(or ARO_HCP_DATA_PLANE_AUDIENCE\) is not set/);
      expect(onceInDiagnostics(missingAudience, "dataPlaneAudience' (or"), "copies of the message").toBe(1);
      expect(missingAudience).toContain("msiRpDataPlaneAudienceResource");
      await pulumi("config", "set", key("dataPlaneAudience"), audience);

      const absent = join(scratchDirectory, "no-such-first-party.pem");
      await pulumi("config", "set", key("firstPartyCertificateFile"), absent);
      const missingFile = await refusal();
      expect(missingFile).toMatch(
        /'aro-hcp-identity-status:firstPartyCertificateFile' \(or ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE\) names \S*no-such-first-party\.pem, which does not exist/,
      );
      expect(onceInDiagnostics(missingFile, absent), "copies of the path").toBe(1);
      await pulumi("config", "set", key("firstPartyCertificateFile"), certificateFile);

      // The one tuning read only from the environment: it reaches the engine's provider host from the CLI's.
      const badGrowth = await runLiteralPulumi(projectDirectory, { ...environment, ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT: "fifty" }, stackName, "preview").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(badGrowth).toMatch(/ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT is "fifty": expected a whole number of percent from 10 to 300/);
      expect(onceInDiagnostics(badGrowth, "ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT is"), "copies of the message").toBe(1);
      expect(requests(), "data plane, Entra ID, ARM and Cosmos requests").toEqual(before);
    } finally {
      await pulumi("config", "set", key("dataPlaneAudience"), audience);
      await pulumi("config", "set", key("firstPartyCertificateFile"), certificateFile);
    }
  }, 300_000);

  it("refuses credentialMode fixedIdentity over a fleet whose MSI status the data plane recorded, naming allowFixedIdentityOverwrite; one update that sets it writes the stand-in's IDs", async () => {
    const key = (name: string): string => `aro-hcp-identity-status:${name}`;
    const msiOf = async (cluster: FleetClusterDescription): Promise<{ serviceManagedIdentity?: StoredIdentity } | undefined> =>
      (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<StoredDocument>()).resource?.properties?.status
        ?.msiManagedIdentities as { serviceManagedIdentity?: StoredIdentity } | undefined;
    const makeMsiDue = (): void => {
      for (const cluster of fleet) {
        sandbox.documents.patch(
          cluster.partitionKey,
          cluster.serviceProviderClusterDocumentId,
          "/properties/status/msiManagedIdentities/earliestRecheckTime",
          "2000-01-01T00:00:00Z",
        );
      }
    };
    await pulumi("up", "--yes", "--skip-preview");
    for (const cluster of fleet) await expectRecorded(cluster);
    const clusterModeKeys = ["credentialMode", "firstPartyClientId", "firstPartyTenantId", "firstPartyCertificateFile", "dataPlaneAudience"];
    const saved = new Map<string, string>();
    for (const name of clusterModeKeys) saved.set(name, (await pulumi("config", "get", key(name))).trim());
    const fixed = sandbox.credentialChain.fixedIdentity;
    try {
      for (const name of clusterModeKeys) await pulumi("config", "rm", key(name));
      for (const [name, value] of Object.entries({
        credentialMode: "fixedIdentity",
        fixedIdentityClientId: fixed.clientId,
        fixedIdentityTenantId: fixed.tenantId,
        fixedIdentityCertificateFile: fixed.certificateBundlePath,
        fixedIdentityPrincipalId: fixed.objectId,
      })) {
        await pulumi("config", "set", key(name), value);
      }
      // The MSI half's recheck comes (the refresh sees it in Cosmos): the stand-in would answer its own IDs for every identity.
      makeMsiDue();
      const before = await documents();
      const refused = await pulumi("up", "--refresh", "--yes", "--skip-preview").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(refused).toContain("credentialMode fixedIdentity would write the fixed identity's IDs over");
      expect(refused).toContain("'aro-hcp-identity-status:allowFixedIdentityOverwrite' (or ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE) to true");
      expect(refused).toContain(fleet[0].serviceManagedIdentity);
      expect(await documents(), "the documents, their etags included").toEqual(before);

      // One update that means it, through the variable of that one command.
      await runLiteralPulumi(
        projectDirectory,
        { ...environment, ARO_HCP_ALLOW_FIXED_IDENTITY_OVERWRITE: "true" },
        stackName,
        "up",
        "--refresh",
        "--yes",
        "--skip-preview",
      );
      for (const cluster of fleet) {
        expect((await msiOf(cluster))?.serviceManagedIdentity).toMatchObject({ clientId: fixed.clientId, principalId: fixed.objectId });
      }
    } finally {
      for (const name of ["credentialMode", "fixedIdentityClientId", "fixedIdentityTenantId", "fixedIdentityCertificateFile", "fixedIdentityPrincipalId"]) {
        await pulumi("config", "rm", key(name));
      }
      for (const [name, value] of saved) await pulumi("config", "set", key(name), value);
    }
    // processCredential beside upstream's stand-in (issue 54 item 3): ARM's IDs are not written over the stand-in's, which upstream's
    // controllers would write back at their next recheck; the refusal names the mode to run there instead.
    try {
      for (const name of clusterModeKeys) await pulumi("config", "rm", key(name));
      await pulumi("config", "set", key("credentialMode"), "processCredential");
      makeMsiDue();
      const standInRecorded = await documents();
      const turned = await pulumi("up", "--refresh", "--yes", "--skip-preview").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(turned).toContain("credentialMode processCredential would write the IDs ARM gives its own credential over");
      expect(turned).toContain("run credentialMode fixedIdentity with its identity");
      expect(await documents(), "the documents, their etags included").toEqual(standInRecorded);
    } finally {
      await pulumi("config", "rm", key("credentialMode"));
      for (const [name, value] of saved) await pulumi("config", "set", key(name), value);
    }
    // Back in production's mode, the data plane's answer replaces the stand-in's at the next recheck.
    makeMsiDue();
    await pulumi("up", "--refresh", "--yes", "--skip-preview");
    for (const cluster of fleet) await expectRecorded(cluster);
  }, 600_000);

  it("keeps a cluster's resource and IDs when a cluster of the same name joins in another resource group, and refuses a clustersFile cut short", async () => {
    const clustersFile = join(scratchDirectory, "clusters.json");
    const declare = (clusters: readonly FleetClusterDescription[]): void =>
      writeFileSync(
        clustersFile,
        JSON.stringify(clusters.map((cluster) => ({ clusterResourceId: cluster.clusterResourceId, dataPlaneOperators: cluster.dataPlaneOperators }))),
      );
    const documents = (clusters: readonly FleetClusterDescription[]): Promise<Array<StoredDocument | undefined>> =>
      Promise.all(
        clusters.map(
          async (cluster) =>
            (await sandbox.cosmosContainer.item(cluster.serviceProviderClusterDocumentId, cluster.partitionKey).read<StoredDocument>()).resource,
        ),
      );
    await pulumi("up", "--yes", "--skip-preview");
    // A cluster named as fleet[0] in another resource group of its subscription, and five more.
    const sameName = seedNamedCluster(sandbox, {
      subscriptionId: fleet[0].partitionKey,
      resourceGroupName: "fleet-rg-other",
      clusterName: fleet[0].clusterResourceId.split("/").pop() ?? "",
      identitiesPerCluster: 2,
    });
    const more = Array.from({ length: 5 }, (_, index) =>
      seedNamedCluster(sandbox, {
        subscriptionId: fleet[1].partitionKey,
        resourceGroupName: "fleet-rg-more",
        clusterName: `more-cluster-${index}`,
        identitiesPerCluster: 1,
      }),
    );
    const all = [...fleet, sameName, ...more];
    try {
      // Issue 33 item 2: fleet[0]'s resource was renamed (to `<rg>/<name>`), created anew (the status
      // current, nothing written) and its old one deleted, which reset the subtree: the IDs were gone.
      declare(all);
      const grown = await pulumi("up", "--yes", "--skip-preview");
      expect(grown).toMatch(/\+ 6 created/);
      expect(grown).not.toMatch(/deleted/);
      for (const cluster of all) await expectRecorded(cluster);
      expect(await resourceNamesInState()).toEqual(all.map(resourceNameOf).sort());

      // Issue 33 item 5: a clustersFile cut to 1 of 8 clusters deleted the other 7 without a question.
      const recorded = await documents(all);
      declare(all.slice(0, 1));
      const refused = await pulumi("up", "--yes", "--skip-preview").then(
        () => "",
        (error: unknown) => String(error),
      );
      expect(refused).toContain(`this update would delete 7 of them`);
      expect(refused).toContain("set aro-hcp-identity-status:allowClusterRemovals to true");
      expect(await resourceNamesInState()).toEqual(all.map(resourceNameOf).sort());
      expect(await documents(all), "the documents, their etags included").toEqual(recorded);
    } finally {
      declare(fleet);
    }
  }, 600_000);
});
