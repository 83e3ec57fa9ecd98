/**
 * The provider object that Pulumi serializes into state: a small loader that, inside the
 * provider host, requires the installed implementation (managedIdentityStatusProvider.ts) and
 * forwards every call to it.
 *
 * Why not serialize the implementation itself: the engine stores the serialized text twice per
 * resource (inputs and outputs). The whole implementation serializes to about 90 KB, so a fleet of
 * 200 clusters would carry ~37 MB of identical code in every checkpoint the engine writes. The
 * loader is about 3 KB. It also means `refresh` and `destroy` always run the installed code rather
 * than the code captured at the last update (pulumi/pulumi#6238); the implementation reads every
 * earlier outputs schema (`schemaVersion`) for that reason.
 *
 * Everything here runs in the provider host from its text form: no imports are used at run time,
 * and modules are required inside functions. When this file is loaded from an installed package
 * (node_modules/aro-hcp-identity-status), Pulumi's serializer captures this module's exports by
 * package path (`require("aro-hcp-identity-status/dist/resources/provider/providerLoader.js")`),
 * which is why package.json exports `./dist/resources/*`.
 */
import type * as pulumi from "@pulumi/pulumi";

/** The npm package name of this project; the loader looks for it from the host's directory. */
export const packageName = "aro-hcp-identity-status";
/** Where the compiled implementation lives inside the package. */
export const implementationPath = "dist/resources/managedIdentityStatusProvider.js";

/**
 * Locates the implementation: the package as installed in the program's node_modules (the
 * provider host's working directory is the program's), or a checkout of this project at or above
 * it; `ARO_HCP_PROJECT_DIR`, when set, is looked at first. No variable is needed in either case.
 * @throws Error naming the places it looked.
 */
export function loadImplementation(): Required<pulumi.dynamic.ResourceProvider> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const path = require("node:path") as typeof import("node:path");
  const fs = require("node:fs") as typeof import("node:fs");
  const candidates: string[] = [];
  const projectDirectory = process.env.ARO_HCP_PROJECT_DIR;
  if (projectDirectory !== undefined && projectDirectory.length > 0) {
    candidates.push(path.join(projectDirectory, implementationPath));
  }
  try {
    candidates.push(require.resolve(`${packageName}/${implementationPath}`, { paths: [process.cwd()] }));
  } catch {
    // Not installed as a dependency: look for a checkout below.
  }
  for (let directory = process.cwd(); ; directory = path.dirname(directory)) {
    const manifest = path.join(directory, "package.json");
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: unknown }).name === packageName) {
      candidates.push(path.join(directory, implementationPath));
    }
    if (path.dirname(directory) === directory) {
      break;
    }
  }
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (found === undefined) {
    throw new Error(
      `cannot load the ServiceProviderClusterIdentityStatus provider: ${implementationPath} of ${packageName} was not found ` +
        `(looked in: ${candidates.length === 0 ? `node_modules and parent directories of ${process.cwd()}` : candidates.join(", ")}). ` +
        `Install ${packageName} in the program's node_modules (\`npm install ${packageName}\`), or run from a built checkout.`,
    );
  }
  return (require(found) as { managedIdentityStatusImplementation: Required<pulumi.dynamic.ResourceProvider> }).managedIdentityStatusImplementation;
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Builds the loader provider. Each call to a method loads (once, via require's cache) and forwards. */
export function createProviderLoader(): pulumi.dynamic.ResourceProvider {
  return {
    configure: (request) => loadImplementation().configure(request),
    check: (olds, news) => loadImplementation().check(olds, news),
    diff: (id, olds, news) => loadImplementation().diff(id, olds, news),
    create: (inputs) => loadImplementation().create(inputs),
    read: (id, props) => loadImplementation().read(id, props),
    update: (id, olds, news) => loadImplementation().update(id, olds, news),
    delete: (id, props) => loadImplementation().delete(id, props),
  };
}

/** The production provider passed to every resource; the only object ever serialized. */
export const managedIdentityStatusProvider = createProviderLoader();
