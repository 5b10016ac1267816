#!/bin/bash
# Runs a planrun plan as N segments on Slurm: a job array of N tasks (planrun-segments.sbatch), all starting
# at one instant, and a merge job (planrun-merge.sbatch) that runs when every task has ended, whatever its
# exit code. Prints `start_at=`, `array_job=` and `merge_job=` lines on stdout.
#
#   deploy/slurm/submit.sh PLAN.yaml N RESULTS_DIR [planrun run options...]
#
# Environment: PLANRUN (the planrun binary, default `planrun` on the PATH), START_AT (the start instant,
# RFC 3339 or Unix ms; default now + LEAD_SECONDS), LEAD_SECONDS (default 60), SEGMENT_SBATCH_OPTS and
# MERGE_SBATCH_OPTS (more sbatch options for the array and for the merge job, split at spaces). See README.md.
set -eu

usage() {
  echo "usage: $0 PLAN.yaml N RESULTS_DIR [planrun run options...]" >&2
  exit 2
}
[ "$#" -ge 3 ] || usage
plan=$1
n=$2
results=$3
shift 3
case $n in
  '' | *[!0-9]*) echo "$0: N must be a whole number from 1, not '$n'" >&2; exit 2 ;;
esac
if [ "$n" -lt 1 ]; then
  echo "$0: N must be a whole number from 1, not '$n'" >&2
  exit 2
fi
if [ ! -f "$plan" ]; then
  echo "$0: no plan file '$plan'" >&2
  exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
# Absolute paths: the jobs may start in another directory, on another node (the paths must be the same there).
results=$(cd "$results" && pwd)
plan=$(cd "$(dirname "$plan")" && pwd)/$(basename "$plan")
lead=${LEAD_SECONDS:-60}
case $lead in
  '' | *[!0-9]*) echo "$0: LEAD_SECONDS must be a whole number of seconds, not '$lead'" >&2; exit 2 ;;
esac
start_at=${START_AT:-$((($(date +%s) + lead) * 1000))}

# The -D properties the segments run with go to the merge too: its --plan renders the same thresholds.
merge_args=()
take_next=0
for arg in "$@"; do
  if [ "$take_next" = 1 ]; then
    merge_args+=(-D "$arg")
    take_next=0
    continue
  fi
  case $arg in
    -D) take_next=1 ;;
    -D?*) merge_args+=("$arg") ;;
  esac
done

export RESULTS="$results" START_AT="$start_at" SEGMENTS="$n"
read -r -a segment_opts <<<"${SEGMENT_SBATCH_OPTS:-}"
read -r -a merge_opts <<<"${MERGE_SBATCH_OPTS:-}"

# --export=ALL: the jobs get RESULTS, START_AT, SEGMENTS and PLANRUN whatever the site's SBATCH_EXPORT says.
# --parsable prints `ID` or `ID;CLUSTER`.
array_job=$(sbatch --parsable --export=ALL --array="0-$((n - 1))" --output="$results/segment-%a.out" \
  ${segment_opts[@]+"${segment_opts[@]}"} "$here/planrun-segments.sbatch" "$plan" "$@")
array_job=${array_job%%;*}
merge_job=$(sbatch --parsable --export=ALL --dependency="afterany:$array_job" --output="$results/merge.out" \
  ${merge_opts[@]+"${merge_opts[@]}"} "$here/planrun-merge.sbatch" "$plan" ${merge_args[@]+"${merge_args[@]}"})
merge_job=${merge_job%%;*}

echo "start_at=$start_at"
echo "array_job=$array_job"
echo "merge_job=$merge_job"
