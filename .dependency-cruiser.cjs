// The import graph of resources/, checked by `npm run lint` (dependency-cruiser). docs/design.md
// draws it: every arrow points down, resource → provider → telemetry → sync → (azure, cosmos) → logging → shards → core,
// no cycle (type-only imports count: a cycle by types is still a cycle for a reader), and the pure
// core and the logger load only the packages they are allowed. Paths are relative to the working
// directory, so test/unit/architecture.test.ts runs this same file over a deliberately bad tree.
// The benchmark (bench/) has no layers, but no cycle either: `npm run lint` cruises it too.

/** Folders of resources/ from the top layer down; "." is resources/ itself (the resource and the door). */
const layers = [["."], ["provider"], ["telemetry", "report"], ["sync"], ["azure", "cosmos"], ["logging"], ["shards"], ["core"]];
const folders = layers.flat().filter((folder) => folder !== ".");
const pathOf = (folder) => (folder === "." ? "^resources/[^/]+$" : `^resources/${folder}/`);
const anyOf = (patterns) => `(?:${patterns.join("|")})`;

/** A folder may import its own modules and those of every layer below its own. */
const layerRules = layers.flatMap((layer, index) =>
  layer.map((folder) => {
    const allowed = [folder, ...layers.slice(index + 1).flat()];
    return {
      name: `layer-${folder === "." ? "resource" : folder}`,
      comment: `resources/${folder === "." ? "" : `${folder}/`} may import only ${allowed.map((name) => (name === "." ? "resources/" : `${name}/`)).join(", ")}: arrows point down`,
      severity: "error",
      from: { path: pathOf(folder) },
      to: { path: "^resources/", pathNot: anyOf(allowed.map(pathOf)) },
    };
  }),
);

/** Packages (npm or Node built-ins) a folder may load; folders not listed may load any dependency. */
const allowedPackages = {
  core: ["^(?:node:)?crypto$"],
  logging: ["^@azure/logger$", "^node_modules/@azure/logger/"],
};
const packageRules = Object.entries(allowedPackages).map(([folder, patterns]) => ({
  name: `packages-${folder}`,
  comment: `resources/${folder}/ may load only ${patterns.join(", ")}`,
  severity: "error",
  from: { path: pathOf(folder) },
  // Imports of the repository's own modules are the layer rules' business.
  to: { dependencyTypesNot: ["local"], pathNot: anyOf(patterns) },
}));

module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      comment: "a cycle in resources/ (type-only imports included) has no layer to live in",
      severity: "error",
      from: { path: "^resources/" },
      to: { circular: true },
    },
    {
      name: "no-cycle-bench",
      comment: "a cycle in bench/ (type-only imports included): what two modules share belongs in a third",
      severity: "error",
      from: { path: "^bench/" },
      to: { circular: true },
    },
    ...layerRules,
    ...packageRules,
    {
      name: "folder-without-layer",
      comment: `every folder of resources/ has a layer (${folders.join(", ")}); add a new one to .dependency-cruiser.cjs`,
      severity: "error",
      from: { path: `^resources/(?!${anyOf(folders)}/)[^/]+/` },
      to: {},
    },
    {
      name: "folder-without-layer-imported",
      comment: `every folder of resources/ has a layer (${folders.join(", ")}); add a new one to .dependency-cruiser.cjs`,
      severity: "error",
      from: {},
      to: { path: `^resources/(?!${anyOf(folders)}/)[^/]+/` },
    },
    {
      name: "outside-resources",
      comment: "the product imports nothing of the repository outside resources/ (tests, sandbox, tools)",
      severity: "error",
      from: { path: "^resources/" },
      to: { dependencyTypes: ["local"], pathNot: "^resources/" },
    },
    {
      name: "not-to-unresolvable",
      comment: "an import that does not resolve",
      severity: "error",
      from: { path: "^resources/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are arrows too: they were the cycle issue 9 started from.
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^dist/" },
    moduleSystems: ["cjs", "es6"],
  },
};
