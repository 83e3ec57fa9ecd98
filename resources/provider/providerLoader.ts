/**
 * The provider object Pulumi serializes into state (`__provider`, stored twice per resource: inputs
 * and outputs): seven one-line methods that require the installed implementation by package path
 * and forward to it. 3.0 KB of text, most of it the serializer's wrapper around each of the eight
 * functions; the previous loader, which searched the file system up to the root on every call,
 * was 4.6 KB, and the implementation itself would be ~115 KB.
 *
 * Inside the provider host the text is compiled by require-from-string as a module with an empty
 * file name, so its own `require` only searches the node_modules folders of the host's working
 * directory (the program's). `load` therefore resolves the package path from a
 * `require` created for a directory (Node's `createRequire`), which covers both ways the code runs:
 * - a consumer program with the package installed: node_modules/aro-hcp-identity-status of the
 *   program directory (package.json exports `./dist/resources/*`);
 * - this checkout (program/, e2e tests, bench): Node's package self-reference by name, which works
 *   from any directory whose nearest package.json is this project's.
 * `ARO_HCP_PROJECT_DIR`, when set (the project's engine wrapper always sets it), is tried first,
 * then the working directory. The implementation is resolved once per provider host: the result is
 * kept in `loaded`, and Node's require cache holds the module.
 *
 * `dist/resources/managedIdentityStatusProvider.js` is the stable entry: every loader ever written
 * into a stack's state requires it and reads `managedIdentityStatusImplementation`.
 * Everything here must stay free of imports at run time: only the functions' text reaches the host.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- required inside the provider host, from the functions' text */
import type * as pulumi from "@pulumi/pulumi";

/**
 * The package path every loader requires (package.json exports `./dist/resources/*`). `load`
 * repeats it as a literal: a reference to this constant would serialize the module's exports.
 */
export const implementationSpecifier = "aro-hcp-identity-status/dist/resources/managedIdentityStatusProvider.js";

type Implementation = Required<pulumi.dynamic.ResourceProvider>;

/**
 * Filled inside the provider host on the first call. Never filled in the program's process (the
 * program only serializes the loader), so it serializes as `{}`.
 */
const loaded: { implementation?: Implementation } = {};

/**
 * Resolves and requires the implementation, once per process. Kept short: its text is in state.
 * @throws Error naming the directories it looked from, when the package is found from none.
 */
export function load(): Implementation {
  if (loaded.implementation !== undefined) {
    return loaded.implementation;
  }
  const specifier = "aro-hcp-identity-status/dist/resources/managedIdentityStatusProvider.js";
  const directories = [process.env.ARO_HCP_PROJECT_DIR, process.cwd()].filter((directory) => directory);
  for (const directory of directories) {
    let file: string;
    try {
      file = (require("node:module") as typeof import("node:module")).createRequire(`${directory}/package.json`).resolve(specifier);
    } catch {
      continue;
    }
    loaded.implementation = (require(file) as { managedIdentityStatusImplementation: Implementation }).managedIdentityStatusImplementation;
    return loaded.implementation;
  }
  throw new Error(`cannot find ${specifier} from ${directories.join(" or ")}: npm install it in the program, or set ARO_HCP_PROJECT_DIR to a built checkout`);
}

/** The production provider passed to every resource; the only object ever serialized. */
export const managedIdentityStatusProvider: pulumi.dynamic.ResourceProvider = {
  configure: (request) => load().configure(request),
  check: (olds, news) => load().check(olds, news),
  diff: (id, olds, news) => load().diff(id, olds, news),
  create: (inputs) => load().create(inputs),
  read: (id, properties) => load().read(id, properties),
  update: (id, olds, news) => load().update(id, olds, news),
  delete: (id, properties) => load().delete(id, properties),
};
