#!/usr/bin/env bash
# s21, one call on the H100 (Kokkos 4.6.01 + CUDA 12.4, sm_90a, the lift compiled in): the CUDA
# tests (operand windows through dispatch, the team scratch lift on and, in a second process, off),
# then batch 128 per dtype: kgemm-run with the committed store, autotune from that store with the
# lift (deeper pipelines legal), kgemm-run with the result, and cuBLAS on the same inputs.
# Usage (device tool, carry .device): docs/results/h100/2026-11-26-s21/run.sh [fp16,fp32] [budget]
set -u
dtypes=${1:-fp16,fp32}; budget=${2:-30}
D=$PWD/.device/h100; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$D/tests; X=$D/tools; STORE=$PWD/configs/cuda-nvidia-h100-80gb-hbm3.yaml
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"

step tests
$T/test_store --gtest_filter='*Cuda*:TunedConfigs*:OperandLayout*' --gtest_brief=1 > "$R/test_store.log" 2>&1
echo "test_store rc=$? $(tail -1 "$R/test_store.log")"
$T/test_gemm --gtest_filter='*Cuda*:TeamScratch*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1
echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"; grep -h '^\[team scratch\]' "$R/test_gemm.log" | sort -u
KGEMM_TEAM_SCRATCH_LIFT=off $T/test_gemm --gtest_filter='*Cuda*TeamScratch*:*Cuda*Warpgroup*' --gtest_brief=1 > "$R/test_gemm_off.log" 2>&1
echo "test_gemm lift off rc=$? $(tail -1 "$R/test_gemm_off.log")"; grep -h '^\[team scratch\]' "$R/test_gemm_off.log" | sort -u
$T/test_api --gtest_brief=1 > "$R/test_api.log" 2>&1
echo "test_api rc=$? $(tail -1 "$R/test_api.log")"

$X/kgemm-run --space cuda --batch 128 --list-shapes > "$R/shapes.csv"
(cd "$R" && nvcc --version | tail -1 && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > /dev/null 2>&1
for d in ${dtypes//,/ }; do
  step "$d committed store"
  KGEMM_CONFIG_FILE=$STORE $X/kgemm-run --space cuda --batch 128 --dtype $d --format csv > "$R/committed-$d.csv" 2> "$R/committed-$d.err"
  geomean "$R/committed-$d.csv"
  cp "$STORE" "$R/tuned-$d.yaml"
  step "$d autotune (budget $budget, from the committed store)"
  $X/autotune --space cuda --shapes resnet50 --batch 128 --dtype $d --budget "$budget" --out "$R/tuned-$d.yaml" \
      > "$R/autotune-$d.log" 2> "$R/autotune-$d.err"
  echo "autotune rc=$? $(grep -h 'team scratch\|geometric' "$R/autotune-$d.log")"
  KGEMM_CONFIG_FILE=$R/tuned-$d.yaml $X/kgemm-run --space cuda --batch 128 --dtype $d --format csv > "$R/tuned-$d.csv" 2> "$R/tuned-$d.err"
  geomean "$R/tuned-$d.csv"
  step "$d cuBLAS"
  /tmp/cublas_peer --shapes "$R/shapes.csv" --dtype $d --kgemm-inputs --out "$R/cublas-$d.json" > "$R/cublas-$d.log" 2>&1
  grep -h "geometric" "$R/cublas-$d.log"
done
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
