/**
 * The stable entry the provider text requires inside the provider host
 * (`dist/resources/managedIdentityStatusProvider.js`). Every loader ever written into a stack's
 * state names this path and its `managedIdentityStatusImplementation` export, so both stay here
 * while the implementation lives in provider/.
 */
export { managedIdentityStatusImplementation } from "./provider/managedIdentityStatusProvider";
