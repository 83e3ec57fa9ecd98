/**
 * The provider host's entry: what the provider text (provider/providerLoader.ts) requires as
 * `aro-hcp-identity-status/provider` (package.json maps it here) and the `implementation` it
 * hands the host. State stores that text for every resource, so this package path and export stay
 * while the implementation lives in provider/. Loading it in the dynamic-provider host also bounds
 * that process's heap growth (provider/hostHeap.ts), once per host.
 */
import { boundHostHeapGrowth } from "./provider/hostHeap";

boundHostHeapGrowth();

export { managedIdentityStatusImplementation as implementation } from "./provider/managedIdentityStatusProvider";
