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
#   ARO_HCP_STALE_LOCK_SECONDS      a lock on the shard's stack at least this old is stale and removed before the refresh (the
#                                   longest a run can last: the Job's activeDeadlineSeconds, the workflow job's timeout);
#                                   so is, whatever its age, a lock taken on this host by a process that no longer runs
#                                   (a killed earlier try of this shard: an Indexed Job's retry of the index runs under
#                                   the same hostname); any other younger lock is another runner's (exit 1). Unset: a lock
#                                   is never removed
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
stale_lock_seconds="${ARO_HCP_STALE_LOCK_SECONDS:-}"
[ -z "$stale_lock_seconds" ] || [[ "$stale_lock_seconds" =~ ^(0|[1-9][0-9]*)$ ]] ||
  fail_configuration "ARO_HCP_STALE_LOCK_SECONDS must be a number of seconds, got '${stale_lock_seconds}'"
[ -f "${project_dir}/dist/index.js" ] || fail_configuration "${project_dir}/dist/index.js is missing: ARO_HCP_PROJECT_DIR must be the built project"
for command in pulumi blob-files node; do
  command -v "$command" >/dev/null || fail_configuration "${command} is not on PATH"
done

stack="${region}-shard-${index}"
project="$(sed -n 's/^name: *//p' "${project_dir}/Pulumi.yaml")"
region_key="aro-hcp/${region}"
scratch="${ARO_HCP_SCRATCH_DIRECTORY:-${TMPDIR:-/tmp}}/${stack}"
rm -rf "$scratch" && mkdir -p "$scratch" || fail_configuration "cannot create scratch directory ${scratch}"
export PULUMI_HOME="${PULUMI_HOME:-${scratch}/pulumi-home}"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
export PULUMI_PARALLEL="${PULUMI_PARALLEL:-16}"
# The final checkpoint only, as the project's own doors run the engine (cli/engine.ts): the backend
# rewrites the whole state after every step otherwise, one upload of the shard's whole checkpoint
# per cluster (docs/performance.md, "Growth": the write time per checkpoint, times a shard's steps).
# A killed run then loses its progress, which the next run redoes (a create adopts what Cosmos holds).
export PULUMI_SKIP_CHECKPOINTS="${PULUMI_SKIP_CHECKPOINTS:-true}"
# Diffs in the engine's slots, not one after another: a cluster whose inputs name no operators has
# its diff read the cluster document, and the engine otherwise waits out each read in turn
# (pkg/resource/deploy/step_generator.go: without it, Diff runs inside step generation).
export PULUMI_PARALLEL_DIFF="${PULUMI_PARALLEL_DIFF:-true}"
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
if [ "$engine_failed" = 0 ] && [ -n "$stale_lock_seconds" ]; then
  # A run killed mid-command (evicted, OOM-killed, its node lost) leaves its lock blob, and every
  # later command on the stack fails with "the stack is currently locked by 1 lock(s)". The lock is
  # read where the CLI keeps it (pkg/backend/diy/lock.go: .pulumi/locks/organization/<project>/<stack>/
  # <uuid>.json, a JSON of pid, username, hostname, timestamp), with blob-files, which opens the
  # backend exactly as the CLI does: the JSON fields, not the CLI's error text, which is worded for
  # people and may change. Its age is from the timestamp the locking CLI wrote. A lock at least
  # ARO_HCP_STALE_LOCK_SECONDS old outlived the longest a run can last (the Job's deadline or the
  # workflow job's timeout killed it if nothing else did), and the engines never run one shard twice
  # at once (concurrencyPolicy: Forbid, the workflow's concurrency group), so no live run holds it:
  # `pulumi cancel` deletes it (docs/reliability.md, "Recovering an interrupted run").
  # A lock whose hostname is this host's (the CLI writes os.Hostname(), the kernel's hostname, which
  # Node's os.hostname() reads too) and whose pid is no live process here is this host's earlier run,
  # killed, whatever its age. In an Indexed Job the pod's hostname is `<job-name>-<index>`, the same
  # for every retry of the index, and the Job creates a replacement pod only once the previous one has
  # terminated (the chart's podFailurePolicy makes the Job controller replace failed pods only, as
  # podReplacementPolicy: Failed does): so a retry after an eviction or an OOM kill meets its own
  # predecessor's lock, and removes it at once instead of failing the index. Another host's lock keeps
  # the age rule (a workflow's runners, an operator's machine), and so does this host's lock whose pid
  # runs here (it may be the holder).
  locks="${scratch}/locks"
  if ! blob-files get "$PULUMI_BACKEND_URL" ".pulumi/locks/organization/${project}/${stack}" "$locks"; then
    echo "shard-entrypoint: could not read the locks of stack ${stack} beside the state" >&2
    exit 1
  fi
  stale=0 young=0
  while IFS=$'\t' read -r age name owner host pid taken stale_at dead_here; do
    if [ "$dead_here" = "dead-here" ]; then
      echo "shard-entrypoint: stack ${stack} is locked by ${name}, ${age}s old: taken at ${taken} by ${owner}@${host} (pid ${pid}), this host's, and no process ${pid} older than the lock runs here: a killed earlier run of this shard on this host; removing it" >&2
      stale=$((stale + 1))
    elif [ "$age" -ge "$stale_lock_seconds" ]; then
      echo "shard-entrypoint: stack ${stack} is locked by a stale lock ${name}, ${age}s old (ARO_HCP_STALE_LOCK_SECONDS=${stale_lock_seconds}): taken at ${taken} by ${owner}@${host} (pid ${pid}), whose run is over; removing it" >&2
      stale=$((stale + 1))
    else
      echo "shard-entrypoint: stack ${stack} is locked by ${name}, ${age}s old: taken at ${taken} by ${owner}@${host} (pid ${pid}), another runner's; stale at ${stale_at} (ARO_HCP_STALE_LOCK_SECONDS=${stale_lock_seconds}); retry later" >&2
      young=$((young + 1))
    fi
  done < <(node -e '
    // One line per lock: age in seconds, name, username, hostname, pid, taken at, stale at, and
    // dead-here when the lock was taken on this host and no process of its pid that started before the
    // lock runs here (a pid that exists but is not ours to signal runs). A lock whose time does not parse gets age -1: never judged stale.
    const fs = require("node:fs"), os = require("node:os"), path = require("node:path");
    // When the process started, in ms since the epoch: /proc/<pid>/stat field 22 (clock ticks since
    // boot, USER_HZ 100 on Linux) after /proc/stat btime; undefined when it cannot be read.
    const startedAt = (pid) => {
      try {
        const stat = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
        const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
        const bootSeconds = Number(/^btime (\d+)$/m.exec(fs.readFileSync("/proc/stat", "utf8"))?.[1]);
        return Number.isFinite(ticks) && Number.isFinite(bootSeconds) ? (bootSeconds + ticks / 100) * 1000 : undefined;
      } catch { return undefined; }
    };
    const deadHere = (lock) => {
      if (lock.hostname !== os.hostname() || !Number.isInteger(lock.pid) || lock.pid <= 0) return false;
      try { process.kill(lock.pid, 0); } catch (error) { return error.code === "ESRCH"; }
      // A process of that pid runs. Pids are reused (pid_max is 32,768 on many kernels), so it holds
      // the lock only if it started before the lock was taken; one started after it is another
      // process, and the holder of the lock is gone.
      const started = startedAt(lock.pid), taken = Date.parse(lock.timestamp);
      return started !== undefined && !Number.isNaN(taken) && started > taken + 1000;
    };
    const [directory, staleSeconds] = [process.argv[1], Number(process.argv[2])];
    const files = fs.existsSync(directory) ? fs.readdirSync(directory, { recursive: true }).filter((name) => name.endsWith(".json")) : [];
    for (const name of files) {
      let lock = {};
      try { lock = JSON.parse(fs.readFileSync(path.join(directory, name), "utf8")); } catch {}
      const taken = Date.parse(lock.timestamp);
      const age = Number.isNaN(taken) ? -1 : Math.max(0, Math.floor((Date.now() - taken) / 1000));
      const staleAt = Number.isNaN(taken) ? "never (unreadable time)" : new Date(taken + staleSeconds * 1000).toISOString();
      console.log([age, name, lock.username ?? "?", lock.hostname ?? "?", lock.pid ?? "?", lock.timestamp ?? "?", staleAt, deadHere(lock) ? "dead-here" : "-"].join("\t"));
    }
  ' "$locks" "$stale_lock_seconds")
  # A live runner's lock: leave everything to it, records too (this run has none), and retry later.
  [ "$young" = 0 ] || exit 1
  if [ "$stale" -gt 0 ]; then
    pulumi cancel --yes --non-interactive --stack "$stack" || { echo "shard-entrypoint: could not remove the stale lock of stack ${stack}" >&2; exit 1; }
  fi
fi
if [ "$engine_failed" = 0 ]; then
  # A refresh step is one Cosmos read, each slot waiting out its round trip: 128 slots, as the
  # project's doors give a refresh (cli/engine.ts, defaultRefreshParallelism). A cluster whose refresh fails must not keep
  # the others from `up`: its failure is in the records, and the update rechecks it.
  # --clear-pending-creates drops the creates a killed run left pending (their resources are created
  # again by `up`: a create is an idempotent conditional write). Always passed: the 3.248 CLI edits the
  # checkpoint only when it holds a pending create (cmd/pulumi/operations/refresh.go, hasPendingCreates).
  pulumi refresh --parallel 128 --run-program --clear-pending-creates --yes --skip-preview --non-interactive --stack "$stack" || engine_failed=1
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
