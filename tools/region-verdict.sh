#!/usr/bin/env bash
# The region's verdict over one run of its shards (tools/shard-entrypoint.sh), as the region's verdict
# job runs it (deploy/chart/templates/verdict.cronjob.yaml): the plan and every shard's run records
# read from beside the state, judged together by `aro-hcp-run-report --plan`, the report written back
# beside them, and the verdict as the exit code. A shard that never ran, ran twice or ran another plan
# fails it by name; a failed cluster is listed once, under its cause.
#
# Environment: ARO_HCP_REGION and PULUMI_BACKEND_URL (required); ARO_HCP_RUN_ID (the run to judge;
# unset: the run whose records were written last); ARO_HCP_VERDICT_MAX_AGE_SECONDS (with no run ID:
# fail when the newest records are older, i.e. the shards did not run); ARO_HCP_SHARD_PLAN_DIRECTORY
# and ARO_HCP_SCRATCH_DIRECTORY as for the shards.
#
# Exit codes: 0 ok; 1 the region failed (the report says why); 2 a configuration error or nothing to read.
set -uo pipefail

fail_configuration() {
  echo "region-verdict: $*" >&2
  exit 2
}

project_dir="${ARO_HCP_PROJECT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
region="${ARO_HCP_REGION:-}"
[[ "$region" =~ ^[a-z0-9][a-z0-9-]*$ ]] || fail_configuration "ARO_HCP_REGION must be a region name (lowercase letters, digits, '-'), got '${region}'"
[ -n "${PULUMI_BACKEND_URL:-}" ] || fail_configuration "PULUMI_BACKEND_URL must name the state backend (azblob://<container>)"
for command in blob-files node; do
  command -v "$command" >/dev/null || fail_configuration "${command} is not on PATH"
done
region_key="aro-hcp/${region}"
scratch="${ARO_HCP_SCRATCH_DIRECTORY:-${TMPDIR:-/tmp}}/${region}-verdict"
rm -rf "$scratch" && mkdir -p "$scratch" || fail_configuration "cannot create scratch directory ${scratch}"

run_id="${ARO_HCP_RUN_ID:-}"
if [ -z "$run_id" ]; then
  read -r run_id written_at < <(blob-files newest "$PULUMI_BACKEND_URL" "${region_key}/runs") ||
    fail_configuration "no run records under ${region_key}/runs/ beside the state: no shard of ${region} has run"
  age=$(($(date +%s) - written_at))
  echo "region-verdict: judging run ${run_id}, whose last records were written ${age} s ago"
  max_age="${ARO_HCP_VERDICT_MAX_AGE_SECONDS:-}"
  if [ -n "$max_age" ] && [ "$age" -gt "$max_age" ]; then
    echo "Region report: FAILED; no run of ${region} wrote records in the last ${max_age} s (the newest, run ${run_id}, ${age} s ago): the shards' job did not run" >&2
    exit 1
  fi
fi

plan_directory="${ARO_HCP_SHARD_PLAN_DIRECTORY:-}"
if [ -z "$plan_directory" ]; then
  plan_directory="${scratch}/shard-plan"
  blob-files get "$PULUMI_BACKEND_URL" "${region_key}/shard-plan" "$plan_directory" ||
    fail_configuration "could not read the shard plan from ${region_key}/shard-plan/ beside the state"
fi
records="${scratch}/records"
mkdir -p "$records"
blob-files get "$PULUMI_BACKEND_URL" "${region_key}/runs/${run_id}" "$records" ||
  fail_configuration "could not read the run records of run ${run_id} from ${region_key}/runs/${run_id}/"

report="${scratch}/region-report.json"
node "${project_dir}/dist/resources/report/runReportCommand.js" --plan "${plan_directory}/shard-plan.json" "$records" --json "$report"
status=$?
[ -f "$report" ] || exit 2
blob-files put "$PULUMI_BACKEND_URL" "${region_key}/reports/${run_id}.json" "$report" ||
  echo "region-verdict: could not write the report to ${region_key}/reports/${run_id}.json (the verdict stands)" >&2
exit "$status"
