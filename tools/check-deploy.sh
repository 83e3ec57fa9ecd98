#!/usr/bin/env bash
# CI's checks of what runs on engines we cannot start here (test/e2e/deployManifests.test.ts runs it):
#   - the Helm chart deploy/chart rendered by helm's own engine, with its values.yaml and each
#     deploy/chart/ci/*.yaml over it, every manifest decoded strictly into the Kubernetes API's Go types
#     (k8s.io/api) or, for a Stack, checked against the Pulumi Kubernetes Operator's published CRD;
#   - every workflow under examples/workflows/ linted by actionlint;
#   - deploy/Dockerfile through BuildKit's Dockerfile frontend, as `docker build --check` runs it
#     (parse, instruction flags, lint rules; base images are not resolved: no registry here).
# All from pinned Go modules (tools/deploy-check/go.mod); the CRD from the operator's module at the
# version below, downloaded and checksum-verified by the go command, never committed here.
#
# Usage: tools/check-deploy.sh            run the checks
#        tools/check-deploy.sh --paths    print the checker binary and the CRD file, one a line
set -euo pipefail
project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The operator's Go module and its Stack CRD. v1.16.0 is the version the Go module proxy serves here
# (its v2 modules are not): the Stacks use only fields v2's CRD has kept, and pass v2.9.0's CRD
# (`deploy-check chart deploy/chart <that CRD file> deploy/chart/ci/operator-values.yaml`; docs/operations.md).
operator_module="github.com/pulumi/pulumi-kubernetes-operator@v1.16.0"
crd_in_module="deploy/crds/pulumi.com_stacks.yaml"

checker="$(bash "${project_dir}/tools/build-go-tool.sh" deploy-check | tail -n 1)"
module_dir="$(cd "$(mktemp -d)" && GOTOOLCHAIN=local GOFLAGS= go mod download -json "$operator_module" |
  node -e 'let text = ""; process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => { const module = JSON.parse(text); if (module.Error) { console.error(module.Error); process.exit(1); } console.log(module.Dir); })')" ||
  { echo "check-deploy: could not download ${operator_module} from the Go module proxy" >&2; exit 1; }
crd="${module_dir}/${crd_in_module}"
[ -f "$crd" ] || { echo "check-deploy: ${operator_module} has no ${crd_in_module}" >&2; exit 1; }
if [ "${1:-}" = "--paths" ]; then
  printf '%s\n%s\n' "$checker" "$crd"
  exit 0
fi

"$checker" chart "${project_dir}/deploy/chart" "$crd"
for values in "${project_dir}"/deploy/chart/ci/*.yaml; do
  "$checker" chart "${project_dir}/deploy/chart" "$crd" "$values"
done
"$checker" workflow "${project_dir}"/examples/workflows/*.yml
"$checker" dockerfile "${project_dir}/deploy/Dockerfile"
echo "check-deploy: chart, workflows and Dockerfile valid"
