/**
 * The package's public surface, and all of it (package.json exports it as `.`): the resource, its
 * argument and output types, the type token and mock state a `pulumi.runtime.setMocks` test uses,
 * and two opt-ins for programs that declare large fleets. Everything else is internal; the
 * package's only other entry, `./provider`, is for the provider host.
 */
export { ServiceProviderClusterIdentityStatus, registerWithoutStackTraces, resourceTypeToken } from "./serviceProviderClusterIdentityStatus";
export type { ServiceProviderClusterIdentityStatusArgs } from "./serviceProviderClusterIdentityStatus";
export { identityStatusMockState } from "./identityStatusMocks";
export type { IdentityStatusMock, MockedIdentityEntry } from "./identityStatusMocks";
export type { OperatorStatusEntry, OutputsStatus } from "./core/outputsStatus";
export type { MsiOutputsStatus } from "./core/msiOutputs";
export type { HalfName, PassFailure } from "./provider/providerOutputs";
export { quietSdkRegistrationDebugLogs } from "./sdkRegistrationDebugLogs";
