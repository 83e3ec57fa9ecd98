#!/usr/bin/env bash
# Usage: build-go-tool.sh <tool>, where <tool> is a Go module under tools/ (conformance: upstream
# ARO-HCP's credential chain with the Go modules its backend pins; go-vectors: what Go computes
# for the vectors and the document decoding tests compare with).
#
# Builds the module into .cache/<tool>/<hash of its sources>/<tool>, unless that binary exists
# already, and prints the binary's path on its last line. Go's own output (module downloads,
# compiler messages) goes to stderr, so a test that runs the binary reads only what the tool
# prints. The first build on a machine downloads the modules from the Go module proxy and compiles
# them (about a minute on two cores); after a change of the sources the Go caches make it seconds.
set -euo pipefail
tool="${1:?usage: build-go-tool.sh <tool under tools/>}"
project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="${project_dir}/tools/${tool}"
[ -f "${module_dir}/go.mod" ] || { echo "build-go-tool: tools/${tool} is not a Go module" >&2; exit 1; }
hash="$(cat "${module_dir}/go.mod" "${module_dir}/go.sum" "${module_dir}"/*.go | sha256sum | cut -c1-16)"
out_dir="${project_dir}/.cache/${tool}/${hash}"
binary="${out_dir}/${tool}"
if [ ! -x "$binary" ]; then
  command -v go >/dev/null || { echo "build-go-tool: Go is required to build tools/${tool}; none found on PATH" >&2; exit 1; }
  mkdir -p "$out_dir"
  start=$(date +%s)
  # A partial file of this process's own: two test files may build the same tool at once.
  partial="${binary}.partial.$$"
  if ! (cd "$module_dir" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$partial" . >&2); then
    rm -f "$partial"
    echo "build-go-tool: go build of tools/${tool} failed; check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY))" >&2
    exit 1
  fi
  mv -f "$partial" "$binary"
  echo "build-go-tool: built ${binary} in $(( $(date +%s) - start )) s" >&2
  # Older builds of other sources are of no further use.
  find "${project_dir}/.cache/${tool}" -mindepth 1 -maxdepth 1 -type d ! -name "$hash" -exec rm -rf {} +
fi
echo "$binary"
