/**
 * The provider host's entry, `aro-hcp-identity-status/provider`, which the provider text stored in
 * state requires (provider/providerLoader.ts): this path and export stay. Loading it in the host
 * also bounds the host's heap growth (provider/hostHeap.ts).
 */
import { boundHostHeapGrowth } from "./provider/hostHeap";

boundHostHeapGrowth();

export { managedIdentityStatusImplementation as implementation } from "./provider/managedIdentityStatusProvider";
