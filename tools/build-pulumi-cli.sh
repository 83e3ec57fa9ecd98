#!/usr/bin/env bash
# Builds the Pulumi CLI from the published Go modules (Pulumi's download site is out of reach
# here) into .cache/pulumi/<version>/bin, next to our dynamic-provider plugin shim.
# Rebuilds only when the binary is missing or reports another version. Never commits anything.
#
# Usage: tools/build-pulumi-cli.sh [--quiet]
# Prints the root directory (for PulumiCommand.get({root})) on its last line.
set -euo pipefail

project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
quiet="${1:-}"
say() { if [ "$quiet" != "--quiet" ]; then echo "build-pulumi-cli: $*" >&2; fi; }
fail() { echo "build-pulumi-cli: error: $*" >&2; exit 1; }

# The CLI version is the project's own @pulumi/pulumi pin (a devDependency; consumers get the SDK
# through the peer range): engine and SDK stay in lockstep.
version="$(node -p "require('${project_dir}/package.json').devDependencies['@pulumi/pulumi']")"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "package.json must pin the devDependency @pulumi/pulumi to an exact version (found '$version')"
root="${project_dir}/.cache/pulumi/${version}"
bin="${root}/bin"
module_dir="${project_dir}/tools/pulumi"

grep -Eq "github.com/pulumi/pulumi/pkg/v3 v${version}( //.*)?$" "${module_dir}/go.mod" ||
  fail "tools/pulumi/go.mod does not require github.com/pulumi/pulumi/pkg/v3 v${version}; run: cd tools/pulumi && go get -tool github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@v${version} github.com/pulumi/pulumi/sdk/v3@v${version}"

mkdir -p "$bin"
# Our shim is tiny; refresh it every time so edits in tools/ take effect.
install -m 0755 "${project_dir}/tools/pulumi-resource-pulumi-nodejs" "${bin}/pulumi-resource-pulumi-nodejs"

# The Node.js language host, so that the literal `pulumi up` runs the project's Pulumi.yaml program.
# Its own module (tools/pulumi-language-nodejs/go.mod) pins the newest sdk/v3 release whose module still
# contains it: later releases moved it into a module of its own that the Go module proxy does not serve
# (no tags; the pseudo-versions answer 403). The engine speaks the same LanguageRuntime protocol to it;
# test/e2e/literalCli.test.ts runs `pulumi up`/`refresh`/`destroy` through it. See docs/pulumi-engine.md.
build_language_host() {
  local host_module_dir="${project_dir}/tools/pulumi-language-nodejs"
  local host_version stamp
  host_version="$(sed -n 's#^\tgithub.com/pulumi/pulumi/sdk/v3 \(v[0-9.]*\).*#\1#p' "${host_module_dir}/go.mod" | head -n 1)"
  [ -n "$host_version" ] || fail "tools/pulumi-language-nodejs/go.mod does not require github.com/pulumi/pulumi/sdk/v3"
  stamp="${bin}/pulumi-language-nodejs.version"
  if [ -x "${bin}/pulumi-language-nodejs" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$host_version" ]; then
    return 0
  fi
  command -v go >/dev/null || fail "Go is required to build the Node.js language host (https://go.dev/doc/install); none found on PATH"
  say "building pulumi-language-nodejs ${host_version} from github.com/pulumi/pulumi/sdk/v3"
  local host_start
  host_start=$(date +%s)
  if ! (cd "$host_module_dir" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${host_version}" \
    -o "${bin}/pulumi-language-nodejs.partial" github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs); then
    rm -f "${bin}/pulumi-language-nodejs.partial"
    fail "go build of the Node.js language host failed; check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY))"
  fi
  mv "${bin}/pulumi-language-nodejs.partial" "${bin}/pulumi-language-nodejs"
  echo "$host_version" >"$stamp"
  say "built pulumi-language-nodejs ${host_version} in $(( $(date +%s) - host_start )) s"
}
build_language_host

if [ -x "${bin}/pulumi" ] && [ "$("${bin}/pulumi" version 2>/dev/null)" = "v${version}" ]; then
  say "pulumi v${version} already built in ${bin}"
  echo "$root"
  exit 0
fi

command -v go >/dev/null || fail "Go is required to build the Pulumi CLI (https://go.dev/doc/install); none found on PATH"
say "building pulumi v${version} from github.com/pulumi/pulumi/pkg/v3 (first build takes a few minutes)"
start=$(date +%s)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
ldflags="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v${version}"
if ! (cd "$module_dir" && go build -trimpath -tags osusergo,grpcnotrace -ldflags "$ldflags" \
  -o "${bin}/pulumi.partial" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi); then
  rm -f "${bin}/pulumi.partial"
  fail "go build of the Pulumi CLI failed; check that the Go module proxy is reachable (GOPROXY=$(go env GOPROXY))"
fi
mv "${bin}/pulumi.partial" "${bin}/pulumi"
built="$("${bin}/pulumi" version)"
[ "$built" = "v${version}" ] || fail "built CLI reports '${built}', expected v${version}"
say "built pulumi ${built} in $(( $(date +%s) - start )) s"

echo "$root"
