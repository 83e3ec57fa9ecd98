/**
 * The provider host's entry, `aro-hcp-identity-status/provider`, which the provider text in state
 * requires (provider/providerLoader.ts): this path and export stay. It also bounds the host's heap growth.
 */
import { boundHostHeapGrowth } from "./provider/hostHeap";

boundHostHeapGrowth();

export { managedIdentityStatusImplementation as implementation } from "./provider/managedIdentityStatusProvider";
