#!/usr/bin/env bash
# `npm start`: install what is missing, build, then run the main job against the sandbox.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
exec node dist/cli/start.js "$@"
