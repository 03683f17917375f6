#!/usr/bin/env bash
# Compile check of the sm_90a building blocks with the CUDA 12 tree (no GPU needed):
#   1. spaces/' tensor-core headers (mma_sync.hpp, warpgroup_mma.hpp, mbarrier.hpp, tensor_copy.hpp) compile as plain
#      C++ on the host (g++-12, no CUDA);
#   2. ci/sm90a_building_blocks.cu for sm_90a shows every instruction in its SASS (ldmatrix,
#      mma.sync fp16 and TF32, wgmma m64n{64,128,256}k16 and TF32 m64n128k8, the warpgroup fences, the
#      shared-memory barriers and the bulk tensor copies completing on them, the register hand-over
#      (setmaxnreg) at the register count its pool assumes), and for sm_90 and
#      sm_80 the mma.sync path with no wgmma at all (the arch-feature guard);
#   3. benchmarks/ceilings/wgmma_ceiling.cu compiles for sm_90a and links against the tree's
#      libcudart.so.12; so do the warp-specialized study (warp_specialized_wgmma.cu), whose
#      SASS holds its wgmma and mbarrier waits, and the 3xTF32 study (wgmma_tf32x3.cu), whose
#      SASS holds TF32 wgmma.
# Usage: ci/sm90a_check.sh [CUDA12_ROOT]    (default .cache/cuda-12.4, from ci/bootstrap.sh --cuda12)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cuda=${1:-${KGEMM_CACHE:-$repo/.cache}/cuda-12.4}
[ -x "$cuda/bin/nvcc" ] || { echo "sm90a check: no nvcc in $cuda/bin (run ci/bootstrap.sh --cuda12)" >&2; exit 1; }
export PATH=$cuda/bin:$PATH CUDA_HOME=$cuda
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
nvcc_flags=(-O3 -std=c++17 -ccbin g++-12 -I "$repo/spaces")
fail() { echo "sm90a check: FAILED: $*" >&2; exit 1; }
echo "sm90a check: $(nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*') in $cuda"

printf '#include "kgemm/spaces/mbarrier.hpp"\n#include "kgemm/spaces/mma_sync.hpp"\n#include "kgemm/spaces/tensor_copy.hpp"\n#include "kgemm/spaces/warpgroup_mma.hpp"\n' |
  g++-12 -std=c++17 -fsyntax-only -Wall -Werror -I "$repo/spaces" -x c++ - || fail "headers do not compile on the host"

# sass TARGET: the SASS instruction names of the building blocks compiled for TARGET, counted
sass() {
  nvcc "${nvcc_flags[@]}" -gencode "arch=compute_$1,code=sm_$1" -cubin -o "$out/blocks_$1.cubin" \
      "$repo/ci/sm90a_building_blocks.cu" || fail "building blocks do not compile for sm_$1"
  cuobjdump -sass "$out/blocks_$1.cubin" | grep -oE 'HGMMA\.[0-9x]+\.F32(\.TF32)?|HMMA\.16816\.F32|HMMA\.1688\.F32\.TF32|LDSM\.16\.MT?88\.4|WARPGROUP\.[A-Z]+|SYNCS\.[A-Z0-9.]+|UTMALDG\.[0-9D]+' |
    sort | uniq -c
}
expect() {  # expect TARGET SASS_LISTING INSTRUCTION...: each instruction appears in the listing
  local target=$1 listing=$2; shift 2
  for instruction in "$@"; do
    grep -qF " $instruction" <<< "$listing" || fail "sm_$target SASS lacks $instruction; it has: $listing"
  done
}
sm90a=$(sass 90a)
expect 90a "$sm90a" LDSM.16.M88.4 LDSM.16.MT88.4 HMMA.16816.F32 HMMA.1688.F32.TF32 HGMMA.64x64x16.F32 HGMMA.64x128x16.F32 \
    HGMMA.64x256x16.F32 HGMMA.64x128x8.F32.TF32 WARPGROUP.ARRIVE WARPGROUP.DEPBAR \
    SYNCS.EXCH.64 SYNCS.ARRIVE.TRANS64.A1T0 SYNCS.PHASECHK.TRANS64.TRYWAIT UTMALDG.3D
# The register hand-over: each thread starts with registers_at_entry(384, 1) = 168, and hands over.
grep -q 'USETMAXREG' < <(cuobjdump -sass "$out/blocks_90a.cubin") || fail "sm_90a SASS lacks USETMAXREG (setmaxnreg)"
handover=$(cuobjdump -res-usage "$out/blocks_90a.cubin" | grep -A1 register_handover_blocks | grep -o 'REG:[0-9]*')
[ "$handover" = REG:168 ] || fail "the register hand-over kernel starts with $handover, not the REG:168 its pool assumes"
for target in 90 80; do
  listing=$(sass $target)
  expect $target "$listing" LDSM.16.M88.4 LDSM.16.MT88.4 HMMA.16816.F32 HMMA.1688.F32.TF32
  ! grep -qE 'HGMMA|WARPGROUP' <<< "$listing" || fail "sm_$target SASS has wgmma instructions: $listing"
done

nvcc "${nvcc_flags[@]}" -gencode arch=compute_90a,code=sm_90a -cudart shared -o "$out/wgmma_ceiling" \
    "$repo/benchmarks/ceilings/wgmma_ceiling.cu" || fail "wgmma_ceiling does not compile and link"
cudart=$(LD_LIBRARY_PATH=$cuda/lib64 ldd "$out/wgmma_ceiling" | grep -o 'libcudart.so.12 => [^ ]*')
[ "$cudart" = "libcudart.so.12 => $cuda/lib64/libcudart.so.12" ] || fail "wgmma_ceiling links '$cudart'"
cuobjdump -sass "$out/wgmma_ceiling" | grep -q 'HGMMA.64x256x16.F32' || fail "wgmma_ceiling has no HGMMA"
nvcc "${nvcc_flags[@]}" -gencode arch=compute_90a,code=sm_90a -cudart shared -o "$out/warp_specialized_wgmma" \
    "$repo/benchmarks/ceilings/warp_specialized_wgmma.cu" || fail "warp_specialized_wgmma does not compile and link"
study=$(cuobjdump -sass "$out/warp_specialized_wgmma")
grep -q 'HGMMA.64x128x16.F32' <<< "$study" && grep -q 'SYNCS' <<< "$study" ||
  fail "warp_specialized_wgmma lacks its wgmma or mbarrier instructions"
nvcc "${nvcc_flags[@]}" -gencode arch=compute_90a,code=sm_90a -cudart shared -o "$out/wgmma_tf32x3" \
    "$repo/benchmarks/ceilings/wgmma_tf32x3.cu" || fail "wgmma_tf32x3 does not compile and link"
cuobjdump -sass "$out/wgmma_tf32x3" | grep -q 'HGMMA.64x128x8.F32.TF32' || fail "wgmma_tf32x3 has no TF32 HGMMA"
echo "sm90a check: OK (sm_90a SASS:" $sm90a "; the register hand-over at REG:168; sm_90, sm_80: mma.sync only; wgmma_ceiling, warp_specialized_wgmma and wgmma_tf32x3 linked)"
