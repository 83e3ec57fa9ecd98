/**
 * A sample of reconcile passes through the real engine (`pulumi up --refresh`, the provider in
 * its own host process) with faults scoped to one of two clusters, checked in Cosmos after every
 * pass like the in-process campaign. Everything the engine prints (stdout, stderr with verbose
 * engine logs on some passes), the state directory with its history and backups, and the engine
 * home are kept for the secret scan.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createSeededRandom } from "../../sandbox/faultInjector";
import { laneFaultKinds, pickWeighted } from "./faultCatalogue";
import { clusterConfig, openEngineStack } from "./engineStack";
import type { PassOutcome } from "./invariants";
import { checkPass, secretViolations } from "./invariants";
import type { Document, ReliabilitySandbox } from "./reliabilitySandbox";
import { foreignFields, makeRecheckDue, ownedStatus, readServiceProviderCluster, seedLanes } from "./reliabilitySandbox";

/** What the engine sample measured. */
export interface EngineSampleFigures {
  passes: number;
  upSucceeded: number;
  upFailed: number;
  faultsInjected: Record<string, number>;
  violations: string[];
  /** Characters of engine output, logs, state and history scanned for secrets. */
  scannedCharacters: Record<string, number>;
  secretLeaks: string[];
  durationInMs: number;
}

/** Every file under a directory, concatenated. */
export function readTree(directory: string): string {
  if (!existsSync(directory)) return "";
  let text = "";
  for (const entry of readdirSync(directory)) {
    const path = join(directory, entry);
    text += statSync(path).isDirectory() ? readTree(path) : readFileSync(path, "utf8");
  }
  return text;
}

function outcomeOf(upSucceeded: boolean, before: Document | undefined, after: Document | undefined): PassOutcome {
  if (upSucceeded) return "succeeded";
  const status = ownedStatus(after);
  if (JSON.stringify(status) === JSON.stringify(ownedStatus(before))) return "writeFailed";
  const entries = Object.values((status?.identities ?? {}) as Record<string, { retrievalError?: string }>);
  return entries.some((entry) => entry.retrievalError !== undefined && !entry.retrievalError.startsWith("ResourceNotFound")) ? "lookupFailed" : "succeeded";
}

/** Runs `passes` engine passes over two clusters. */
export async function runEngineSample(reliability: ReliabilitySandbox, passes: number, seed: number): Promise<EngineSampleFigures> {
  const started = Date.now();
  const { sandbox } = reliability;
  const clusters = seedLanes(sandbox, "engine", 2, 3);
  const engineStack = await openEngineStack(reliability, "engine-sample", clusters.map(clusterConfig), { environment: { AZURE_LOG_LEVEL: "info" } });
  const random = createSeededRandom(seed);
  const figures: EngineSampleFigures = {
    passes: 0,
    upSucceeded: 0,
    upFailed: 0,
    faultsInjected: {},
    violations: [],
    scannedCharacters: {},
    secretLeaks: [],
    durationInMs: 0,
  };
  let output = "";
  const kinds = laneFaultKinds.filter((kind) => kind.name !== "cosmos-delete-before-write");
  const expectedForeign = new Map<string, Document>();
  for (const cluster of clusters)
    expectedForeign.set(cluster.serviceProviderClusterDocumentId, foreignFields(readServiceProviderCluster(sandbox, cluster) ?? {}));
  for (let pass = 1; pass <= passes; pass += 1) {
    const faulted = clusters[pass % clusters.length];
    for (const cluster of clusters) {
      if (random() < 0.5) sandbox.identities.rotate(Object.values(cluster.dataPlaneOperators)[Math.floor(random() * 3)] ?? "");
      makeRecheckDue(sandbox, cluster);
    }
    const before = new Map(clusters.map((cluster) => [cluster.serviceProviderClusterDocumentId, readServiceProviderCluster(sandbox, cluster)]));
    const kind = pickWeighted(kinds, random);
    const scope = {
      resourceGroupPath: `/resourcegroups/${faulted.clusterResourceId.split("/")[4]?.toLowerCase()}/`,
      documentId: faulted.serviceProviderClusterDocumentId,
      identityId: Object.values(faulted.dataPlaneOperators)[0] ?? "",
      passNumber: pass,
    };
    const rule = sandbox.faults.add(kind.rule(scope, Number(reliability.config.maxWriteAttempts), Number(reliability.config.lookupTimeoutSeconds) * 1000));
    const verbose = pass % 5 === 1;
    let upSucceeded = true;
    try {
      const result = await engineStack.stack.up({
        color: "never",
        refresh: true,
        onOutput: (text) => (output += text),
        ...(verbose ? { logToStdErr: true, logVerbosity: 9 } : {}),
      });
      output += result.stderr;
    } catch (error) {
      upSucceeded = false;
      output += String(error);
    }
    figures.faultsInjected[kind.name] = (figures.faultsInjected[kind.name] ?? 0) + rule.triggered;
    rule.remaining = 0;
    if (rule.kind === "race" && rule.triggered > 0 && rule.foreignEdit !== undefined) {
      const foreign = expectedForeign.get(faulted.serviceProviderClusterDocumentId) as Document;
      const properties = foreign.properties as Record<string, Record<string, unknown>>;
      properties.reliabilityRaces = { ...properties.reliabilityRaces, [`pass-${pass}`]: rule.foreignEdit.value };
    }
    figures.passes += 1;
    figures[upSucceeded ? "upSucceeded" : "upFailed"] += 1;
    for (const cluster of clusters) {
      const after = readServiceProviderCluster(sandbox, cluster);
      const previous = before.get(cluster.serviceProviderClusterDocumentId);
      const desired = new Map(Object.values(cluster.dataPlaneOperators).map((id) => [id.toLowerCase(), id]));
      const violations = checkPass(
        {
          outcome: outcomeOf(upSucceeded, previous, after),
          before: previous,
          after,
          expectedForeign: expectedForeign.get(cluster.serviceProviderClusterDocumentId),
          desired,
          reportedStatus: undefined,
          deletedDuringPass: false,
          errorMessage: undefined,
          documentId: cluster.serviceProviderClusterDocumentId,
        },
        sandbox.identities,
        reliability.secrets(),
      );
      figures.violations.push(
        ...violations.map((violation) => `engine pass ${pass} (${kind.name}), ${cluster.clusterResourceId.split("/").pop() ?? ""}: ${violation}`),
      );
    }
  }
  const sources: Record<string, string> = {
    "engine output and logs (stdout, stderr, verbose engine logs)": output,
    "state, checkpoint history and backups": readTree(engineStack.stateDirectory),
    "engine home (plugins, workspace settings, logs)":
      readTree(join(engineStack.homeDirectory, "workspaces")) + readTree(join(engineStack.homeDirectory, "logs")),
    "stack settings (Pulumi.<stack>.yaml)": readTree(engineStack.workDirectory),
  };
  for (const [name, text] of Object.entries(sources)) {
    figures.scannedCharacters[name] = text.length;
    figures.secretLeaks.push(...secretViolations(name, text, reliability.secrets()));
  }
  engineStack.remove();
  figures.durationInMs = Date.now() - started;
  return figures;
}
