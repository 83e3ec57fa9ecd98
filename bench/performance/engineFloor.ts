/**
 * The engine floor: the same engine, stack settings and resource names as the project's program,
 * but every resource is a trivial dynamic provider that does no I/O (inputs in, inputs out; no
 * diff; read returns what it was given). What an `up`, a no-op `up` or a `refresh` of N such
 * resources costs is what the engine itself costs for N dynamic resources on this machine.
 *
 * The provider's methods capture nothing (no imports, no helpers), so Pulumi serializes them into
 * about 800 bytes, like the project's small loader.
 */
import * as pulumi from "@pulumi/pulumi";
import type * as automation from "@pulumi/pulumi/automation";
import { clusterKeys, declareInBatches } from "../../program/declareFleet";
import { clusterListFromFile, parseClusterList } from "../../program/fleet";
import { quietSdkRegistrationLines } from "../../resources/sdkRegistrationDebugLogs";

type TrivialInputs = Record<string, unknown>;

/**
 * Inputs in, inputs out. Only the methods the floor's runs call: without `check` the host passes
 * the inputs through, and nothing is updated or deleted.
 */
export const trivialProvider: pulumi.dynamic.ResourceProvider<TrivialInputs, TrivialInputs> = {
  diff: () => Promise.resolve({ changes: false }),
  create: (inputs) => Promise.resolve({ id: String(inputs.clusterResourceId).toLowerCase(), outs: inputs }),
  read: (id, props) => Promise.resolve({ id, props }),
};

/** The trivial resource's type token (`pulumi.dynamic.Resource` with module `benchmark`). */
export const trivialTypeToken = "pulumi-nodejs:dynamic/benchmark:TrivialCluster";

export class TrivialClusterResource extends pulumi.dynamic.Resource {
  constructor(name: string, args: TrivialInputs) {
    super(trivialProvider, name, args, undefined, "benchmark", "TrivialCluster");
  }
}

/**
 * The floor's program: the stack's clusters file or `clusters` config (as the project's program
 * reads them), one trivial resource per cluster under the same name, and a stack output per cluster.
 */
export const trivialFleetProgram: automation.PulumiFn = async () => {
  const config = new pulumi.Config();
  const clustersFile = config.get("clustersFile");
  const clusters =
    clustersFile !== undefined && clustersFile.length > 0
      ? clusterListFromFile(clustersFile, "clustersFile")
      : parseClusterList(config.getObject<unknown>("clusters") ?? [], "clusters");
  const keys = clusterKeys(clusters.map((cluster) => cluster.clusterResourceId));
  const outputs: Record<string, pulumi.Output<string>> = {};
  // The SDK's debug lines per registration are kept out of the engine as the project's program
  // keeps its own out (it opts in with quietSdkRegistrationDebugLogs, resources/sdkRegistrationDebugLogs.ts),
  // so that both engines log alike.
  quietSdkRegistrationLines(trivialTypeToken);
  // Declared in batches as the project's program declares its fleet, so that both engines are fed alike.
  await declareInBatches(clusters, (cluster) => {
    const key = keys.get(cluster.clusterResourceId) ?? cluster.clusterResourceId;
    outputs[key] = new TrivialClusterResource(key, { ...cluster }).id;
  });
  return { clusters: outputs };
};
