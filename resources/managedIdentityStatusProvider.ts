/**
 * The stable entry the serialized loader requires inside the provider host
 * (`dist/resources/managedIdentityStatusProvider.js`). Every loader ever written into a stack's
 * state names this path, so it stays here while the implementation lives in provider/.
 */
export { managedIdentityStatusImplementation } from "./provider/managedIdentityStatusProvider";
