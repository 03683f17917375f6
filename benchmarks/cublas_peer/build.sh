#!/bin/sh
# Builds the cuBLAS peer for H100 (sm_90) with this machine's nvcc: build.sh [OUTPUT] (default ./cublas_peer); NVCC=path overrides nvcc.
set -e
out="${1:-cublas_peer}"
"${NVCC:-nvcc}" -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o "$out" "$(dirname "$0")/cublas_peer.cu" -lcublas
