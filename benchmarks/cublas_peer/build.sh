#!/bin/sh
# Builds the cuBLAS and cuBLASLt peer for H100 (sm_90) with this machine's nvcc: build.sh [OUTPUT] (default ./cublas_peer); NVCC=path overrides nvcc.
# It reads kgemm's input hash from tuner/ and kernels/ and its stream hold from spaces/ (headers
# without Kokkos) and writes its JSON with nlohmann-json (Debian's nlohmann-json3-dev):
# JSON_INCLUDE=dir names the directory holding nlohmann/ where the compiler's include path has none
# (a GPU machine without the package).
set -e
out="${1:-cublas_peer}"
here=$(dirname "$0")
"${NVCC:-nvcc}" -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I "$here/../../spaces" -I "$here/../../tuner" -I "$here/../../kernels" \
    ${JSON_INCLUDE:+-I "$JSON_INCLUDE"} \
    -o "$out" "$here/cublas_peer.cu" -lcublasLt -lcublas
