#!/usr/bin/env bash
# Submits the whole kit, chained: the CPU job, the GPU job (--gpu), and the tuning array of N
# shards followed by the merge job, which starts only when every shard succeeded
# (--dependency=afterok). Prints the job ids and writes them to $KGEMM_OUT_DIR/jobs.txt.
# Usage: cluster/submit.sh [--shards N] [--gpu] [--no-cpu] [--no-tune] [--dry-run]
# Environment (see cluster/common.sh and each job script):
#   KGEMM_SBATCH_ARGS      sbatch options for every job, e.g. "-p short -A myproject"
#   KGEMM_GPU_SBATCH_ARGS  sbatch options for GPU jobs only, e.g. "-p gpu"
#   KGEMM_SPACE=cuda       tune on GPUs (each array task gets --gres=gpu:1 and the GPU options)
#   KGEMM_RUN_ARGS, KGEMM_TUNE_ARGS, KGEMM_TIME_LIMIT, KGEMM_ROOT, KGEMM_BUILD_DIR,
#   KGEMM_CUDA_BUILD_DIR, KGEMM_OUT_DIR, KGEMM_SETUP: passed on to the jobs
set -euo pipefail
KGEMM_ROOT=${KGEMM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
shards=2 gpu=0 cpu=1 tune=1
while [ $# -gt 0 ]; do
  case $1 in
    --shards) [ $# -ge 2 ] || { echo "submit.sh: --shards needs a count" >&2; exit 1; }; shards=$2; shift ;;
    --shards=*) shards=${1#--shards=} ;;
    --gpu) gpu=1 ;;
    --no-cpu) cpu=0 ;;
    --no-tune) tune=0 ;;
    --dry-run) export KGEMM_DRY_RUN=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "submit.sh: unknown argument '$1' (see --help)" >&2; exit 1 ;;
  esac
  shift
done
if ! [[ $shards =~ ^[0-9]+$ ]] || [ "$shards" -lt 1 ] || [ "$shards" -gt 10000 ]; then
  echo "submit.sh: --shards '$shards' is not a count from 1 to 10000" >&2
  exit 1
fi
# shellcheck source=common.sh
source "$KGEMM_ROOT/cluster/common.sh"
dry=${KGEMM_DRY_RUN:-0}
if [ "$dry" != 1 ] && ! command -v sbatch > /dev/null; then
  echo "submit.sh: no sbatch here: run it on a Slurm login node (or --dry-run to see the commands)" >&2
  exit 1
fi
words "${KGEMM_SBATCH_ARGS:-}"
common=("${words[@]}")
words "${KGEMM_GPU_SBATCH_ARGS:-}"
gpu_args=(--gres=gpu:1 "${words[@]}")
logs=$KGEMM_OUT_DIR/logs
export KGEMM_ROOT

# submit <name> <sbatch options...> -- prints the job id (a made-up one in a dry run).
submit() {
  local name=$1
  shift
  if [ "$dry" = 1 ]; then
    show_command sbatch "$@" >&2
    echo "${name^^}_JOB_ID" | tr - _
  else
    local id
    id=$(sbatch --parsable "$@")
    echo "${id%%;*}"  # --parsable prints "id" or "id;cluster"
  fi
}

jobs=()
if [ "$cpu" = 1 ]; then
  id=$(submit cpu "${common[@]}" --output="$logs/%x-%j.out" "$KGEMM_ROOT/cluster/cpu_job.sh")
  jobs+=("cpu=$id")
fi
if [ "$gpu" = 1 ]; then
  id=$(submit gpu "${common[@]}" "${gpu_args[@]}" --output="$logs/%x-%j.out" "$KGEMM_ROOT/cluster/gpu_job.sh")
  jobs+=("gpu=$id")
fi
if [ "$tune" = 1 ]; then
  tune_args=("${common[@]}")
  [ "${KGEMM_SPACE:-openmp}" != cuda ] || tune_args+=("${gpu_args[@]}")
  array=$(submit tuning-array "${tune_args[@]}" --array="0-$((shards - 1))" --export="ALL,KGEMM_SHARDS=$shards" \
    --output="$logs/%x-%A_%a.out" "$KGEMM_ROOT/cluster/tune_array.sh")
  merge=$(submit merge "${common[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --export="ALL,KGEMM_SHARDS=$shards,KGEMM_ARRAY_JOB=$array" --output="$logs/%x-%j.out" \
    "$KGEMM_ROOT/cluster/merge_job.sh")
  jobs+=("array=$array" "merge=$merge")
fi
echo "jobs: ${jobs[*]}"
[ "$dry" = 1 ] || echo "jobs: ${jobs[*]}" > "$KGEMM_OUT_DIR/jobs.txt"
echo "outputs: $KGEMM_OUT_DIR (results/, stores/, logs/); squeue -u ${USER:-$(id -un)} shows the jobs"
