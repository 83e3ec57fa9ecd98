#!/usr/bin/env bash
# `npm test`: set up everything (npm packages, build, Pulumi CLI), typecheck, lint, then run the unit,
# integration (real SDK clients against the sandbox) and end-to-end (real Pulumi engine) suites.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
npx tsc -p tsconfig.json --noEmit
# The library under the Pulumi templates' ES2020 target and lib, as consumers compile it.
npx tsc -p tsconfig.es2020.json
npm run --silent lint
bash tools/typecheck-examples.sh
npx vitest run --project unit --project integration --project e2e "$@"
