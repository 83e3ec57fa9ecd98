/**
 * What the running stack holds, from its last saved state, read through the engine: the cluster
 * resources by name, each with the cluster ID its outputs record. The program reads it once per
 * run, before it declares anything, to refuse an update that would delete too many of them
 * (program/clusterRemovals.ts, program/emptyFleet.ts) and to move a resource saved under another
 * name to the name it has now (an alias, program/declareFleet.ts).
 */
import * as pulumi from "@pulumi/pulumi";
import { resourceTypeToken } from "../resources/serviceProviderClusterIdentityStatus";
import type { StackResource } from "./stackStateWire";
import { resourcesOfStackAnswer, stackOutputsRequest } from "./stackStateWire";

/**
 * The engine's built-in invoke that returns a stack's resources from its last saved state, by URN
 * with type and outputs (pkg/resource/deploy/builtins.go, `readStackResourceOutputs`). It reads the
 * backend the command runs against (the file backend, Azure Blob Storage or Pulumi Cloud alike) and
 * registers nothing but the engine's built-in `pulumi` provider, unlike a StackReference; it reads
 * the resources themselves rather than the `clusters` output, which a `refresh --run-program` of
 * another list rewrites while the resources stay.
 */
const readStackResourceOutputsToken = "pulumi:pulumi:readStackResourceOutputs";

/** One cluster resource of the stack's last saved state. */
export interface HeldCluster {
  /** The resource's name (the last part of its URN). */
  readonly name: string;
  /** The cluster ID its outputs record; undefined when they record none (outputs this version cannot read). */
  readonly clusterResourceId: string | undefined;
}

/** What the engine's `readStackResourceOutputs` answers, decoded by the SDK's `invoke`. */
interface StackResourceOutputs {
  readonly outputs?: Readonly<Record<string, { readonly type?: unknown; readonly outputs?: { readonly clusterResourceId?: unknown } }>>;
}

/** gRPC status codes (grpc/doc/statuscodes.md). */
const grpcCancelled = 1;
const grpcUnavailable = 14;

/** The resource monitor's RPC path the SDK's `invoke` calls (pulumirpc.ResourceMonitor). */
const invokeMethod = "/pulumirpc.ResourceMonitor/Invoke";

/** The part of the SDK's monitor client (a @grpc/grpc-js Client) that sends one request with our own encoding. */
interface UnaryCaller {
  makeUnaryRequest(
    method: string,
    serialize: (request: Uint8Array) => Buffer,
    deserialize: (answer: Buffer) => Buffer,
    request: Uint8Array,
    callback: (error: { readonly code?: number; readonly details?: string; readonly message: string } | null, answer?: Buffer) => void,
  ): unknown;
}

/**
 * The resources of the cluster type in the running stack's last saved state. Against the engine,
 * one `readStackResourceOutputs` through the SDK's own monitor client, its answer read by
 * program/stackStateWire.ts; against `pulumi.runtime.setMocks` (whose monitor answers invokes in
 * JavaScript, with no wire), through the SDK's `invoke`.
 */
async function stackResources(stack: string): Promise<StackResource[]> {
  const monitor = pulumi.runtime.getMonitor() as Partial<UnaryCaller> | undefined;
  if (typeof monitor?.makeUnaryRequest !== "function") {
    const answer = (await pulumi.runtime.invoke(readStackResourceOutputsToken, { stackName: stack })) as StackResourceOutputs;
    return Object.entries(answer.outputs ?? {})
      .filter(([, resource]) => resource.type === resourceTypeToken)
      .map(([urn, resource]) => {
        const clusterResourceId = resource.outputs?.clusterResourceId;
        return { urn, clusterResourceId: typeof clusterResourceId === "string" ? clusterResourceId : undefined };
      });
  }
  // As the SDK's invoke does first: the stack's own registration is settled.
  await pulumi.runtime.awaitStackRegistrations();
  const caller = monitor as UnaryCaller;
  const answer = await new Promise<Buffer>((resolve, reject) => {
    caller.makeUnaryRequest(
      invokeMethod,
      (request) => Buffer.from(request),
      (bytes) => bytes,
      stackOutputsRequest(readStackResourceOutputsToken, stack),
      (error, bytes) => {
        if (error === null && bytes !== undefined) return resolve(bytes);
        // As the SDK's invoke does: an engine going away (UNAVAILABLE, CANCELLED) ends the program's RPCs.
        if (error?.code === grpcUnavailable || error?.code === grpcCancelled) {
          pulumi.runtime.terminateRpcs();
          return reject(new Error("Resource monitor is terminating"));
        }
        // Otherwise the engine's own words, as the SDK's invoke reports them.
        reject(new Error(error?.details ?? error?.message ?? "no answer"));
      },
    );
  });
  return resourcesOfStackAnswer(answer, readStackResourceOutputsToken, resourceTypeToken);
}

/**
 * The cluster resources ({@link resourceTypeToken}) of the running stack's last saved state, sorted
 * by name. The stack is named in full (organization, project, stack): a bare name would resolve to
 * the user's default organization on Pulumi Cloud.
 * @param purpose - Why the program reads it, and `advice`, how to go ahead without: for the message of a failed read.
 * @throws Error naming the stack, the purpose, the engine's error and the advice, when the engine cannot read it.
 */
export async function clustersInStack(purpose: string, advice: string): Promise<HeldCluster[]> {
  const stack = runningStackName();
  let resources: StackResource[];
  try {
    resources = await stackResources(stack);
  } catch (error) {
    throw new Error(`could not read the state of stack ${stack} ${purpose}: ${error instanceof Error ? error.message : String(error)}; ${advice}`, {
      cause: error,
    });
  }
  return resources
    .map(({ urn, clusterResourceId }) => ({ name: urn.split("::").slice(3).join("::"), clusterResourceId }))
    .sort((left, right) => left.name.localeCompare(right.name, "en", { numeric: true }));
}

/** The running stack's full name: `<organization>/<project>/<stack>` (`organization` on the file and Azure Blob backends). */
export function runningStackName(): string {
  return `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
}

/** At most five names, then how many more: how refusals list clusters. */
export function someNames(names: readonly string[]): string {
  const shown = 5;
  return names.slice(0, shown).join(", ") + (names.length > shown ? ` and ${names.length - shown} more` : "");
}
