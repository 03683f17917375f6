#!/usr/bin/env bash
# kgemm-run on one GPU (the CUDA build): the ResNet GEMM shapes' times.
#   sbatch -p <gpu partition> cluster/gpu_job.sh     (from the checkout's top folder)
# Slurm's --gres=gpu:1 sets CUDA_VISIBLE_DEVICES to the GPU it grants, which Kokkos sees as
# device 0. Settings: cluster/common.sh (KGEMM_CUDA_BUILD_DIR, KGEMM_OUT_DIR, KGEMM_SETUP for
# `module load cuda ...`); KGEMM_RUN_ARGS: kgemm-run's options (default: --model resnet18 --image 224).
#SBATCH --job-name=kgemm-gpu
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --gres=gpu:1
#SBATCH --time=00:30:00
#SBATCH --output=kgemm-gpu-%j.out
set -euo pipefail
KGEMM_ROOT=${KGEMM_ROOT:-${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}}
# shellcheck source=common.sh
source "$KGEMM_ROOT/cluster/common.sh"

if [ "${KGEMM_DRY_RUN:-0}" != 1 ] && [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
  echo "kgemm: no GPU granted to this job (CUDA_VISIBLE_DEVICES unset): submit with --gres=gpu:1 to a GPU partition" >&2
  exit 1
fi
run_kgemm "$KGEMM_CUDA_BUILD_DIR" cuda gpu
