/**
 * The stable entry the provider text (provider/providerLoader.ts) requires inside the provider
 * host: `aro-hcp-identity-status/provider`, which package.json maps to
 * `dist/resources/managedIdentityStatusProvider.js`, and its `managedIdentityStatusImplementation`
 * export. State stores that text for every resource, so this path and export stay here while the
 * implementation lives in provider/.
 */
export { managedIdentityStatusImplementation } from "./provider/managedIdentityStatusProvider";
