#!/bin/sh
# Builds the cuBLAS and cuBLASLt peer for H100 (sm_90) with this machine's nvcc: build.sh [OUTPUT] (default ./cublas_peer); NVCC=path overrides nvcc.
# It reads kgemm's input hash from tuner/ and kernels/ (headers without Kokkos).
set -e
out="${1:-cublas_peer}"
here=$(dirname "$0")
"${NVCC:-nvcc}" -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I "$here/../../tuner" -I "$here/../../kernels" \
    -o "$out" "$here/cublas_peer.cu" -lcublasLt -lcublas
