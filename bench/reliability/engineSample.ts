/**
 * A sample of reconcile passes through the real engine (`pulumi up --refresh`, the provider in
 * its own host process) with faults scoped to one of two clusters, checked in Cosmos after every
 * pass like the in-process campaign. Then a `pulumi refresh --run-program` with a cosmosContainer
 * that does not exist: it must fail naming the setting, and state must keep every resource.
 * Everything the engine prints (stdout, stderr with verbose engine logs on some passes), the state
 * directory with its history and backups, and the engine home are kept for the secret scan.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { writeStackConfig } from "../../cli/engine";
import { resourceTypeToken } from "../../resources/serviceProviderClusterIdentityStatus";
import { createSeededRandom } from "../../sandbox/faultInjector";
import type { FleetClusterDescription } from "../../sandbox/seed";
import { laneFaultKinds, ownedSubtreePointer, pickWeighted } from "./faultCatalogue";
import type { EngineStack } from "./engineStack";
import { clusterDeclaration } from "../clusterDeclaration";
import { openEngineStack } from "./engineStack";
import type { PassOutcome } from "./invariants";
import { checkPass, secretViolations } from "./invariants";
import { ownedSubtreeRaces, planFault, retireFault } from "./plannedFaults";
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
  /** `pulumi refresh --run-program` with a cosmosContainer that does not exist. */
  wrongContainerRefresh: WrongContainerRefreshFigures;
  durationInMs: number;
}

