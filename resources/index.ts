/**
 * Public door of the package: the resource, its argument type and the provider factory.
 */
export { ServiceProviderClusterIdentityStatus, resourceModule, resourceTypeName } from "./serviceProviderClusterIdentityStatus";
export type { ServiceProviderClusterIdentityStatusArgs } from "./serviceProviderClusterIdentityStatus";
export { createManagedIdentityStatusProvider, managedIdentityStatusImplementation } from "./provider/managedIdentityStatusProvider";
export { providerText } from "./provider/providerLoader";
export type { ProviderInputs } from "./provider/providerInputs";
export type { ProviderOutputs } from "./provider/providerOutputs";
export type { OperatorStatusEntry, OutputsStatus } from "./core/outputsStatus";
export { projectName, settingsKeys } from "./core/settings";
