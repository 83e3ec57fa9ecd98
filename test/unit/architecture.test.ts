/**
 * The import graph of resources/ as docs/design.md draws it: every arrow points down
 * (resource → provider → sync → azure, cosmos → core), no cycle, and no file a reader has to
 * scroll through. Read from the sources, so a new import that breaks the layering fails here.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const resourcesDirectory = path.resolve(__dirname, "../../resources");
const maxLinesPerFile = 250;

/** Higher layers may import lower ones; modules of one layer only their own folder. */
const layers: Readonly<Record<string, number>> = {
  ".": 5,
  provider: 4,
  sync: 3,
  azure: 2,
  cosmos: 2,
  logging: 1,
  core: 0,
};
/** Packages each folder may load; core stays pure. */
const allowedPackages: Readonly<Record<string, readonly RegExp[]>> = {
  core: [/^node:crypto$/],
  logging: [/^@azure\/logger$/],
};

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      return sourceFiles(full);
    }
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

function folderOf(file: string): string {
  const relative = path.relative(resourcesDirectory, file);
  return relative.includes(path.sep) ? relative.split(path.sep)[0] : ".";
}

/** Module specifiers of `import … from`, `export … from`, `import(…)` and `require(…)`. */
function specifiersOf(text: string): string[] {
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([^"']+)["']/g;
  return [...text.matchAll(pattern)].map((match) => match[1]);
}

function resolveLocal(file: string, specifier: string): string {
  const base = path.resolve(path.dirname(file), specifier);
  const candidates = [`${base}.ts`, path.join(base, "index.ts")];
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (found === undefined) {
    throw new Error(`${path.relative(resourcesDirectory, file)} imports ${specifier}, which does not exist`);
  }
  return found;
}

const files = sourceFiles(resourcesDirectory);
const graph = new Map<string, { local: string[]; packages: string[] }>(
  files.map((file) => {
    const specifiers = specifiersOf(fs.readFileSync(file, "utf8"));
    return [
      file,
      {
        local: specifiers.filter((specifier) => specifier.startsWith(".")).map((specifier) => resolveLocal(file, specifier)),
        packages: specifiers.filter((specifier) => !specifier.startsWith(".")),
      },
    ];
  }),
);
const name = (file: string): string => path.relative(resourcesDirectory, file);

describe("the import graph of resources/", () => {
  it("has a layer for every folder", () => {
    expect(files.map(folderOf).filter((folder) => layers[folder] === undefined)).toEqual([]);
  });

  it("has no arrow pointing up or sideways between folders", () => {
    const violations = files.flatMap((file) =>
      graph.get(file)!.local.flatMap((target) => {
        const from = folderOf(file);
        const to = folderOf(target);
        const allowed = from === to || layers[to] < layers[from];
        return allowed ? [] : [`${name(file)} → ${name(target)}`];
      }),
    );
    expect(violations).toEqual([]);
  });

  it("has no cycle", () => {
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (file: string, trail: string[]): void => {
      if (state.get(file) === "done") {
        return;
      }
      if (state.get(file) === "visiting") {
        cycles.push([...trail.slice(trail.indexOf(file)), file].map(name).join(" → "));
        return;
      }
      state.set(file, "visiting");
      for (const target of graph.get(file)!.local) {
        visit(target, [...trail, file]);
      }
      state.set(file, "done");
    };
    files.forEach((file) => visit(file, []));
    expect(cycles).toEqual([]);
  });

  it("keeps the pure core and the logger to the packages they are allowed", () => {
    const violations = files.flatMap((file) => {
      const allowed = allowedPackages[folderOf(file)];
      if (allowed === undefined) {
        return [];
      }
      return graph
        .get(file)!
        .packages.filter((specifier) => !allowed.some((pattern) => pattern.test(specifier)))
        .map((specifier) => `${name(file)} loads ${specifier}`);
    });
    expect(violations).toEqual([]);
  });

  it(`keeps every file under ${maxLinesPerFile} lines`, () => {
    const long = files
      .map((file) => ({ file: name(file), lines: fs.readFileSync(file, "utf8").split("\n").length }))
      .filter((entry) => entry.lines > maxLinesPerFile);
    expect(long).toEqual([]);
  });

  it("finds arrows at all (the check reads real imports)", () => {
    const provider = files.find((file) => name(file) === path.join("provider", "managedIdentityStatusProvider.ts"))!;
    expect(graph.get(provider)!.local.map(name)).toContain(path.join("sync", "syncManagedIdentityStatus.ts"));
  });
});
