#!/usr/bin/env bash
# Joins the stores of a tuning array (cluster/tune_array.sh) into one, after the array ends:
#   sbatch --dependency=afterok:<array job id> --export=ALL,KGEMM_ARRAY_JOB=<id>,KGEMM_SHARDS=<N> cluster/merge_job.sh
# (submit.sh does this). Every shard's store must be there; the merged store is
# $KGEMM_MERGED_STORE (default: $KGEMM_OUT_DIR/stores/tuned.yaml), extended when it exists:
# where two stores hold one problem, the faster measurement stays. kgemm then uses it with
# KGEMM_CONFIG_FILE=<that file>, or copied into a folder of KGEMM_CONFIG_PATH as <device>.yaml.
#SBATCH --job-name=kgemm-merge
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --time=00:10:00
#SBATCH --output=kgemm-merge-%j.out
set -euo pipefail
KGEMM_ROOT=${KGEMM_ROOT:-${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}}
# shellcheck source=common.sh
source "$KGEMM_ROOT/cluster/common.sh"

array=${KGEMM_ARRAY_JOB:?set KGEMM_ARRAY_JOB to the job id of the tuning array}
shards=${KGEMM_SHARDS:?set KGEMM_SHARDS to the task count of the tuning array}
inputs=()
for ((i = 0; i < shards; ++i)); do
  store=$KGEMM_OUT_DIR/stores/$array/shard-$i.yaml
  if [ ! -f "$store" ] && [ "${KGEMM_DRY_RUN:-0}" != 1 ]; then
    echo "kgemm: shard $i/$shards left no store $store: see its log (kgemm-tune-${array}_$i.out); nothing merged" >&2
    exit 1
  fi
  inputs+=("$store")
done
# The merge reads no device: any build's autotune merges any device's stores.
tool=$(kgemm_tool "${KGEMM_MERGE_BUILD_DIR:-$(tuning_build_dir)}" autotune)
run "$tool" merge --out "${KGEMM_MERGED_STORE:-$KGEMM_OUT_DIR/stores/tuned.yaml}" "${inputs[@]}"
