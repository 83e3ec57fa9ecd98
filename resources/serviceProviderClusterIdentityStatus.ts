/** The resource users declare, one per cluster: its provider records the cluster's managed identity IDs in its ServiceProviderCluster document. */
import * as pulumi from "@pulumi/pulumi";
import { providerText } from "./provider/providerLoader";
import type { OutputsStatus } from "./core/outputsStatus";
import { statusCounts, statusFromOutputs } from "./core/outputsStatus";
import type { MsiOutputsStatus } from "./core/msiOutputs";
import { msiStatusFromOutputs } from "./core/msiOutputs";
import type { PassFailure } from "./provider/providerOutputs";

/** The resource's type token, as the engine's state and `pulumi.runtime.setMocks` name it. */
export const resourceTypeToken = "pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus";

let stackTracesOffWhileRegistering = false;

/**
 * Opt-in for a fleet program: each resource constructed afterwards is registered with V8's stack
 * traces off (the SDK records a formatted stack per property promise and per resource), and `Error`
 * is put back before the constructor returns. Returns a function that turns it off again.
 */
export function registerWithoutStackTraces(): () => void {
  stackTracesOffWhileRegistering = true;
  return () => {
    stackTracesOffWhileRegistering = false;
  };
}

function stackTracesOff(): () => void {
  const stackTraceLimit = Error.stackTraceLimit;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was; never called here
  const prepareStackTrace = Error.prepareStackTrace;
  Error.stackTraceLimit = 0;
  Error.prepareStackTrace = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}`.split("\n")[0] : "");
  return () => {
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
  };
}

/**
 * The outputs the resource gives the program in another form than the engine's: `status` and
 * `msiStatus` are stored as JSON text, and a failed pass stores its absent optional outputs as null
 * (provider/providerOutputs.ts failedPassOutputs), undefined for the program as after any other pass.
 */
export interface ConvertedOutputs {
  readonly status: OutputsStatus;
  readonly msiStatus: MsiOutputsStatus;
  readonly skippedReason: string | undefined;
  readonly msiSkippedReason: string | undefined;
  readonly drift: string[] | undefined;
}
export type ConvertedOutput = keyof ConvertedOutputs;

const engineOutputs = Symbol("engineOutputs");

export interface ServiceProviderClusterIdentityStatusArgs {
  /** ARM ID of the HCP cluster: `/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/<name>`. */
  readonly clusterResourceId: pulumi.Input<string>;
  /** Operator name → user-assigned identity ARM ID. When omitted, read from the cluster document (the authority), as upstream does. */
  readonly dataPlaneOperators?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** ARM ID of the cluster's service managed identity for `clusterServiceManagedIdentity` mode; only for a cluster whose document names none yet. */
  readonly serviceManagedIdentity?: pulumi.Input<string>;
  /** The cluster's Managed Identities data plane identity URL (the cluster document's when omitted). */
  readonly managedIdentitiesDataPlaneIdentityURL?: pulumi.Input<string>;
}

/**
 * The recorded managed identity status of one cluster: data plane operators (`status`) and control
 * plane operators with the service managed identity (`msiStatus`). The documents are upstream's, so
 * `retainOnDelete` defaults to true and delete writes nothing. Declared as a custom resource of
 * `pulumi-nodejs` whose `__provider` is providerLoader.ts's small text, not a serialized closure.
 */
export class ServiceProviderClusterIdentityStatus extends pulumi.CustomResource {
  declare readonly clusterResourceId: pulumi.Output<string>;
  declare readonly inputsDigest: pulumi.Output<string>;
  /** Where the desired set was declared: `inputs` (the resource's dataPlaneOperators) or `clusterDocument`. */
  get desiredSource(): pulumi.Output<"inputs" | "clusterDocument"> {
    return this.derive("desiredSource", () =>
      pulumi.output(this.declaredOperators).apply((operators) => (operators === undefined || operators === null ? "clusterDocument" : "inputs")),
    );
  }
  /** The persisted subtree by operator name (core/outputsStatus.ts); `{}` when the state holds none. Made when first read. */
  get status(): pulumi.Output<OutputsStatus> {
    return this.converted("status");
  }
  /** Counts derived from `status`, each made when first read. */
  get identityCount(): pulumi.Output<number> {
    return this.count("identityCount");
  }
  get resolvedCount(): pulumi.Output<number> {
    return this.count("resolvedCount");
  }
  get notFoundCount(): pulumi.Output<number> {
    return this.count("notFoundCount");
  }
  get failedCount(): pulumi.Output<number> {
    return this.count("failedCount");
  }
  /** The MSI half's recheck time and how many identities it records (core/msiOutputs.ts). Made when first read. */
  get msiStatus(): pulumi.Output<MsiOutputsStatus> {
    return this.converted("msiStatus");
  }
  /** Why nothing was done (`clusterDeleting`); undefined otherwise. */
  get skippedReason(): pulumi.Output<string | undefined> {
    return this.converted("skippedReason");
  }
  /** Why the MSI half was not looked at (`identityUrlNotSet`, as upstream skips such a cluster); undefined otherwise. */
  get msiSkippedReason(): pulumi.Output<string | undefined> {
    return this.converted("msiSkippedReason");
  }
  /** What the last refresh found changed outside Pulumi; undefined when nothing. */
  get drift(): pulumi.Output<string[] | undefined> {
    return this.converted("drift");
  }
  // The SDK sets each output on the resource while registering it (only the SDK calls these):
  // kept as the engine gave it, and converted for the program when first read.
  set status(value: pulumi.Output<unknown>) {
    this.keep("status", value);
  }
  set msiStatus(value: pulumi.Output<unknown>) {
    this.keep("msiStatus", value);
  }
  set skippedReason(value: pulumi.Output<unknown>) {
    this.keep("skippedReason", value);
  }
  set msiSkippedReason(value: pulumi.Output<unknown>) {
    this.keep("msiSkippedReason", value);
  }
  set drift(value: pulumi.Output<unknown>) {
    this.keep("drift", value);
  }
  /** Why the last create or update of the cluster failed and which halves; undefined after a pass that succeeded. */
  declare readonly failure: pulumi.Output<PassFailure | undefined>;

  declare [engineOutputs]: Partial<Record<ConvertedOutput, pulumi.Output<unknown>>> | undefined;

  private keep(name: ConvertedOutput, value: pulumi.Output<unknown>): void {
    (this[engineOutputs] ??= {})[name] = value;
  }

  private converted<Name extends ConvertedOutput>(name: Name): pulumi.Output<ConvertedOutputs[Name]> {
    return this.derive(name, () => engineOutput(this, name).apply((value) => programValue(name, value)));
  }

  // Set by the first read, also while the SDK registers the resource: see derive.
  declare private derived: Record<string, pulumi.Output<unknown>> | undefined;
  private declaredOperators: ServiceProviderClusterIdentityStatusArgs["dataPlaneOperators"];

  private derive<T>(name: string, make: () => pulumi.Output<T>): pulumi.Output<T> {
    return ((this.derived ??= {})[name] ??= make()) as pulumi.Output<T>;
  }

  private count(name: keyof ReturnType<typeof statusCounts>): pulumi.Output<number> {
    return this.derive(name, () => this.derive("counts", () => this.status.apply(statusCounts)).apply((counts) => counts[name]));
  }

  constructor(name: string, args: ServiceProviderClusterIdentityStatusArgs, options?: pulumi.CustomResourceOptions) {
    // Each argument read once: a program's arguments may be getters.
    const declared = { ...args };
    const restoreStackTraces = stackTracesOffWhileRegistering ? stackTracesOff() : undefined;
    try {
      super(
        resourceTypeToken,
        name,
        {
          ...declared,
          __provider: providerText,
          inputsDigest: undefined,
          status: undefined,
          skippedReason: undefined,
          msiStatus: undefined,
          msiSkippedReason: undefined,
          drift: undefined,
          failure: undefined,
        },
        { ...options, retainOnDelete: options?.retainOnDelete ?? true },
      );
    } finally {
      restoreStackTraces?.();
    }
    // Set here, not as an initializer: the es2020 build requires super() first in a class with initializers.
    this.declaredOperators = declared.dataPlaneOperators;
  }
}

/** A converted output's value as the program sees it, from the engine's (the resource's getters use it). Pure. */
export function programValue<Name extends ConvertedOutput>(name: Name, value: unknown): ConvertedOutputs[Name] {
  switch (name) {
    case "status":
      return (statusFromOutputs(value) ?? {}) as ConvertedOutputs[Name];
    case "msiStatus":
      return msiStatusFromOutputs(value) as ConvertedOutputs[Name];
    default:
      return (value ?? undefined) as ConvertedOutputs[Name];
  }
}

/**
 * A converted output as the engine gave it, before {@link programValue}: for a fleet program that
 * joins the outputs of thousands of resources at once and converts them inside its one join, where
 * an apply per resource and output would make an Output each (program/declareFleet.ts).
 */
export function engineOutput(resource: ServiceProviderClusterIdentityStatus, name: ConvertedOutput): pulumi.Output<unknown> {
  const output = resource[engineOutputs]?.[name];
  if (output === undefined) throw new Error(`the SDK did not set the ${name} output of ${resource.constructor.name}`);
  return output;
}
