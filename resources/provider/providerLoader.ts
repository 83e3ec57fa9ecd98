/**
 * The provider text every resource stores in state (`__provider`, twice: inputs and outputs).
 *
 * The dynamic-provider host (@pulumi/pulumi cmd/dynamic-provider) compiles that text with
 * require-from-string and calls its `handler()` once per distinct text per process; the object
 * `handler` returns serves every call. So the text does not need to be produced by Pulumi's
 * closure serializer, which wraps each function in ~175 bytes and, for this project, produced
 * 3 KB at best: it is written here, by hand, and `handler` returns the installed implementation
 * itself (`managedIdentityStatusImplementation` of
 * `aro-hcp-identity-status/dist/resources/managedIdentityStatusProvider.js`, the stable entry that
 * every loader ever written into state requires). The text has no paths, configuration or
 * secrets, and is the same for every program, so it never differs between runs.
 *
 * The compiled module has an empty file name, so its own `require` only searches the node_modules
 * folders of the host's working directory (the program's). The text therefore resolves the
 * package path with a `require` created (`module.createRequire`) for, in order:
 * 1. `ARO_HCP_PROJECT_DIR`, when set (the project's engine wrapper, tests and bench set it);
 * 2. the working directory: a consumer program's node_modules (package.json exports
 *    `./dist/resources/*`), or, inside a checkout of this package, Node's self-reference by name.
 * Once per provider host; Node's require cache keeps the module. When neither place has the
 * package, `handler` throws, naming both directories, and the engine shows that message.
 */

/** The package path of the implementation (package.json exports `./dist/resources/*`). */
export const implementationSpecifier = "aro-hcp-identity-status/dist/resources/managedIdentityStatusProvider.js";

/** The `__provider` text of every ServiceProviderClusterIdentityStatus resource. */
export const providerText = `// aro-hcp-identity-status: handler() returns the installed implementation
exports.handler = () => {
  const specifier = "${implementationSpecifier}";
  const directories = [process.env.ARO_HCP_PROJECT_DIR, process.cwd()].filter((directory) => directory);
  for (const directory of directories) {
    let file;
    try {
      file = require("module").createRequire(directory + "/package.json").resolve(specifier);
    } catch {
      continue;
    }
    return require(file).managedIdentityStatusImplementation;
  }
  throw new Error("cannot find " + specifier + " from " + directories.join(" or ") + ": npm install it in the program, or set ARO_HCP_PROJECT_DIR to a built checkout");
};
`;
