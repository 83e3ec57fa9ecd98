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
  /** The persisted subtree by operator name (core/outputsStatus.ts); `{}` when the state holds none. */
  declare readonly status: pulumi.Output<OutputsStatus>;
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
  /** The MSI half's recheck time and how many identities it records (core/msiOutputs.ts). */
  declare readonly msiStatus: pulumi.Output<MsiOutputsStatus>;
  /** Why nothing was done (`clusterDeleting`); undefined otherwise. */
  declare readonly skippedReason: pulumi.Output<string | undefined>;
  /** Why the MSI half was not looked at (`identityUrlNotSet`, as upstream skips such a cluster); undefined otherwise. */
  declare readonly msiSkippedReason: pulumi.Output<string | undefined>;
  /** What the last refresh found changed outside Pulumi; undefined when nothing. */
  declare readonly drift: pulumi.Output<string[] | undefined>;
  /** Why the last create or update of the cluster failed and which halves; undefined after a pass that succeeded. */
  declare readonly failure: pulumi.Output<PassFailure | undefined>;

  private readonly derived: Record<string, pulumi.Output<unknown>>;
  private declaredOperators: ServiceProviderClusterIdentityStatusArgs["dataPlaneOperators"];

  private derive<T>(name: string, make: () => pulumi.Output<T>): pulumi.Output<T> {
    return (this.derived[name] ??= make()) as pulumi.Output<T>;
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
    // Set here, not as initializers: the es2020 build requires super() first in a class with initializers.
    this.derived = {};
    this.declaredOperators = declared.dataPlaneOperators;
    const self = this as unknown as Record<"status" | "msiStatus" | "skippedReason" | "msiSkippedReason" | "drift", pulumi.Output<unknown>>;
    // The SDK made `status` the provider's JSON text: give the program the object, `{}` when unreadable.
    self.status = self.status.apply((value) => statusFromOutputs(value) ?? {});
    self.msiStatus = self.msiStatus.apply((value) => msiStatusFromOutputs(value));
    // A failed pass stores its absent optional outputs as null (provider/providerOutputs.ts failedPassOutputs): undefined here, as after any other pass.
    for (const key of ["skippedReason", "msiSkippedReason", "drift"] as const) self[key] = self[key].apply((value) => value ?? undefined);
  }
}
