#!/usr/bin/env bash
# `npm test`: set up everything (npm packages, build, Pulumi CLI), typecheck, lint, then run the unit,
# integration (real SDK clients against the sandbox) and end-to-end (real Pulumi engine) suites.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh

# The static checks are two independent single-threaded chains, so they run side by side on the
# machine's two cores. Each chain's output is printed whole once
# both have finished, so their lines never interleave; either failing fails the command.
checks=$(mktemp -d)
trap 'rm -rf "${checks}"' EXIT
# Each typecheck keeps its build info under .cache/tsc/ (incremental: only what changed since the
# last run is checked again, and the errors of unchanged files are reported again from there).
typecheck() {
  npx tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile .cache/tsc/typecheck.tsbuildinfo
  # The library under the Pulumi templates' ES2020 target and lib, as consumers compile it.
  npx tsc -p tsconfig.es2020.json --incremental --tsBuildInfoFile .cache/tsc/es2020.tsbuildinfo
  bash tools/typecheck-examples.sh
}
typecheck >"${checks}/typecheck.log" 2>&1 &
typecheck_pid=$!
lint_status=0
npm run --silent lint >"${checks}/lint.log" 2>&1 || lint_status=$?
typecheck_status=0
wait "${typecheck_pid}" || typecheck_status=$?
for check in typecheck lint; do
  if [ -s "${checks}/${check}.log" ]; then
    echo "--- ${check}"
    cat "${checks}/${check}.log"
  fi
done
if [ "${typecheck_status}" -ne 0 ] || [ "${lint_status}" -ne 0 ]; then
  echo "test: typecheck exited ${typecheck_status}, lint exited ${lint_status}" >&2
  exit 1
fi

if [ "$#" -gt 0 ]; then
  exec npx vitest run --project unit --project program --project integration --project e2e "$@"
fi
# With no arguments: unit and program first (both cores), then integration beside e2e, each its own
# vitest process. Integration's files run one at a time over one shared sandbox and mostly wait
# (timeouts, retries); e2e keeps the two cores busy on its own, and integration fits in what it
# leaves: the whole command took 445 s here against 549 s with integration before e2e, in the same
# hour (docs/testing.md). e2e prints as it goes, integration's output whole once both have ended.
npx vitest run --project unit --project program
integration_log=${checks}/integration.log
npx vitest run --project integration >"${integration_log}" 2>&1 &
integration_pid=$!
e2e_status=0
npx vitest run --project e2e || e2e_status=$?
integration_status=0
wait "${integration_pid}" || integration_status=$?
echo "--- integration"
cat "${integration_log}"
if [ "${integration_status}" -ne 0 ] || [ "${e2e_status}" -ne 0 ]; then
  echo "test: integration exited ${integration_status}, e2e exited ${e2e_status}" >&2
  exit 1
fi
