/**
 * The resource users declare: one per cluster. Its provider reads the data plane operator
 * identities from Azure and records their clientId/principalId in the cluster's
 * ServiceProviderCluster document.
 */
import * as pulumi from "@pulumi/pulumi";
import { providerText } from "./provider/providerLoader";
import type { ProviderOutputs } from "./provider/providerOutputs";
import type { OutputsStatus } from "./core/outputsStatus";
import { statusFromOutputs } from "./core/outputsStatus";
import { quietSdkRegistrationLines, sdkDebugLogsFrom } from "./sdkRegistrationDebugLogs";

/** Type token parts: shows as `pulumi-nodejs:dynamic/aroHcp:ServiceProviderClusterIdentityStatus`. */
export const resourceModule = "aroHcp";
export const resourceTypeName = "ServiceProviderClusterIdentityStatus";
/** The resource's type token, as the engine and its state name it. */
export const resourceTypeToken = `pulumi-nodejs:dynamic/${resourceModule}:${resourceTypeName}`;

/** Inputs of {@link ServiceProviderClusterIdentityStatus}. */
export interface ServiceProviderClusterIdentityStatusArgs {
  /** ARM ID of the HCP cluster: `/subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/<name>`. */
  readonly clusterResourceId: pulumi.Input<string>;
  /**
   * Operator name → ARM ID of a `Microsoft.ManagedIdentity/userAssignedIdentities`. When omitted,
   * the desired set is read from the cluster's HCPOpenShiftCluster document, as upstream does.
   */
  readonly dataPlaneOperators?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** ARM ID of the cluster's service managed identity (recorded; the credential comes from config). */
  readonly serviceManagedIdentity?: pulumi.Input<string>;
}

/**
 * The recorded data plane operator managed identity status of one cluster.
 *
 * A dynamic resource declared directly (what `pulumi.dynamic.Resource` does: a custom resource of
 * package `pulumi-nodejs` whose `__provider` input is the provider's module text), so that the
 * text is the small hand-written one of providerLoader.ts rather than a serialized closure.
 */
export class ServiceProviderClusterIdentityStatus extends pulumi.CustomResource {
  declare readonly clusterResourceId: pulumi.Output<string>;
  declare readonly inputsDigest: pulumi.Output<string>;
  declare readonly desiredSource: pulumi.Output<ProviderOutputs["desiredSource"]>;
  /**
   * The persisted subtree by operator name (core/outputsStatus.ts). State holds it as JSON text
   * (outputs schema 3); this output is the object, also from older state or a mock's object.
   */
  declare readonly status: pulumi.Output<OutputsStatus>;
  declare readonly identityCount: pulumi.Output<number>;
  declare readonly resolvedCount: pulumi.Output<number>;
  declare readonly notFoundCount: pulumi.Output<number>;
  declare readonly failedCount: pulumi.Output<number>;
  /** Why nothing was done (`clusterDeleting`); undefined otherwise. */
  declare readonly skippedReason: pulumi.Output<string | undefined>;
  /** What the last refresh found changed outside Pulumi; undefined when nothing. */
  declare readonly drift: pulumi.Output<string[] | undefined>;

  constructor(name: string, args: ServiceProviderClusterIdentityStatusArgs, options?: pulumi.CustomResourceOptions) {
    // The SDK's three debug lines per registration of this type stay out of the engine unless
    // ARO_HCP_SDK_DEBUG_LOGS=all (sdkRegistrationDebugLogs.ts); a bad value fails here, first.
    sdkDebugLogsFrom(process.env);
    quietSdkRegistrationLines(resourceTypeToken);
    // V8's stack traces are off while the SDK registers the resource, for two costs:
    // - CPU: the SDK wraps every input property in a promise that records a formatted stack trace
    //   (`debuggablePromise`, shown only when a program leaks promises), 2.2 ms per resource with
    //   its 13 properties, 45 % of a fleet program's own cost (docs/performance.md);
    // - state: the SDK records the caller's stack (`Resource.callsites`, which lifts the limit
    //   itself) and the engine stores it with the resource, about 330 bytes per cluster, always
    //   the same loop in a fleet program. Formatting every stack as one line with no frames leaves
    //   it nothing to record: the engine stores no source position for this resource.
    // An error thrown meanwhile keeps its name and message. Both are restored before anything else runs.
    const stackTraceLimit = Error.stackTraceLimit;
    // eslint-disable-next-line @typescript-eslint/unbound-method -- put back as it was; never called here
    const prepareStackTrace = Error.prepareStackTrace;
    Error.stackTraceLimit = 0;
    Error.prepareStackTrace = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}`.split("\n")[0] : "");
    try {
      super(
        resourceTypeToken,
        name,
        {
          ...args,
          __provider: providerText,
          inputsDigest: undefined,
          desiredSource: undefined,
          status: undefined,
          identityCount: undefined,
          resolvedCount: undefined,
          notFoundCount: undefined,
          failedCount: undefined,
          skippedReason: undefined,
          drift: undefined,
        },
        options,
      );
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
      Error.prepareStackTrace = prepareStackTrace;
    }
    // The SDK made `status` the provider's value, the JSON text: give the program the object.
    const stored = this.status as pulumi.Output<unknown>;
    // Typed as before: undefined only where it always was (a mock without it, unparsable state).
    (this as { status: pulumi.Output<OutputsStatus> }).status = stored.apply((value) => statusFromOutputs(value) as OutputsStatus);
  }
}