/** What a refresh through the engine with a wrong cosmosContainer did. */
export interface WrongContainerRefreshFigures {
  /** The container name the refresh was given. */
  readonly container: string;
  readonly refreshFailed: boolean;
  /** The engine's line that names the setting, or the start of what it printed. */
  readonly message: string;
  /** Status resources in state before the refresh, after it, and after an `up` with the right container. */
  readonly resourcesBefore: number;
  readonly resourcesAfter: number;
  readonly resourcesAfterUp: number;
  /** True when no document changed during the refresh. */
  readonly documentsUnchanged: boolean;
  /** The `up` with the right container again: its result and changes. */
  readonly upAfterwards: string;
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
  const engineStack = await openEngineStack(reliability, "engine-sample", clusters.map(clusterDeclaration), { environment: { AZURE_LOG_LEVEL: "info" } });
  const random = createSeededRandom(seed);
  const figures: EngineSampleFigures = {
    passes: 0,
    upSucceeded: 0,
    upFailed: 0,
    faultsInjected: {},
    violations: [],
    scannedCharacters: {},
    secretLeaks: [],
    wrongContainerRefresh: {
      container: "",
      refreshFailed: false,
      message: "",
      resourcesBefore: 0,
      resourcesAfter: 0,
      resourcesAfterUp: 0,
      documentsUnchanged: true,
      upAfterwards: "",
    },
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
    const planned = planFault(sandbox, pickWeighted(kinds, random), faulted, Object.values(faulted.dataPlaneOperators)[0] ?? "", pass, {
      maxWriteAttempts: Number(reliability.config.maxWriteAttempts),
      lookupTimeoutInMs: Number(reliability.config.lookupTimeoutSeconds) * 1000,
    });
    const { kind, rule } = planned;
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
    retireFault(planned);
    if (rule.kind === "race" && rule.triggered > 0 && rule.foreignEdit !== undefined && !rule.foreignEdit.path.startsWith(ownedSubtreePointer)) {
      const foreign = expectedForeign.get(faulted.serviceProviderClusterDocumentId) as Document;
      const properties = foreign.properties as Record<string, Record<string, unknown>>;
      properties.reliabilityRaces = { ...properties.reliabilityRaces, [`pass-${pass}`]: rule.foreignEdit.value };
    }
    figures.passes += 1;
    figures[upSucceeded ? "upSucceeded" : "upFailed"] += 1;
    for (const cluster of clusters) {
      const after = readServiceProviderCluster(sandbox, cluster);
      // Another writer's edits inside the faulted cluster's owned subtree between our read and our write.
      const races = ownedSubtreeRaces(
        before.get(cluster.serviceProviderClusterDocumentId),
        cluster === faulted ? [rule, ...(planned.alongside === undefined ? [] : [planned.alongside])] : [],
      );
      const desired = new Map(Object.values(cluster.dataPlaneOperators).map((id) => [id.toLowerCase(), id]));
      const violations = checkPass(
        {
          outcome: outcomeOf(upSucceeded, races.before, after),
          before: races.before,
          after,
          expectedForeign: expectedForeign.get(cluster.serviceProviderClusterDocumentId),
          desired,
          reportedStatus: undefined,
          deletedDuringPass: false,
          errorMessage: undefined,
          documentId: cluster.serviceProviderClusterDocumentId,
          otherWriterEntries: races.entries,
          otherWriterRecordedStatus: races.wholeSubtree,
          credentialScope: "process",
        },
        sandbox.identities,
        reliability.secrets(),
      );
      figures.violations.push(
        ...violations.map((violation) => `engine pass ${pass} (${kind.name}), ${cluster.clusterResourceId.split("/").pop() ?? ""}: ${violation}`),
      );
    }
  }
  const wrongContainer = await refreshWithWrongContainer(reliability, engineStack, clusters);
  figures.wrongContainerRefresh = wrongContainer.figures;
  figures.faultsInjected["cosmos-wrong-container"] = 1;
  figures.violations.push(...wrongContainer.violations);
  output += wrongContainer.output;
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

/** The status resources the stack's state holds. */
async function statusResourcesInState(engineStack: EngineStack): Promise<number> {
  const deployment = (await engineStack.stack.exportStack()).deployment as { resources?: Array<{ type: string }> };
  return (deployment.resources ?? []).filter((resource) => resource.type === resourceTypeToken).length;
}

/**
 * `pulumi refresh --run-program` after `cosmosContainer` was set to a container that does not
 * exist (a plain `refresh` would use the settings stored at the last `up`): the refresh must fail
 * naming the setting, write nothing and keep every resource in state; an `up` with the right
 * container then succeeds over the same resources.
 */
async function refreshWithWrongContainer(
  reliability: ReliabilitySandbox,
  engineStack: EngineStack,
  clusters: readonly FleetClusterDescription[],
): Promise<{ figures: WrongContainerRefreshFigures; violations: string[]; output: string }> {
  const { sandbox } = reliability;
  const rightContainer = reliability.config.cosmosContainer ?? "Resources";
  const container = `${rightContainer}-typo`;
  const documentsBefore = clusters.map((cluster) => readServiceProviderCluster(sandbox, cluster));
  const resourcesBefore = await statusResourcesInState(engineStack);
  await writeStackConfig(engineStack.stack, { cosmosContainer: container });
  let output = "";
  let refreshFailed = false;
  try {
    const result = await engineStack.stack.refresh({ color: "never", runProgram: true, onOutput: (text) => (output += text) });
    output += result.stderr;
  } catch (error) {
    refreshFailed = true;
    output += String(error);
  }
  const resourcesAfter = await statusResourcesInState(engineStack);
  const documentsUnchanged = isDeepStrictEqual(
    clusters.map((cluster) => readServiceProviderCluster(sandbox, cluster)),
    documentsBefore,
  );
  await writeStackConfig(engineStack.stack, { cosmosContainer: rightContainer });
  let upAfterwards: string;
  try {
    const up = await engineStack.stack.up({ color: "never", onOutput: (text) => (output += text) });
    upAfterwards = `${up.summary.result} ${JSON.stringify(up.summary.resourceChanges ?? {})}`;
  } catch (error) {
    upAfterwards = `failed: ${(String(error).match(/error: [^\n]*/)?.[0] ?? String(error).slice(0, 200)).trim()}`;
  }
  const resourcesAfterUp = await statusResourcesInState(engineStack);
  const namingLine = output.split("\n").find((line) => line.includes(":cosmosContainer'") && line.includes(container));
  const figures: WrongContainerRefreshFigures = {
    container,
    refreshFailed,
    message: namingLine === undefined ? output.slice(0, 300).trim() : errorNamingSetting(namingLine, ":cosmosContainer'", container),
    resourcesBefore,
    resourcesAfter,
    resourcesAfterUp,
    documentsUnchanged,
    upAfterwards,
  };
  const violations: string[] = [];
  const where = "refresh with a wrong cosmosContainer";
  if (!refreshFailed) violations.push(`${where}: the refresh succeeded`);
  if (namingLine === undefined) violations.push(`${where}: nothing the engine printed names the setting and its value`);
  if (resourcesAfter !== resourcesBefore || resourcesBefore !== clusters.length) {
    violations.push(`${where}: state held ${resourcesBefore} status resource(s) before and ${resourcesAfter} after (documents exist for ${clusters.length})`);
  }
  if (!documentsUnchanged) violations.push(`${where}: a document changed`);
  if (!upAfterwards.startsWith("succeeded") || resourcesAfterUp !== clusters.length) {
    violations.push(`${where}: the up with the right container afterwards: ${upAfterwards}, ${resourcesAfterUp} status resource(s) in state`);
  }
  return { figures, violations, output };
}

/**
 * The provider's error in an engine line (which repeats it after the resource's name and again
 * after the error's type): from its first "failed to" to the wrong value after the setting's name.
 */
function errorNamingSetting(line: string, setting: string, value: string): string {
  const start = Math.max(0, line.indexOf("failed to "));
  const valueAt = line.indexOf(value, line.indexOf(setting, start));
  const end = valueAt < 0 ? line.length : valueAt + value.length + (line.startsWith("')", valueAt + value.length) ? 2 : 0);
  return line.slice(start, end).trim();
}
