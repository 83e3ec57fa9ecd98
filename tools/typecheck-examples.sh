#!/usr/bin/env bash
# Typechecks the examples (part of `npm test`).
# - examples/azure-native: has its own package.json and lock (@pulumi/azure-native stays out of the
#   root package); its dependencies are installed with `npm ci` only when node_modules is missing or
#   older than package-lock.json (a cold install took ~15 s and ~250 MB here).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

example=examples/azure-native
if [ ! -d "${example}/node_modules" ] || [ "${example}/package-lock.json" -nt "${example}/node_modules" ]; then
  echo "typecheck-examples: installing ${example} dependencies (npm ci)" >&2
  (cd "${example}" && npm ci --no-audit --no-fund --loglevel=error)
  touch "${example}/node_modules"
fi
npx tsc --noEmit -p "${example}" --incremental --tsBuildInfoFile .cache/tsc/examples-azure-native.tsbuildinfo
