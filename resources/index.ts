/**
 * The package's public surface, and all of it (package.json exports it as `.`): the resource, its
 * argument type, the types of its outputs, the type token a `pulumi.runtime.setMocks` test
 * recognises it by, and two opt-ins for programs that declare large fleets. The provider factory,
 * the provider text and the other internals are not exported: the project's own tests import them
 * by source path, and package.json's only other entry, `./provider`, is for the provider host.
 */
export { ServiceProviderClusterIdentityStatus, registerWithoutStackTraces, resourceTypeToken } from "./serviceProviderClusterIdentityStatus";
export type { ServiceProviderClusterIdentityStatusArgs } from "./serviceProviderClusterIdentityStatus";
export type { ProviderOutputs } from "./provider/providerOutputs";
export type { OperatorStatusEntry, OutputsStatus } from "./core/outputsStatus";
export { quietSdkRegistrationDebugLogs } from "./sdkRegistrationDebugLogs";
