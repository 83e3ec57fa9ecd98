#!/usr/bin/env bash
# Builds the conformance program (tools/conformance: upstream ARO-HCP's credential chain with the
# Go modules its backend pins) into .cache/conformance/<hash of its sources>/conformance, unless
# that binary exists already, and prints the binary's path on its last line. The Go module and
# build caches make a rebuild after a change cost seconds; the first build on a machine downloads
# the modules from the Go module proxy and compiles them (about a minute on two cores).
set -euo pipefail
project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="${project_dir}/tools/conformance"
hash="$(cat "${module_dir}/go.mod" "${module_dir}/go.sum" "${module_dir}"/*.go | sha256sum | cut -c1-16)"
out_dir="${project_dir}/.cache/conformance/${hash}"
binary="${out_dir}/conformance"
if [ ! -x "$binary" ]; then
  command -v go >/dev/null || { echo "build-conformance: Go is required to build tools/conformance; none found on PATH" >&2; exit 1; }
  mkdir -p "$out_dir"
  start=$(date +%s)
  if ! (cd "$module_dir" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "${binary}.partial" .); then
    rm -f "${binary}.partial"
    echo "build-conformance: go build failed; check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY))" >&2
    exit 1
  fi
  mv "${binary}.partial" "$binary"
  echo "build-conformance: built ${binary} in $(( $(date +%s) - start )) s" >&2
  # Older builds of other sources are of no further use.
  find "${project_dir}/.cache/conformance" -mindepth 1 -maxdepth 1 -type d ! -name "$hash" -exec rm -rf {} +
fi
echo "$binary"
