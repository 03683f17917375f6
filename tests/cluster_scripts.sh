#!/usr/bin/env bash
# The cluster kit's scripts without a cluster: each parses (bash -n), and in a dry run each
# names the command it would run: the GPU job kgemm-run on cuda, an array task its shard, the
# merge job every shard's store, submit.sh the chained sbatch calls (the GPU job with
# --gres=gpu:1, the merge after the array with afterok). Bad settings are refused with a message.
# Usage: cluster_scripts.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=support/checks.sh
source "$(dirname "$0")/support/checks.sh"
for script in "$root"/cluster/*.sh; do bash -n "$script" || fail "bash -n $script"; done
for script in cpu_job gpu_job tune_array merge_job; do
  grep -q '^set -euo pipefail$' "$root/cluster/$script.sh" || fail "$script.sh does not set -euo pipefail"
done
grep -q '^#SBATCH --gres=gpu:1$' "$root/cluster/gpu_job.sh" || fail "gpu_job.sh asks for no GPU"
grep -q '^#SBATCH --array=0-' "$root/cluster/tune_array.sh" || fail "tune_array.sh is no job array"

export KGEMM_OUT_DIR=$dir/kit KGEMM_BUILD_DIR=$dir/host-build KGEMM_CUDA_BUILD_DIR=$dir/cuda-build KGEMM_DRY_RUN=1
succeeds "dry run: $dir/cuda-build/tools/kgemm-run --space cuda --model resnet18 --image 224" bash "$root/cluster/gpu_job.sh"
succeeds "dry run: $dir/host-build/tools/kgemm-run --space openmp --model resnet50" env KGEMM_RUN_ARGS="--model resnet50" bash "$root/cluster/cpu_job.sh"
succeeds "--space openmp --shard 1/3 --time-limit 110m --out $dir/kit/stores/41/shard-1.yaml --shapes resnet50 --batch 1,128" \
  env SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_JOB_ID=41 \
  bash "$root/cluster/tune_array.sh"
succeeds "$dir/cuda-build/tools/autotune --space cuda --shard 0/2 --time-limit 50m" \
  env KGEMM_SPACE=cuda KGEMM_TIME_LIMIT=50m SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 bash "$root/cluster/tune_array.sh"
succeeds "merge --out $dir/kit/stores/tuned.yaml $dir/kit/stores/41/shard-0.yaml $dir/kit/stores/41/shard-1.yaml $dir/kit/stores/41/shard-2.yaml" \
  env KGEMM_ARRAY_JOB=41 KGEMM_SHARDS=3 bash "$root/cluster/merge_job.sh"
[ ! -e "$dir/kit" ] || fail "a dry run created $dir/kit"

"$root/cluster/submit.sh" --dry-run --gpu --shards 3 > "$dir/submit" 2>&1 || fail "submit.sh --dry-run: $(cat "$dir/submit")"
for line in "sbatch --output=$dir/kit/logs/%x-%j.out $root/cluster/cpu_job.sh" \
            "sbatch --gres=gpu:1 --output=$dir/kit/logs/%x-%j.out $root/cluster/gpu_job.sh" \
            "sbatch --array=0-2 --export=ALL,KGEMM_SHARDS=3 --output=$dir/kit/logs/%x-%A_%a.out $root/cluster/tune_array.sh" \
            "sbatch --dependency=afterok:TUNING_ARRAY_JOB_ID --kill-on-invalid-dep=yes --export=ALL,KGEMM_SHARDS=3,KGEMM_ARRAY_JOB=TUNING_ARRAY_JOB_ID"; do
  grep -qF -- "dry run: $line" "$dir/submit" || fail "submit.sh --dry-run lacks: $line"
done
grep -qF -- "--gres=gpu:1 -p gpu --array=0-1" <(KGEMM_SPACE=cuda KGEMM_GPU_SBATCH_ARGS="-p gpu" "$root/cluster/submit.sh" --dry-run --no-cpu 2>&1) ||
  fail "GPU tuning array without --gres=gpu:1 and the GPU options"

unset KGEMM_DRY_RUN
refused "array tasks 1-2 for 2 shards: submit with --array=0-1" \
  env SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=2 bash "$root/cluster/tune_array.sh"
refused "not a job array task" bash "$root/cluster/tune_array.sh"
refused "no $dir/host-build/tools/kgemm-run: build it first" bash "$root/cluster/cpu_job.sh"
refused "no GPU granted to this job" env -u CUDA_VISIBLE_DEVICES bash "$root/cluster/gpu_job.sh"
refused "set KGEMM_ARRAY_JOB" bash "$root/cluster/merge_job.sh"
refused "shard 1/2 left no store $dir/kit/stores/7/shard-1.yaml" env KGEMM_ARRAY_JOB=7 KGEMM_SHARDS=2 bash -c \
  "mkdir -p $dir/kit/stores/7 && touch $dir/kit/stores/7/shard-0.yaml && bash $root/cluster/merge_job.sh"
refused "--shards '0' is not a count" "$root/cluster/submit.sh" --dry-run --shards 0
refused "unknown argument '--gpus'" "$root/cluster/submit.sh" --gpus
refused "--out FILE is required" "$root/cluster/tune_node.sh" --space openmp --processes 2
refused "--space 'rocm' is not cuda, openmp or serial" "$root/cluster/tune_node.sh" --space rocm --out x.yaml
refused "--processes '0' is not a whole number" "$root/cluster/tune_node.sh" --processes 0 --out x.yaml
refused "no autotune at /nowhere/autotune" "$root/cluster/tune_node.sh" --space openmp --processes 2 --out x.yaml --autotune /nowhere/autotune

finish "cluster-script"
