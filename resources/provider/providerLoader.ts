/**
 * The provider text every resource stores in state (`__provider`, twice), written by hand and with no
 * paths, configuration or secrets, so it never differs between runs (docs/design.md, "Serialization").
 * The host compiles it without a file name, so its `require` would search only the working directory:
 * it resolves the package from ARO_HCP_PROJECT_DIR (the engine wrapper's, tests' and bench's), then
 * from the working directory (a consumer's node_modules, or Node's self-reference in a checkout).
 */

/** The package path of the implementation: package.json exports `./provider`. */
export const implementationSpecifier = "aro-hcp-identity-status/provider";

/** Compact, as it is stored twice per cluster. Only the resolution is inside `try`, so an implementation that fails to load reports its own error. */
export const providerText =
  `exports.handler=()=>{const s="${implementationSpecifier}";for(const d of[process.env.ARO_HCP_PROJECT_DIR,process.cwd()]){let f;` +
  `try{f=require("module").createRequire(d+"/_").resolve(s)}catch{continue}return require(f).implementation}` +
  `throw Error(s+" not found: npm install it in the program, or set ARO_HCP_PROJECT_DIR")}`;
