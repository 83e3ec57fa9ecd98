/**
 * The Pulumi program: one ServiceProviderClusterIdentityStatus per cluster, from the JSON file
 * named by `clustersFile`, else the stack config's `clusters` list (Pulumi.yaml's default: none).
 * Exported as a function so the Automation API can run it inline (see docs/pulumi-engine.md).
 */
import * as pulumi from "@pulumi/pulumi";
import { refusePlainCosmosKey } from "./program/cosmosKeyConfig";
import { declareFleet } from "./program/declareFleet";
import { clusterListFromFile, parseClusterList } from "./program/fleet";

// Settled as a promise, so a bad configuration is a rejection for whoever awaits the program.
export = (): Promise<Record<string, unknown>> => Promise.resolve().then(declareProgram);

async function declareProgram(): Promise<Record<string, unknown>> {
  const config = new pulumi.Config();
  refusePlainCosmosKey(config);
  // A large fleet does not fit in one `pulumi config set` argument (128 KB): use clustersFile.
  const clustersFile = config.get("clustersFile");
  const clusters =
    clustersFile !== undefined && clustersFile.length > 0
      ? clusterListFromFile(clustersFile, `${pulumi.getProject()}:clustersFile`)
      : parseClusterList(config.getObject<unknown>("clusters") ?? [], `${pulumi.getProject()}:clusters`);
  const { outputs } = await declareFleet(clusters);
  return { clusters: outputs };
}
