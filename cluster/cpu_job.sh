#!/usr/bin/env bash
# kgemm-run on a whole CPU node (OpenMP, one thread per core): the ResNet GEMM shapes' times.
#   sbatch cluster/cpu_job.sh                     (from the checkout's top folder)
#   KGEMM_RUN_ARGS="--model resnet50 --batch 128" sbatch -p <partition> cluster/cpu_job.sh
# Settings: cluster/common.sh (KGEMM_ROOT, KGEMM_BUILD_DIR, KGEMM_OUT_DIR, KGEMM_SETUP);
# KGEMM_RUN_ARGS: kgemm-run's options (default: --model resnet18 --image 224).
#SBATCH --job-name=kgemm-cpu
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --exclusive
#SBATCH --time=00:30:00
#SBATCH --output=kgemm-cpu-%j.out
set -euo pipefail
KGEMM_ROOT=${KGEMM_ROOT:-${SLURM_SUBMIT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}}
# shellcheck source=common.sh
source "$KGEMM_ROOT/cluster/common.sh"

run_kgemm "$KGEMM_BUILD_DIR" "${KGEMM_CPU_SPACE:-openmp}" cpu
