/**
 * The provider text every resource stores in state (`__provider`, twice). The dynamic-provider host
 * compiles it with require-from-string and calls `handler()` once per distinct text per process, so
 * it is written by hand (the closure serializer's output is kilobytes per cluster) and returns the
 * installed implementation. It has no paths, configuration or secrets, so it never differs between
 * runs. The compiled module has no file name, so its `require` would search only the working
 * directory's node_modules: the text resolves the package from ARO_HCP_PROJECT_DIR (set by the
 * engine wrapper, tests and bench), then from the working directory (a consumer's node_modules, or
 * Node's self-reference inside a checkout), and otherwise throws saying how to install it.
 */

/** The package path of the implementation: package.json exports `./provider`. */
export const implementationSpecifier = "aro-hcp-identity-status/provider";

/** Compact, as it is stored twice per cluster. Only the resolution is inside `try`, so an implementation that fails to load reports its own error. */
export const providerText =
  `exports.handler=()=>{const s="${implementationSpecifier}";for(const d of[process.env.ARO_HCP_PROJECT_DIR,process.cwd()]){let f;` +
  `try{f=require("module").createRequire(d+"/_").resolve(s)}catch{continue}return require(f).implementation}` +
  `throw Error(s+" not found: npm install it in the program, or set ARO_HCP_PROJECT_DIR")}`;
