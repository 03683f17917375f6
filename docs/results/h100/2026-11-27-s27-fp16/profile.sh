#!/usr/bin/env bash
# s27 (issue 40): Nsight Compute on one batch-128 ResNet-50 layer, kgemm's warp-specialized
# configs (PROFILE_CONFIGS) and cuBLAS' fp16 kernel on the same shape (SHAPE), to find what
# bounds the main loop (L2 and shared-memory throughput, tensor pipe, stalls). PACK holds a
# build packed by /work/gpu/pack.sh (kgemm-run). Writes $OUT/profile/*.txt.
set -u
D=$PWD/${PACK:-.device/s27}; P=$OUT/profile; mkdir -p "$P"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SHAPE=${SHAPE:-25088x512x1024}
NCU=(ncu --clock-control none --launch-skip 3 --launch-count 1 --kernel-name-base mangled
     --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
     --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy)
command -v ncu > /dev/null || { echo "no ncu on this machine"; exit 0; }
for c in ${PROFILE_CONFIGS:-mb128_nb128_kb64_tm64_tn128_team384_st4_ws}; do
  timeout 240 "${NCU[@]}" --kernel-name regex:WarpSpecialized \
      "$D/tools/kgemm-run" --space cuda --shape "$SHAPE" --dtype fp16 --config "$c" > "$P/kgemm-$c.txt" 2>&1
  echo "ncu kgemm $c rc=$?"
done
IFS=x read -r m n k <<< "$SHAPE"
printf 'set,layer,m,n,k\nprofile,%s,%s,%s,%s\n' "$SHAPE" "$m" "$n" "$k" > "$P/shape.csv"
[ -x /tmp/cublas_peer ] || (cd "$P" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer > /dev/null 2>&1)
timeout 240 "${NCU[@]}" --kernel-name regex:'nvjet|gemm|sm90|cutlass|xmma' /tmp/cublas_peer --shapes "$P/shape.csv" \
    --dtype fp16 --impls cublas --reps 3 --warmup 3 > "$P/cublas.txt" 2>&1
echo "ncu cublas rc=$?"
for f in "$P"/*.txt; do
  echo "== $(basename "$f")"
  grep -E '^  [a-zA-Z_].*\(|Duration|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Shared Memory Config|Block Size|Grid Size|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Ipc Active|SM Busy|Mem Busy|Max Bandwidth|L2 Hit Rate' "$f" | head -40
done
