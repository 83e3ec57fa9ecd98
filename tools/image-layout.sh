#!/usr/bin/env bash
# Lays out what the image holds under /app (deploy/Dockerfile runs this): the compiled project,
# Pulumi.yaml, the entrypoints, and the npm packages that run, from the lock file: the package's
# dependencies and @pulumi/pulumi at the project's pin (a development dependency of the package, a
# peer of its consumers; the program and the provider host need it), none of the development tools.
# test/e2e/shardEntrypoint.test.ts runs the shard and verdict entrypoints from such a layout.
#
# Usage: tools/image-layout.sh <output directory>   (after `npm run build`; the directory is replaced)
set -euo pipefail
project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: image-layout.sh <output directory>}"
[ -f "${project_dir}/dist/index.js" ] || { echo "image-layout: build the project first (npm run build)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "${out}/tools"
cp "${project_dir}/package.json" "${project_dir}/package-lock.json" "${project_dir}/Pulumi.yaml" "$out/"
cp -R "${project_dir}/dist" "$out/"
cp "${project_dir}/tools/shard-entrypoint.sh" "${project_dir}/tools/region-verdict.sh" "${out}/tools/"
# @pulumi/pulumi becomes a dependency and the development dependencies go; npm then installs the
# production tree at the lock file's versions.
node -e '
  const fs = require("node:fs");
  const manifest = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  manifest.dependencies["@pulumi/pulumi"] = manifest.devDependencies["@pulumi/pulumi"];
  delete manifest.devDependencies;
  delete manifest.overrides;
  delete manifest.scripts;
  fs.writeFileSync(process.argv[1], JSON.stringify(manifest, null, 2) + "\n");
' "${out}/package.json"
(cd "$out" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
