#!/usr/bin/env bash
# One shard of a region's drift correction, as one pod of the region's Indexed Job runs it (the
# image's entrypoint; deploy/chart/templates/shards.cronjob.yaml), and as any runner can: stack
# `<region>-shard-<index>` over the shard's clusters file, `pulumi refresh` then
# `pulumi up --continue-on-error`, the shard's run records uploaded beside the state, and the
# shard's verdict as the exit code. docs/operations.md, "Running a region".
#
# Environment (required):
#   JOB_COMPLETION_INDEX            the shard's index (the Indexed Job sets it; a workflow's matrix too)
#   ARO_HCP_REGION                  the region: stack names, and where its files live beside the state
#   ARO_HCP_RUN_ID                  the run, the same for every shard of one run (the Job's name)
#   PULUMI_BACKEND_URL              the state backend (azblob://<container>[/<path>]), credentials as the CLI reads them
# Environment (optional):
#   ARO_HCP_SHARD_PLAN_DIRECTORY    a local directory holding shard-plan.json and shard-<index>.json (aro-hcp-shard-plan's
#                                   output); unset: downloaded from <backend>/aro-hcp/<region>/shard-plan/
#   ARO_HCP_SCRATCH_DIRECTORY       writable scratch (an emptyDir under a read-only root filesystem); default ${TMPDIR:-/tmp}
#   ARO_HCP_ALLOW_CLUSTER_REMOVALS  true for the one run after a new shard count (allowClusterRemovals)
#   ARO_HCP_SETTINGS_FILE           a JSON object of the hook's settings, by config key without the project's namespace
#                                   ({"credentialMode": "clusterServiceManagedIdentity", "cosmosEndpoint": "https://…", …}),
#                                   written into the stack's config (a key Pulumi.yaml gives a default wins over its variable)
#   PULUMI_HOME                     default <scratch>/pulumi-home
#
# Files beside the state, under the backend URL's path:
#   aro-hcp/<region>/shard-plan/               shard-plan.json and shard-<index>.json
#   aro-hcp/<region>/runs/<run>/shard-<index>.jsonl   this shard's run records, written at the end whatever the outcome
#
# Exit codes (the Job's podFailurePolicy reads them):
#   0 the shard's verdict is ok; 1 the run could not complete (the engine, the lock, the backend: worth a retry);
#   2 a configuration error (retrying cannot help); 3 clusters failed (the records name them; the next run retries them).
set -uo pipefail

fail_configuration() {
  echo "shard-entrypoint: $*" >&2
  exit 2
}

