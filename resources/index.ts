/**
 * The package's public surface, and all of it (package.json exports it as `.`): the resource, its
 * argument type, the types of its outputs, the type token a `pulumi.runtime.setMocks` test
 * recognises it by and the mock state it returns for it, and two opt-ins for programs that declare
 * large fleets. The provider factory, the provider text, the outputs as the provider stores them and
 * the other internals are not exported: the project's own tests import them by source path, and
 * package.json's only other entry, `./provider`, is for the provider host.
 */
export { ServiceProviderClusterIdentityStatus, registerWithoutStackTraces, resourceTypeToken } from "./serviceProviderClusterIdentityStatus";
export type { ServiceProviderClusterIdentityStatusArgs } from "./serviceProviderClusterIdentityStatus";
export { identityStatusMockState } from "./identityStatusMocks";
export type { IdentityStatusMock, MockedIdentityEntry } from "./identityStatusMocks";
export type { OperatorStatusEntry, OutputsStatus } from "./core/outputsStatus";
export type { MsiOutputsStatus } from "./core/msiOutputs";
export { quietSdkRegistrationDebugLogs } from "./sdkRegistrationDebugLogs";
