#!/usr/bin/env bash
# The cluster kit's scripts without a cluster: each parses (bash -n), and in a dry run each
# names the command it would run: the GPU job kgemm-run on cuda, an array task its shard, the
# merge job every shard's store, submit.sh the chained sbatch calls (the GPU job with
# --gres=gpu:1, the merge after the array with afterok). Bad settings are refused with a message.
# Usage: cluster_scripts.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# expect <fragment> <command...>: exit status 0 and the fragment in stdout + stderr.
expect() {
  local fragment=$1 status=0
  shift
  "$@" > "$dir/log" 2>&1 || status=$?
  [ "$status" = 0 ] && grep -qF -- "$fragment" "$dir/log" || { fail "$* -> exit $status, want '$fragment' in:"; sed 's/^/  /' "$dir/log"; }
}
# refused <fragment> <command...>: exit status 1 and the fragment in stderr.
refused() {
  local fragment=$1 status=0
  shift
  "$@" > /dev/null 2> "$dir/err" || status=$?
  [ "$status" = 1 ] && grep -qF -- "$fragment" "$dir/err" || { fail "$* -> exit $status, want 1 with '$fragment' in:"; sed 's/^/  /' "$dir/err"; }
}
for script in "$root"/cluster/*.sh; do bash -n "$script" || fail "bash -n $script"; done
for script in cpu_job gpu_job tune_array merge_job; do
  grep -q '^set -euo pipefail$' "$root/cluster/$script.sh" || fail "$script.sh does not set -euo pipefail"
done
grep -q '^#SBATCH --gres=gpu:1$' "$root/cluster/gpu_job.sh" || fail "gpu_job.sh asks for no GPU"
grep -q '^#SBATCH --array=0-' "$root/cluster/tune_array.sh" || fail "tune_array.sh is no job array"

export KGEMM_OUT_DIR=$dir/out KGEMM_BUILD_DIR=$dir/host-build KGEMM_CUDA_BUILD_DIR=$dir/cuda-build KGEMM_DRY_RUN=1
expect "dry run: $dir/cuda-build/tools/kgemm-run --space cuda --model resnet18 --image 224" bash "$root/cluster/gpu_job.sh"
expect "dry run: $dir/host-build/tools/kgemm-run --space openmp --model resnet50" env KGEMM_RUN_ARGS="--model resnet50" bash "$root/cluster/cpu_job.sh"
expect "--space openmp --shard 1/3 --time-limit 110m --out $dir/out/stores/41/shard-1.yaml --shapes resnet50 --batch 1,128" \
  env SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_JOB_ID=41 \
  bash "$root/cluster/tune_array.sh"
expect "$dir/cuda-build/tools/autotune --space cuda --shard 0/2 --time-limit 50m" \
  env KGEMM_SPACE=cuda KGEMM_TIME_LIMIT=50m SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 bash "$root/cluster/tune_array.sh"
expect "merge --out $dir/out/stores/tuned.yaml $dir/out/stores/41/shard-0.yaml $dir/out/stores/41/shard-1.yaml $dir/out/stores/41/shard-2.yaml" \
  env KGEMM_ARRAY_JOB=41 KGEMM_SHARDS=3 bash "$root/cluster/merge_job.sh"
[ ! -e "$dir/out" ] || fail "a dry run created $dir/out"

"$root/cluster/submit.sh" --dry-run --gpu --shards 3 > "$dir/submit" 2>&1 || fail "submit.sh --dry-run: $(cat "$dir/submit")"
for line in "sbatch --output=$dir/out/logs/%x-%j.out $root/cluster/cpu_job.sh" \
            "sbatch --gres=gpu:1 --output=$dir/out/logs/%x-%j.out $root/cluster/gpu_job.sh" \
            "sbatch --array=0-2 --export=ALL,KGEMM_SHARDS=3 --output=$dir/out/logs/%x-%A_%a.out $root/cluster/tune_array.sh" \
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
refused "shard 1/2 left no store $dir/out/stores/7/shard-1.yaml" env KGEMM_ARRAY_JOB=7 KGEMM_SHARDS=2 bash -c \
  "mkdir -p $dir/out/stores/7 && touch $dir/out/stores/7/shard-0.yaml && bash $root/cluster/merge_job.sh"
refused "--shards '0' is not a count" "$root/cluster/submit.sh" --dry-run --shards 0
refused "unknown argument '--gpus'" "$root/cluster/submit.sh" --gpus
refused "--out FILE is required" "$root/cluster/tune_node.sh" --space openmp --processes 2
refused "--space 'rocm' is not cuda, openmp or serial" "$root/cluster/tune_node.sh" --space rocm --out x.yaml
refused "--processes '0' is not a whole number" "$root/cluster/tune_node.sh" --processes 0 --out x.yaml
refused "no autotune at /nowhere/autotune" "$root/cluster/tune_node.sh" --space openmp --processes 2 --out x.yaml --autotune /nowhere/autotune

[ "$failures" = 0 ] || { echo "$failures cluster-script checks failed"; exit 1; }
echo "cluster scripts: parse, dry runs and refusals as expected"
