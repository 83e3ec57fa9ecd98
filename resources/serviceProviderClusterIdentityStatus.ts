/**
 * The resource users declare: one per cluster. Its provider reads the data plane operator
 * identities from Azure and records their clientId/principalId in the cluster's
 * ServiceProviderCluster document.
 */
import * as pulumi from "@pulumi/pulumi";
import { providerText } from "./provider/providerLoader";
import type { OutputsStatus } from "./core/outputsStatus";
import { statusCounts, statusFromOutputs } from "./core/outputsStatus";
import type { MsiOutputsStatus } from "./core/msiOutputs";
import { msiStatusFromOutputs } from "./core/msiOutputs";
import type { PassFailure } from "./provider/providerOutputs";

/** Type token parts: shows as `pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus`. */
const resourceModule = "aroHcp";
const resourceTypeName = "ServiceProviderClusterIdentityStatus";
/** The resource's type token, as the engine's state and a `pulumi.runtime.setMocks` test name it. */
export const resourceTypeToken = `pulumi-nodejs:dynamic/${resourceModule}:${resourceTypeName}`;

let stackTracesOffWhileRegistering = false;

/**
 * Opt-in for a program that declares many of these resources: each one constructed afterwards is
 * registered with V8's stack traces off. Off by default: a constructor then leaves `Error` alone.
 *
 * While the SDK registers a resource (the synchronous `super` call), it wraps every property in a
 * promise that records a formatted stack trace (`debuggablePromise`) and records the caller's stack
 * (`Resource.callsites`), which the engine stores once per resource. With this on, the constructor
 * sets `Error.stackTraceLimit` to 0 and `Error.prepareStackTrace` to a one-line formatter for that
 * call only, and puts both back before it returns, also when it throws. An error thrown meanwhile
 * keeps its name and message without frames; code the SDK calls from inside that call (its own,
 * and any resource transformation of the program) runs under the same settings.
 * @returns a function that turns it off again.
 */
export function registerWithoutStackTraces(): () => void {
  stackTracesOffWhileRegistering = true;
  return () => {
    stackTracesOffWhileRegistering = false;
  };
}

/** Turns stack traces off; returns what puts `Error` back as it was. */
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

/** Inputs of {@link ServiceProviderClusterIdentityStatus}. */
export interface ServiceProviderClusterIdentityStatusArgs {
  /** ARM ID of the HCP cluster: `/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/<name>`. */
  readonly clusterResourceId: pulumi.Input<string>;
  /**
   * Operator name → ARM ID of a `Microsoft.ManagedIdentity/userAssignedIdentities`. When omitted,
   * the desired set is read from the cluster's HCPOpenShiftCluster document, as upstream does; when
   * given, it must name the document's set (the document is the authority), and spares `diff` a read.
   */
  readonly dataPlaneOperators?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /**
   * ARM ID of the cluster's service managed identity: with `credentialMode`
   * `clusterServiceManagedIdentity`, whose credential reads the cluster's identities. The cluster
   * document names it and is the authority on it, so leave it out; declare it only for a cluster
   * whose document names none yet, and then as the identity the document will name (a declared
   * value is used as it is). No other mode reads as it.
   */
  readonly serviceManagedIdentity?: pulumi.Input<string>;
  /**
   * The cluster's identity URL at the Managed Identities data plane (the cluster document's
   * `properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL` when omitted), in
   * `clusterServiceManagedIdentity` mode.
   */
  readonly managedIdentitiesDataPlaneIdentityURL?: pulumi.Input<string>;
}

/**
 * The recorded managed identity status of one cluster, both halves: its data plane operators'
 * identities (`status`) and its control plane operators' identities with its service managed
 * identity (`msiStatus`).
 *
 * A dynamic resource declared directly (a custom resource of package `pulumi-nodejs` whose
 * `__provider` input is the provider's module text), so that the text is the small one of
 * providerLoader.ts rather than a serialized closure.
 *
 * The documents belong to upstream's backend, so `retainOnDelete` is true unless the options say
 * otherwise, and the provider's delete writes nothing either.
 */
export class ServiceProviderClusterIdentityStatus extends pulumi.CustomResource {
  declare readonly clusterResourceId: pulumi.Output<string>;
  declare readonly inputsDigest: pulumi.Output<string>;
  /** Where the desired set was declared: `inputs` (the resource's dataPlaneOperators) or `clusterDocument`. */
  get desiredSource(): pulumi.Output<"inputs" | "clusterDocument"> {
    return (this.derived.desiredSource ??= pulumi
      .output(this.declaredOperators)
      .apply((operators) => (operators === undefined || operators === null ? "clusterDocument" : "inputs")));
  }
  /** The persisted subtree by operator name (core/outputsStatus.ts); `{}` when the state holds none. */
  declare readonly status: pulumi.Output<OutputsStatus>;
  /**
   * Counts of the recorded data plane operator identities, derived from `status`. Each derived
   * output is made when first read: a fleet program that reads none of them does not pay for them.
   */
  get identityCount(): pulumi.Output<number> {
    return (this.derived.identityCount ??= this.counts().apply((value) => value.identityCount));
  }
  get resolvedCount(): pulumi.Output<number> {
    return (this.derived.resolvedCount ??= this.counts().apply((value) => value.resolvedCount));
  }
  get notFoundCount(): pulumi.Output<number> {
    return (this.derived.notFoundCount ??= this.counts().apply((value) => value.notFoundCount));
  }
  get failedCount(): pulumi.Output<number> {
    return (this.derived.failedCount ??= this.counts().apply((value) => value.failedCount));
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

  private readonly derived: {
    counts?: pulumi.Output<ReturnType<typeof statusCounts>>;
    identityCount?: pulumi.Output<number>;
    resolvedCount?: pulumi.Output<number>;
    notFoundCount?: pulumi.Output<number>;
    failedCount?: pulumi.Output<number>;
    desiredSource?: pulumi.Output<"inputs" | "clusterDocument">;
  };
  private declaredOperators: ServiceProviderClusterIdentityStatusArgs["dataPlaneOperators"];

  private counts(): pulumi.Output<ReturnType<typeof statusCounts>> {
    return (this.derived.counts ??= this.status.apply(statusCounts));
  }

  constructor(name: string, args: ServiceProviderClusterIdentityStatusArgs, options?: pulumi.CustomResourceOptions) {
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
    // The SDK made `status` the provider's value, the JSON text: give the program the object, `{}`
    // where there is none to read (a mock without it, unparsable state).
    const stored = this.status as pulumi.Output<unknown>;
    (this as { status: pulumi.Output<OutputsStatus> }).status = stored.apply((value) => statusFromOutputs(value) ?? {});
    // Set here, not as initializers: the es2020 build requires super() first in a class with initializers.
    this.derived = {};
    this.declaredOperators = declared.dataPlaneOperators;
    // A failed pass stores its absent optional outputs as null (provider/providerOutputs.ts failedPassOutputs): undefined here, as after any other pass.
    const self = this as { skippedReason: pulumi.Output<unknown>; msiSkippedReason: pulumi.Output<unknown>; drift: pulumi.Output<unknown> };
    for (const key of ["skippedReason", "msiSkippedReason", "drift"] as const) self[key] = self[key].apply((value) => value ?? undefined);
    const storedMsi = this.msiStatus as pulumi.Output<unknown>;
    (this as { msiStatus: pulumi.Output<MsiOutputsStatus> }).msiStatus = storedMsi.apply((value) => msiStatusFromOutputs(value));
  }
}
