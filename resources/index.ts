/** The package's whole public surface (`.`); its only other entry, `./provider`, is for the provider host. */
export { ServiceProviderClusterIdentityStatus, registerWithoutStackTraces, resourceTypeToken } from "./serviceProviderClusterIdentityStatus";
export type { ServiceProviderClusterIdentityStatusArgs } from "./serviceProviderClusterIdentityStatus";
export { identityStatusMockState } from "./identityStatusMocks";
export type { IdentityStatusMock, MockedIdentityEntry } from "./identityStatusMocks";
export type { OperatorStatusEntry, OutputsStatus } from "./core/outputsStatus";
export type { MsiOutputsStatus } from "./core/msiOutputs";
export type { HalfName, PassFailure } from "./provider/providerOutputs";
export { quietSdkRegistrationDebugLogs } from "./sdkRegistrationDebugLogs";
