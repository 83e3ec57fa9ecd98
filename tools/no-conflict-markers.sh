#!/usr/bin/env bash
# Part of `npm run lint`: fails on a merge's conflict markers left in a tracked file. Prettier reads
# them as ordinary Markdown, so a half-resolved merge of docs would otherwise pass every check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if git grep -nE '^(<<<<<<<|>>>>>>>)( |$)' -- . ':!node_modules' 2>/dev/null; then
  echo "lint: the lines above are a merge's conflict markers" >&2
  exit 1
fi
