#!/usr/bin/env bash
# s21 call 2: test_store's CUDA cases after the dispatch fixes; then, at batch 128, fixed configs
# that need more team scratch than Kokkos 4.6 gives (the lift in force) beside the committed
# kernels' usual configs, three slab buffers or more, larger blocks; then fp32 autotune with the
# lift from the committed store and cuBLAS SGEMM on the same inputs.
set -u
D=$PWD/.device/h100; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$D/tests; X=$D/tools; STORE=$PWD/configs/cuda-nvidia-h100-80gb-hbm3.yaml
step() { echo "=== $(date +%T) $*"; }
geomean() {  # geomean FILE.csv: kgemm-run's per-layer GFLOP/s, as TFLOP/s
  python3 -c 'import csv, math, sys
r = [float(x["gflops"]) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]]
print(sys.argv[1].rsplit("/", 1)[-1], "geomean %.1f TFLOP/s over %d layers" % (math.exp(sum(map(math.log, r)) / len(r)) / 1e3, len(r)))' "$1"
}
step tests
$T/test_store --gtest_filter='*Cuda*:TunedConfigs*:OperandLayout*' --gtest_brief=1 > "$R/test_store.log" 2>&1
echo "test_store rc=$? $(tail -1 "$R/test_store.log")"; grep "FAILED  \]" "$R/test_store.log"
step probes
for p in fp16:mb64_nb128_kb64_tm64_tn128_team128_wg fp16:mb64_nb128_kb64_tm64_tn128_team128_st3_wg \
         fp16:mb64_nb128_kb64_tm64_tn128_team128_st4_wg fp16:mb128_nb128_kb64_tm64_tn128_team256_wg \
         fp16:mb128_nb128_kb64_tm64_tn128_team256_st3_wg fp16:mb256_nb128_kb64_tm64_tn128_team512_st3_wg \
         fp32:mb128_nb64_kb16_tm128_tn64_team128_wg fp32:mb128_nb64_kb32_tm128_tn64_team128_st3_wg \
         fp32:mb128_nb64_kb16_tm128_tn64_team128_st4_wg fp32:mb128_nb128_kb16_tm128_tn64_team256_st3_wg; do
  d=${p%%:*}; c=${p#*:}
  $X/kgemm-run --space cuda --batch 128 --dtype $d --config $c --format csv > "$R/probe-$d-$c.csv" 2> "$R/probe-$d-$c.err"
  echo "rc=$? $(geomean "$R/probe-$d-$c.csv")"
done
$X/kgemm-run --space cuda --batch 128 --list-shapes > "$R/shapes.csv"
"$PWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer > /dev/null 2>&1
step "fp32 committed store"
KGEMM_CONFIG_FILE=$STORE $X/kgemm-run --space cuda --batch 128 --dtype fp32 --format csv > "$R/committed-fp32.csv" 2> "$R/committed-fp32.err"
geomean "$R/committed-fp32.csv"
cp "$STORE" "$R/tuned-fp32.yaml"
step "fp32 autotune (budget 30, from the committed store)"
$X/autotune --space cuda --shapes resnet50 --batch 128 --dtype fp32 --budget 30 --out "$R/tuned-fp32.yaml" \
    > "$R/autotune-fp32.log" 2> "$R/autotune-fp32.err"
echo "autotune rc=$? $(grep -h 'geometric' "$R/autotune-fp32.log")"
KGEMM_CONFIG_FILE=$R/tuned-fp32.yaml $X/kgemm-run --space cuda --batch 128 --dtype fp32 --format csv > "$R/tuned-fp32.csv" 2> "$R/tuned-fp32.err"
geomean "$R/tuned-fp32.csv"
step "fp32 cuBLAS"
/tmp/cublas_peer --shapes "$R/shapes.csv" --dtype fp32 --kgemm-inputs --out "$R/cublas-fp32.json" > "$R/cublas-fp32.log" 2>&1
grep -h "geometric" "$R/cublas-fp32.log"
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
