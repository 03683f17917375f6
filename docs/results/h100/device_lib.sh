# Shell functions the device-call scripts under docs/results/h100/ share (sourced, not run).
step() { echo "=== $(date +%T) $*"; }
use_pack() {  # use_pack NAME...: unpack each .device/NAME (pack.sh's bundle), the first one's libraries on LD_LIBRARY_PATH
  local p
  for p in "$@"; do ".device/$p/unpack.sh" > /dev/null; done
  export LD_LIBRARY_PATH=$PWD/.device/$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
geomean() {  # geomean FILE.csv: kgemm-run's per-layer GFLOP/s, as TFLOP/s
  python3 -c 'import csv, math, sys
r = [float(x["gflops"]) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]]
print(sys.argv[1].rsplit("/", 1)[-1], "geomean %.1f TFLOP/s over %d layers" % (math.exp(sum(map(math.log, r)) / len(r)) / 1e3, len(r)) if r else "no layers")' "$1"
}
layer_rates() {  # layer_rates FILE.csv: kgemm-run's layers as "MxNxK TFLOP/s", on one line
  python3 -c 'import csv, sys
print(" ".join("%sx%sx%s %.1f" % (x["m"], x["n"], x["k"], float(x["gflops"]) / 1e3) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]))' "$1"
}
cuda_tests() {  # cuda_tests T DIR: test_gemm's CUDA cases, test_api and test_tuner from T, logs in DIR
  step tests
  timeout 300 "$1"/test_gemm --gtest_filter='*Cuda*' --gtest_brief=1 > "$2/test_gemm.log" 2>&1
  echo "test_gemm rc=$? $(tail -1 "$2/test_gemm.log")"; grep -h 'FAILED  \]\|Failure\|skipped' "$2/test_gemm.log" | sort | uniq -c | head
  timeout 60 "$1"/test_api --gtest_brief=1 > "$2/test_api.log" 2>&1
  echo "test_api rc=$?"; tail -3 "$2/test_api.log"
  timeout 120 "$1"/test_tuner --gtest_brief=1 > "$2/test_tuner.log" 2>&1
  echo "test_tuner rc=$? $(tail -1 "$2/test_tuner.log")"; grep -h 'FAILED  \]' "$2/test_tuner.log" | head
}
gpu_info() {  # gpu_info DIR: the GPU's name, driver and clock, also into DIR/gpu.txt
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$1/gpu.txt"
}
verify_store() {  # verify_store X STORE DIR: autotune --verify-store, its summary on stdout, log in DIR
  step "verify-store: every entry, those measured before their kernels changed re-timed"
  timeout 400 "$1/autotune" --space cuda --verify-store "$2" > "$3/verify-store.log" 2>&1
  echo "verify-store rc=$?"; grep -h "^verify-store" "$3/verify-store.log"; grep -h "FAILED\|dropped" "$3/verify-store.log" | head -20
}
exhaustive_into() {  # exhaustive_into X SHAPES STORE DIR: every fp16 candidate of SHAPES measured into STORE (cache in DIR), a problem at a time
  local shape
  for shape in ${2//,/ }; do
    step "$shape fp16: exhaustive into the store"
    timeout 200 "$1/autotune" --space cuda --shape "$shape" --dtype fp16 --strategy exhaustive --budget 100000 \
      --out "$3" --cache "$4/exhaustive.tsv" >> "$4/exhaustive.log" 2>&1
    echo "autotune rc=$?"; grep -A2 "^layer" "$4/exhaustive.log" | tail -2
  done
}
store_runs() {  # store_runs X COMMITTED NEW DIR [BATCHES [DTYPES]]: kgemm-run with both stores, ResNet-50 (default b128 and b1, fp16 and fp32)
  local batch dtype side store
  for batch in ${5:-128 1}; do
    "$1/kgemm-run" --space cuda --batch $batch --list-shapes > "$4/shapes-b$batch.csv"
    for dtype in ${6:-fp16 fp32}; do
      for side in committed new; do
        store=$2; [ $side = new ] && store=$3
        KGEMM_CONFIG_FILE=$store timeout 120 "$1/kgemm-run" --space cuda --batch $batch --dtype $dtype --format csv \
            > "$4/$side-$dtype-b$batch.csv" 2> "$4/$side-$dtype-b$batch.err"
        echo "b$batch $dtype $side: $(geomean "$4/$side-$dtype-b$batch.csv")"
      done
    done
  done
}
cublas_runs() {  # cublas_runs DIR [BATCHES [DTYPES]]: the cuBLAS peer (/tmp/cublas_peer) on DIR/shapes-b<batch>.csv (default b128 and b1, fp16 and fp32)
  local batch dtype
  for batch in ${2:-128 1}; do
    for dtype in ${3:-fp16 fp32}; do
      timeout 150 /tmp/cublas_peer --shapes "$1/shapes-b$batch.csv" --dtype $dtype --kgemm-inputs --out "$1/cublas-$dtype-b$batch.json" \
          > "$1/cublas-$dtype-b$batch.log" 2>&1
      echo "cublas b$batch $dtype rc=$?: $(grep -h 'geometric mean cublas' "$1/cublas-$dtype-b$batch.log" | tr '\n' ' ')"
    done
  done
}