project_dir="${ARO_HCP_PROJECT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
index="${JOB_COMPLETION_INDEX:-}"
region="${ARO_HCP_REGION:-}"
run_id="${ARO_HCP_RUN_ID:-}"
[[ "$index" =~ ^(0|[1-9][0-9]*)$ ]] || fail_configuration "JOB_COMPLETION_INDEX must be a shard index (0, 1, …), got '${index}'"
[[ "$region" =~ ^[a-z0-9][a-z0-9-]*$ ]] || fail_configuration "ARO_HCP_REGION must be a region name (lowercase letters, digits, '-'), got '${region}'"
[[ "$run_id" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || fail_configuration "ARO_HCP_RUN_ID must name the run (letters, digits, '.', '_', '-'), got '${run_id}'"
[ -n "${PULUMI_BACKEND_URL:-}" ] || fail_configuration "PULUMI_BACKEND_URL must name the state backend (azblob://<container>)"
[ -f "${project_dir}/dist/index.js" ] || fail_configuration "${project_dir}/dist/index.js is missing: ARO_HCP_PROJECT_DIR must be the built project"
for command in pulumi blob-files node; do
  command -v "$command" >/dev/null || fail_configuration "${command} is not on PATH"
done

stack="${region}-shard-${index}"
region_key="aro-hcp/${region}"
scratch="${ARO_HCP_SCRATCH_DIRECTORY:-${TMPDIR:-/tmp}}/${stack}"
rm -rf "$scratch" && mkdir -p "$scratch" || fail_configuration "cannot create scratch directory ${scratch}"
export PULUMI_HOME="${PULUMI_HOME:-${scratch}/pulumi-home}"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_PARALLEL="${PULUMI_PARALLEL:-16}"
export ARO_HCP_PROJECT_DIR="$project_dir"

# The plan: the shard's clusters file and the plan's ID, which the records carry.
plan_directory="${ARO_HCP_SHARD_PLAN_DIRECTORY:-}"
if [ -z "$plan_directory" ]; then
  plan_directory="${scratch}/shard-plan"
  blob-files get "$PULUMI_BACKEND_URL" "${region_key}/shard-plan" "$plan_directory" ||
    { echo "shard-entrypoint: could not read the shard plan from ${region_key}/shard-plan/ beside the state" >&2; exit 1; }
fi
plan_file="${plan_directory}/shard-plan.json"
[ -f "$plan_file" ] || fail_configuration "${plan_file} is missing: write the plan with aro-hcp-shard-plan"
read -r plan_id shard_count shard_clusters clusters_file < <(node -e '
  const plan = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  const shard = (plan.shards ?? [])[Number(process.argv[2])];
  console.log(plan.planId, plan.shardCount, shard?.clusters ?? "", shard?.clustersFile ?? "");
' "$plan_file" "$index") || fail_configuration "${plan_file} is not a shard plan"
[ -n "$clusters_file" ] || fail_configuration "shard ${index} is not in plan ${plan_id} (${shard_count} shards): check the Job's completions against the plan"
clusters_file="$(cd "$plan_directory" && realpath "$clusters_file")"
[ -f "$clusters_file" ] || fail_configuration "${clusters_file} is missing from the plan directory"

# The project, run from scratch: the root filesystem may be read-only, and the CLI writes the stack's
# config file (its encryption salt) beside Pulumi.yaml. The compiled program runs, without ts-node.
work="${scratch}/work"
mkdir -p "$work"
for entry in dist node_modules package.json; do ln -s "${project_dir}/${entry}" "${work}/${entry}"; done
sed -e 's#^main: index.ts$#main: dist/index.js#' -e 's#^    typescript: true$#    typescript: false#' "${project_dir}/Pulumi.yaml" >"${work}/Pulumi.yaml"
grep -q '^main: dist/index.js$' "${work}/Pulumi.yaml" || fail_configuration "${project_dir}/Pulumi.yaml has no 'main: index.ts' line to point at the compiled program"
# The stack's config: the region's settings (the chart's values) and the shard's clusters file. Written
# as JSON, which is YAML: no quoting of values by hand.
node -e '
  const [settingsFile, clustersFile, shardClusters, allowClusterRemovals] = process.argv.slice(1);
  const fs = require("node:fs");
  const settings = settingsFile === "" ? {} : JSON.parse(fs.readFileSync(settingsFile, "utf8"));
  if (typeof settings !== "object" || settings === null || Array.isArray(settings)) throw new Error(settingsFile + " must hold a JSON object of settings");
  const config = Object.fromEntries(Object.entries(settings).map(([key, value]) => ["aro-hcp-identity-status:" + key, value]));
  config["aro-hcp-identity-status:clustersFile"] = clustersFile;
  // A shard the plan leaves empty lets go of whatever its stack held.
  config["aro-hcp-identity-status:allowEmptyFleet"] = String(shardClusters === "0");
  if (allowClusterRemovals === "true") config["aro-hcp-identity-status:allowClusterRemovals"] = "true";
  process.stdout.write(JSON.stringify({ config }, null, 2) + "\n");
' "${ARO_HCP_SETTINGS_FILE:-}" "$clusters_file" "$shard_clusters" "${ARO_HCP_ALLOW_CLUSTER_REMOVALS:-}" >"${work}/Pulumi.${stack}.yaml" ||
  fail_configuration "ARO_HCP_SETTINGS_FILE (${ARO_HCP_SETTINGS_FILE:-}) must be a JSON object of the hook's settings"

records="${scratch}/records/shard-${index}.jsonl"
mkdir -p "$(dirname "$records")" && : >"$records"
export ARO_HCP_RUN_RECORDS="$records" ARO_HCP_SHARD_PLAN="$plan_id" ARO_HCP_SHARD_INDEX="$index" ARO_HCP_RUN_ID="$run_id"
echo "shard-entrypoint: stack ${stack}, shard ${index} of plan ${plan_id} (${shard_count} shards, ${shard_clusters} clusters), run ${run_id}"

cd "$work" || exit 1
engine_failed=0
pulumi stack select --create --stack "$stack" --non-interactive || engine_failed=1
if [ "$engine_failed" = 0 ]; then
  # A refresh step is one Cosmos read: twice the slots. A cluster whose refresh fails must not keep
  # the others from `up`: its failure is in the records, and the update rechecks it.
  pulumi refresh --parallel 32 --run-program --yes --skip-preview --non-interactive --stack "$stack" || engine_failed=1
  pulumi up --yes --skip-preview --continue-on-error --non-interactive --stack "$stack" || engine_failed=1
fi

# The records go beside the state whatever happened: the region's verdict reads them there.
records_key="${region_key}/runs/${run_id}/shard-${index}.jsonl"
if ! blob-files put "$PULUMI_BACKEND_URL" "$records_key" "$records"; then
  echo "shard-entrypoint: could not write the run records to ${records_key} beside the state" >&2
  exit 1
fi
node "${project_dir}/dist/resources/report/runReportCommand.js" "$records" --json "${scratch}/shard-report.json"
verdict="$(node -p 'JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).verdict' "${scratch}/shard-report.json" 2>/dev/null)"
case "$verdict" in
  failed) exit 3 ;;
  ok) exit "$engine_failed" ;;
  *) echo "shard-entrypoint: no run records (verdict '${verdict}'): the engine did not reach the clusters" >&2; exit 1 ;;
esac
