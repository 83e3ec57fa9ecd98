/**
 * The Pulumi program: one ServiceProviderClusterIdentityStatus per cluster, from the stack
 * config's `clusters` list or, when none is configured, from the running sandbox's demo fleet.
 * Exported as a function so the Automation API can run it inline (see docs/pulumi-engine.md).
 */
import * as pulumi from "@pulumi/pulumi";
import { declareFleet } from "./program/declareFleet";
import { defaultEndpointsFile, parseClusterList, sandboxFleet } from "./program/fleet";

export = async (): Promise<Record<string, unknown>> => {
  const config = new pulumi.Config();
  const configured = config.getObject<unknown>("clusters");
  const clusters =
    configured === undefined
      ? sandboxFleet(config.get("sandboxEndpointsFile") ?? defaultEndpointsFile(process.cwd()))
      : parseClusterList(configured, `${pulumi.getProject()}:clusters`);
  const { outputs } = declareFleet(clusters);
  return { clusters: outputs };
};
