#!/usr/bin/env bash
# s31: one call for the redesign's GPU check (issue 41: the slab pipeline split into block
# schedule, main loop and epilogue) and the new-hardware rows (issue 42: a GPU served only by
# another GPU's store), on this GPU's committed store.
# PACK: this tree's build (test_gemm test_api test_tuner kgemm-run autotune, /work/gpu/pack.sh);
# BEFORE: kgemm-run of the last build before the split (a bundle of tools/ only, PACK's lib/);
# STORE: the GPU's committed store, OTHER: another GPU's (paths in the checkout). Steps (STEPS):
#   tests: the CUDA tests (PACK's tests/);
#   compare: ROUNDS rounds of kgemm-run, before and after builds, then OTHER alone on the store
#     search path (the out-of-the-box run), ResNet-50 at CMP_BATCHES (default 128 1) and
#     CMP_DTYPES (default fp16 fp32);
#   cublas: the cuBLAS peer on the same shapes (its JSON written through nlohmann-json);
#   cutlass: CUTLASS' 3xTF32 and 1xTF32 GEMMs (benchmarks/cutlass_peer, the fastest of its tiles
#     per shape) on ResNet-50 fp32 at batch 128 and 1, kgemm's inputs (CUTLASS_TAR: CUTLASS'
#     include/ as a tar.xz, fetched and packed on the build machine, never committed);
#   b1fp32: autotune (climb, budget 20) of ResNet-50 fp32 batch 1 into a copy of STORE, then
#     kgemm-run with both stores, twice, alternating: does kgemm-run see what autotune measured?
# Everything under $OUT/r, tarred into $OUT/results.tgz.
set -u
D=$PWD/${PACK:-.device/s31}; B=$PWD/${BEFORE:-.device/s30-run}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
[ -d "$B/tools" ] || xz -dc "$B/bundle.tar.xz" | tar -C "$B" -xf -
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; COMMITTED=$PWD/${STORE:-configs/cuda-nvidia-h200.yaml}
STEPS=${STEPS:-tests compare cublas cutlass b1fp32}
has() { [[ " $STEPS " == *" $1 "* ]]; }
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
JSON_INCLUDE=${JSON_INCLUDE:-$PWD/.device/include}  # nlohmann/ copied from this machine's /usr/include
export JSON_INCLUDE
CUTLASS_TAR=$PWD/${CUTLASS_TAR:-.device/cutlass-include.tar.xz}
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer > "$R/cublas-build.log" 2>&1
 mkdir -p /tmp/cutlass && xz -dc "$CUTLASS_TAR" | tar -C /tmp/cutlass -xf - &&
   CUTLASS_DIR=/tmp/cutlass "$OLDPWD/benchmarks/cutlass_peer/build.sh" /tmp/cutlass_peer > "$R/cutlass-build.log" 2>&1) &
build=$!
has tests && cuda_tests "$D/tests" "$R"
mkdir -p "$R/other" && cp "$PWD/${OTHER:-configs/cuda-nvidia-h100-80gb-hbm3.yaml}" "$R/other/"
run_set() {  # run_set NAME EXE BATCH DTYPE [env...]: one kgemm-run of ResNet-50 into $R/NAME-DTYPE-bBATCH.csv
  local name=$1 exe=$2 batch=$3 dtype=$4; shift 4
  env "$@" timeout 120 "$exe" --space cuda --batch $batch --dtype $dtype --format csv \
      > "$R/$name-$dtype-b$batch.csv" 2> "$R/$name-$dtype-b$batch.err"
  echo "b$batch $dtype $name: $(geomean "$R/$name-$dtype-b$batch.csv")"
}
if has compare; then
  for round in $(seq ${ROUNDS:-2}); do
    step "compare: round $round"
    for batch in ${CMP_BATCHES:-128 1}; do
      [ $round = 1 ] && $X/kgemm-run --space cuda --batch $batch --list-shapes > "$R/shapes-b$batch.csv"
      for dtype in ${CMP_DTYPES:-fp16 fp32}; do
        run_set before$round "$B/tools/kgemm-run" $batch $dtype KGEMM_CONFIG_FILE=$COMMITTED
        run_set after$round "$X/kgemm-run" $batch $dtype KGEMM_CONFIG_FILE=$COMMITTED
        run_set other$round "$X/kgemm-run" $batch $dtype KGEMM_CONFIG_PATH=$R/other
      done
    done
  done
  grep -h -m1 -o 'same architecture[^;]*' "$R"/other1-*.err "$R"/other1-*.csv | head -1
fi
wait $build; echo "peer builds: $(ls /tmp/cublas_peer /tmp/cutlass_peer 2>&1 | tr '\n' ' ')"
if has cublas; then
  step cublas
  cublas_runs "$R"
  python3 -c 'import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p)); print(p.rsplit("/", 1)[-1], len(d["benchmarks"]), "rows,", d["context"]["device"])' "$R"/cublas-*.json
fi
if has cutlass; then
  step "cutlass: 3xTF32 and 1xTF32, fp32 at batch 128 and 1"
  for batch in 128 1; do
    timeout 200 /tmp/cutlass_peer --shapes "$R/shapes-b$batch.csv" --dtype fp32 --kgemm-inputs --out "$R/cutlass-fp32-b$batch.json" \
        > "$R/cutlass-fp32-b$batch.log" 2>&1
    echo "cutlass b$batch rc=$?: $(grep -h 'geometric mean' "$R/cutlass-fp32-b$batch.log" | tr '\n' ' ')"
  done
fi
if has b1fp32; then
  step "b1fp32: autotune budget 20, then both stores twice"
  cp "$COMMITTED" "$R/retuned.yaml"
  timeout 150 $X/autotune --space cuda --batch 1 --dtype fp32 --budget 20 --out "$R/retuned.yaml" > "$R/retune.log" 2>&1
  echo "autotune rc=$? $(tail -1 "$R/retune.log")"
  for round in 1 2; do
    run_set committed-r$round "$X/kgemm-run" 1 fp32 KGEMM_CONFIG_FILE=$COMMITTED
    run_set retuned-r$round "$X/kgemm-run" 1 fp32 KGEMM_CONFIG_FILE=$R/retuned.yaml
  done
fi
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
