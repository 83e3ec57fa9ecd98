/**
 * The Pulumi program: one ServiceProviderClusterIdentityStatus per cluster, from the JSON file
 * named by `clustersFile`, else the stack config's `clusters` list (Pulumi.yaml's default: none).
 * An empty fleet over a stack that holds clusters is refused unless `allowEmptyFleet` is true, and
 * a fleet that would delete more than a small share of them unless `allowClusterRemovals` is.
 * Exported as a function so the Automation API can run it inline (see docs/pulumi-engine.md).
 */
import * as pulumi from "@pulumi/pulumi";
import { refusePlainCosmosKey } from "./program/cosmosKeyConfig";
import { allowClusterRemovalsKey, checkClusterRemovals } from "./program/clusterRemovals";
import { declarationBatchSize, declareFleet, resourceNameFor } from "./program/declareFleet";
import { clustersInStack } from "./program/stackState";
import { allowEmptyFleetKey, checkEmptyFleet } from "./program/emptyFleet";
import { clusterListFromFile, parseClusterList } from "./program/fleet";
import { checkRecheck } from "./program/recheck";
import { adoptionNote, clustersNewToStack } from "./program/adoption";
import { quietSdkRegistrationDebugLogs, registerWithoutStackTraces } from "./resources";

// Settled as a promise, so a bad configuration is a rejection for whoever awaits the program.
export = (): Promise<Record<string, unknown>> => Promise.resolve().then(declareProgram).catch(refusal);

/**
 * A refusal of the program's configuration (a malformed cluster list, an empty fleet, too many
 * clusters leaving, a plain Cosmos key) as the SDK's RunError, whose message the engine prints
 * alone, without a stack that says nothing to a user. Its stack, and those of the errors it carries
 * as its cause, are replaced before anyone formats them: the Node.js language host maps an
 * unhandled error's stack through source maps before reporting it, which makes a refused
 * `pulumi up` many times slower (docs/pulumi-engine.md has the figures).
 */
function refusal(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  const refused = new pulumi.RunError(message);
  refused.stack = `${refused.name}: ${message}`;
  let link: unknown = error;
  for (let depth = 0; link instanceof Error && depth < 8; depth += 1) {
    link.stack = `${link.name}: ${link.message}`;
    link = (link as { cause?: unknown }).cause;
  }
  Object.defineProperty(refused, "cause", { value: error, writable: true, configurable: true, enumerable: false });
  throw refused;
}

async function declareProgram(): Promise<Record<string, unknown>> {
  // This program declares thousands of resources: it opts in to both (resources/index.ts).
  quietSdkRegistrationDebugLogs();
  registerWithoutStackTraces();
  const config = new pulumi.Config();
  refusePlainCosmosKey(config);
  // Read whatever the fleet, so that a value other than true or false is refused, naming the key.
  const allowEmptyFleet = config.getBoolean(allowEmptyFleetKey) ?? false;
  // A large fleet does not fit in one `pulumi config set` argument (128 KB): use clustersFile.
  const clustersFile = config.get("clustersFile");
  const fromFile = clustersFile !== undefined && clustersFile.length > 0;
  const clusters = fromFile
    ? clusterListFromFile(clustersFile, `${pulumi.getProject()}:clustersFile`)
    : parseClusterList(config.getObject<unknown>("clusters") ?? [], `${pulumi.getProject()}:clusters`);
  const source = fromFile ? `${pulumi.getProject()}:clustersFile (${clustersFile})` : `${pulumi.getProject()}:clusters`;
  if (clusters.length === 0) {
    // Before anything is declared: the engine would delete every cluster the stack holds.
    await checkEmptyFleet({ source, allowEmptyFleet });
    return { clusters: (await declareFleet([])).outputs };
  }
  // ARO_HCP_RECHECK, set for one command, must name declared clusters (program/recheck.ts).
  checkRecheck(
    process.env.ARO_HCP_RECHECK,
    clusters.map((cluster) => cluster.clusterResourceId),
  );
  // Read whatever the fleet, so that a value other than true or false is refused, naming the key.
  const allowClusterRemovals = config.getBoolean(allowClusterRemovalsKey) ?? false;
  // One read of the stack's last saved state, before anything is declared: what this update would
  // delete, and the names the stack holds its clusters under.
  const setting = `${pulumi.getProject()}:${allowClusterRemovalsKey}`;
  const held = await clustersInStack(
    "to check what this update would delete and under which names it holds its clusters",
    `check that the backend can be read (\`pulumi stack export\`), or set ${setting} to true to go ahead without the check`,
  ).catch((error: unknown) => {
    if (!allowClusterRemovals) throw error;
    // Without the state: no check, and a resource saved under another name is created anew (its old one's delete writes nothing).
    void pulumi.log.warn(`${error instanceof Error ? error.message : String(error)}; going ahead without it, as ${setting} is true`);
    return [];
  });
  const ids = clusters.map((cluster) => cluster.clusterResourceId);
  const newToStack = clustersNewToStack(ids, held);
  if (pulumi.runtime.isDryRun() && newToStack.length > 0) void pulumi.log.info(adoptionNote(newToStack.length));
  checkClusterRemovals({ source, declared: ids, held, declaredNames: new Set(ids.map(resourceNameFor)), allowClusterRemovals });
  const { outputs } = await declareFleet(clusters, declarationBatchSize, held);
  return { clusters: outputs };
}
