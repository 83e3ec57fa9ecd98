/**
 * Public door of the package: the resource, its argument type and the provider factory.
 */
export { ServiceProviderClusterIdentityStatus, resourceModule, resourceTypeName } from "./serviceProviderClusterIdentityStatus";
export type { ServiceProviderClusterIdentityStatusArgs } from "./serviceProviderClusterIdentityStatus";
export { createManagedIdentityStatusProvider, managedIdentityStatusImplementation } from "./managedIdentityStatusProvider";
export { managedIdentityStatusProvider } from "./providerLoader";
export type { ProviderInputs, ProviderOutputs } from "./providerInputs";
export { projectName, settingsKeys } from "./settings";
