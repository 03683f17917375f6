#!/usr/bin/env bash
# s21 call 3, on an H200 (kgemm never tuned there): the CUDA tests; autotune ResNet-50 at batch 128,
# fp32 and fp16, into a new store (budget 30, the lift in force); kgemm-run at batch 128
# with the space defaults and with that store; cuBLAS on the same inputs.
set -u
D=$PWD/.device/h100; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$D/tests; X=$D/tools; S=$R/h200.yaml
step() { echo "=== $(date +%T) $*"; }
geomean() {
  python3 -c 'import csv, math, sys
r = [float(x["gflops"]) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]]
print(sys.argv[1].rsplit("/", 1)[-1], "geomean %.1f TFLOP/s over %d layers" % (math.exp(sum(map(math.log, r)) / len(r)) / 1e3, len(r)))' "$1"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
step tests
$T/test_gemm --gtest_filter='*Cuda*:TeamScratch*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1
echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"
$T/test_store --gtest_filter='*Cuda*:TunedConfigs*:OperandLayout*' --gtest_brief=1 > "$R/test_store.log" 2>&1
echo "test_store rc=$? $(tail -1 "$R/test_store.log")"
$X/kgemm-run --space cuda --batch 128 --list-shapes > "$R/shapes.csv"
"$PWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer > /dev/null 2>&1
for d in fp32 fp16; do
  step "$d defaults"
  KGEMM_CONFIG_FILE=$R/none.yaml $X/kgemm-run --space cuda --batch 128 --dtype $d --format csv > "$R/default-$d.csv" 2> "$R/default-$d.err"
  geomean "$R/default-$d.csv"
  step "$d autotune"
  $X/autotune --space cuda --shapes resnet50 --batch 128 --dtype $d --budget 30 --out "$S" > "$R/autotune-$d.log" 2> "$R/autotune-$d.err"
  echo "autotune rc=$? $(grep -h 'geometric' "$R/autotune-$d.log" | tr '\n' ' ')"
  KGEMM_CONFIG_FILE=$S $X/kgemm-run --space cuda --batch 128 --dtype $d --format csv > "$R/tuned-$d.csv" 2> "$R/tuned-$d.err"
  geomean "$R/tuned-$d.csv"
  /tmp/cublas_peer --shapes "$R/shapes.csv" --dtype $d --kgemm-inputs --out "$R/cublas-$d.json" > "$R/cublas-$d.log" 2>&1
  grep -h "geometric" "$R/cublas-$d.log"
done
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
