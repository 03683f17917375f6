#!/usr/bin/env bash
# Tuning as a job array: task i of N tunes shard i/N of the problem list into its own store,
# $KGEMM_OUT_DIR/stores/<array job id>/shard-<i>.yaml; cluster/merge_job.sh joins them after.
#   sbatch --array=0-3 cluster/tune_array.sh      (4 shards; submit.sh also submits the merge)
# Settings: cluster/common.sh, and
#   KGEMM_SPACE       openmp (default) or cuda (then also sbatch --gres=gpu:1, and the CUDA build)
#   KGEMM_TUNE_ARGS   autotune's problem and search options (default: --shapes resnet50 --batch 1,128)
#   KGEMM_TIME_LIMIT  autotune --time-limit, inside the job's --time (default: 110m of 2 hours)
#   KGEMM_SHARDS      the shard count (default: the array's task count)
#SBATCH --job-name=kgemm-tune
#SBATCH --array=0-1
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=02:00:00
#SBATCH --output=kgemm-tune-%A_%a.out
set -euo pipefail
KGEMM_ROOT=${KGEMM_ROOT:-${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}}
# shellcheck source=common.sh
source "$KGEMM_ROOT/cluster/common.sh"

index=${SLURM_ARRAY_TASK_ID:?not a job array task: submit with sbatch --array=0-<N-1>}
shards=${KGEMM_SHARDS:-${SLURM_ARRAY_TASK_COUNT:?}}
# Shard i/N must mean task i of tasks 0..N-1: an array like 1-4 or 0-6:2 would skip shards.
if [ "${SLURM_ARRAY_TASK_MIN:-0}" != 0 ] || [ "${SLURM_ARRAY_TASK_MAX:-$((shards - 1))}" != $((shards - 1)) ]; then
  echo "kgemm: array tasks ${SLURM_ARRAY_TASK_MIN:-?}-${SLURM_ARRAY_TASK_MAX:-?} for $shards shards:" \
       "submit with --array=0-$((shards - 1)) (every task from 0, no step)" >&2
  exit 1
fi
stores=$KGEMM_OUT_DIR/stores/${SLURM_ARRAY_JOB_ID:-local}
[ "${KGEMM_DRY_RUN:-0}" = 1 ] || mkdir -p "$stores"
tool=$(kgemm_tool "$(tuning_build_dir)" autotune)
words "${KGEMM_TUNE_ARGS:---shapes resnet50 --batch 1,128}"
echo "kgemm: $(hostname -s), task $index of array ${SLURM_ARRAY_JOB_ID:-none}, ${KGEMM_SPACE:-openmp}, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
run "$tool" --space "${KGEMM_SPACE:-openmp}" --shard "$index/$shards" --time-limit "${KGEMM_TIME_LIMIT:-110m}" \
  --out "$stores/shard-$index.yaml" "${words[@]}"
