#!/bin/sh
# Builds the CUTLASS peer for H100 (sm_90) with this machine's nvcc: build.sh [OUTPUT] (default ./cutlass_peer); NVCC=path overrides nvcc.
# CUTLASS is headers only and not installed anywhere kgemm builds: CUTLASS_DIR=dir names a CUTLASS
# checkout (3.x or 4.x), or a copy of just its include/ folder, which is all the peer reads.
# It shares its measuring and output with the cuBLAS peer (../cublas_peer/peer_common.cuh), reads
# kgemm's input hash from tuner/ and kernels/ (headers without Kokkos) and writes its JSON with
# nlohmann-json (Debian's nlohmann-json3-dev): JSON_INCLUDE=dir names the directory holding
# nlohmann/ where the compiler's include path has none (a GPU machine without the package).
set -e
out="${1:-cutlass_peer}"
here=$(dirname "$0")
if [ -z "$CUTLASS_DIR" ]; then
  echo "build.sh: set CUTLASS_DIR to the directory holding CUTLASS's include/" >&2
  exit 1
fi
if [ ! -f "$CUTLASS_DIR/include/cutlass/gemm/device/gemm.h" ]; then
  echo "build.sh: CUTLASS_DIR=$CUTLASS_DIR has no include/cutlass/gemm/device/gemm.h" >&2
  exit 1
fi
# --expt-relaxed-constexpr: CUTLASS's headers call constexpr host functions from device code.
"${NVCC:-nvcc}" -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90,code=sm_90 \
    -I "$CUTLASS_DIR/include" -I "$here/../cublas_peer" \
    -I "$here/../../spaces" -I "$here/../../tuner" -I "$here/../../kernels" ${JSON_INCLUDE:+-I "$JSON_INCLUDE"} \
    -o "$out" "$here/cutlass_peer.cu"
