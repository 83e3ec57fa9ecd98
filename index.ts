/**
 * The Pulumi program: one ServiceProviderClusterIdentityStatus per cluster, from the JSON file
 * named by `clustersFile`, the stack config's `clusters` list or, when neither is configured, the
 * running sandbox's demo fleet.
 * Exported as a function so the Automation API can run it inline (see docs/pulumi-engine.md).
 */
import * as pulumi from "@pulumi/pulumi";
import { refusePlainCosmosKey } from "./program/cosmosKeyConfig";
import { declareFleet } from "./program/declareFleet";
import { clusterListFromFile, defaultEndpointsFile, parseClusterList, sandboxFleet } from "./program/fleet";

// Settled as a promise, so a bad configuration is a rejection for whoever awaits the program.
export = (): Promise<Record<string, unknown>> => Promise.resolve().then(declareProgram);

function declareProgram(): Record<string, unknown> {
  const config = new pulumi.Config();
  refusePlainCosmosKey(config);
  // A large fleet does not fit in one `pulumi config set` argument (128 KB): use clustersFile.
  const clustersFile = config.get("clustersFile");
  const configured = config.getObject<unknown>("clusters");
  const clusters =
    clustersFile !== undefined && clustersFile.length > 0
      ? clusterListFromFile(clustersFile, `${pulumi.getProject()}:clustersFile`)
      : configured === undefined
        ? sandboxFleet(config.get("sandboxEndpointsFile") ?? defaultEndpointsFile(process.cwd()))
        : parseClusterList(configured, `${pulumi.getProject()}:clusters`);
  const { outputs } = declareFleet(clusters);
  return { clusters: outputs };
}
