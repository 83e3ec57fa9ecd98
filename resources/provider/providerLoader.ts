/**
 * The provider text every resource stores in state (`__provider`, twice: inputs and outputs).
 *
 * The dynamic-provider host (@pulumi/pulumi cmd/dynamic-provider) compiles that text with
 * require-from-string and calls its `handler()` once per distinct text per process; the object
 * `handler` returns serves every call. So the text does not need to be produced by Pulumi's
 * closure serializer, which wraps each function and, for this project, produces kilobytes stored
 * twice per cluster: it is written here, by hand, and `handler` returns the installed implementation
 * itself (`implementation` of `aro-hcp-identity-status/provider`, which is
 * `dist/resources/providerEntry.js`, the stable entry this text requires). The
 * text has no paths, configuration or secrets, and is the same for every program, so it never
 * differs between runs.
 *
 * The compiled module has an empty file name, so its own `require` only searches the node_modules
 * folders of the host's working directory (the program's). The text therefore resolves the
 * package path with a `require` created (`module.createRequire`) for, in order:
 * 1. `ARO_HCP_PROJECT_DIR`, when set (the project's engine wrapper, tests and bench set it);
 * 2. the working directory: a consumer program's node_modules, or, inside a checkout of this
 *    package, Node's self-reference by name.
 * Once per provider host; Node's require cache keeps the module. When neither place has the
 * package, `handler` throws, saying how to install it, and the engine shows that message (the
 * program's working directory and ARO_HCP_PROJECT_DIR are the only places it looks).
 */

/** The package path of the implementation: package.json exports `./provider`. */
export const implementationSpecifier = "aro-hcp-identity-status/provider";

/**
 * The `__provider` text of every ServiceProviderClusterIdentityStatus resource, written compact:
 * the engine stores it twice per cluster. Only the resolution is inside `try`, so an
 * implementation that fails to load reports its own error.
 */
export const providerText =
  `exports.handler=()=>{const s="${implementationSpecifier}";for(const d of[process.env.ARO_HCP_PROJECT_DIR,process.cwd()]){let f;` +
  `try{f=require("module").createRequire(d+"/_").resolve(s)}catch{continue}return require(f).implementation}` +
  `throw Error(s+" not found: npm install it in the program, or set ARO_HCP_PROJECT_DIR")}`;
