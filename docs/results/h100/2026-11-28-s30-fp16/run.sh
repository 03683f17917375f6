#!/usr/bin/env bash
# s30 (issue 40): every ResNet-50 batch-128 fp16 GEMM searched exhaustively into the GPU's store
# with the kernels of s29 (192 x 128 _ws blocks), then the store beside cuBLAS in the same call.
# PACK: s29's build (test_gemm test_api test_tuner kgemm-run autotune, commit 118206c's kernels),
# packed by /work/gpu/pack.sh; STORE: the committed store of the GPU (a path in the checkout);
# SHAPES: the problems to search (default: the 20 layers). Steps (STEPS, default "stores fp16"):
#   tests: the CUDA tests (PACK's tests/);
#   stores: SHAPES searched exhaustively into a copy of STORE, a problem at a time (every entry
#     verified after the fp16 step, so that the figures come first);
#   fp16: kgemm-run with STORE and the new store and the cuBLAS peer, ResNet-50 fp16 at batch 128;
#   runs: kgemm-run with both stores, ResNet-50 fp16 and fp32 at batch 128 and 1, and the cuBLAS peer;
#   retune: autotune (climb, budget 20, from STORE's own entries) of ResNet-50 fp32 at batch 128
#     and 1 and fp16 at batch 1 into the new store, then both stores and the cuBLAS peer on those
#     rows (fp16 batch 128 left: every layer searched exhaustively);
#   fallback: kgemm-run with only OTHER (another GPU's store, a path in the checkout) on the
#     store search path, as a device without a store of its own runs out of the box, ResNet-50
#     fp16 and fp32 at batch 128 and 1 (compare with the runs step's new store);
#   ncu: Nsight Compute's sections (speed of light, warp states, memory, occupancy) for one kgemm
#     kernel per PROBES entry (SHAPE:CONFIG) and cuBLAS' default kernel on the same shape.
# VERIFY=0 leaves out the stores step's --verify-store.
# Everything under $OUT/r, tarred into $OUT/results.tgz.
set -u
D=$PWD/${PACK:-.device/s29a}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; COMMITTED=$PWD/${STORE:-configs/cuda-nvidia-h100-80gb-hbm3.yaml}
STEPS=${STEPS:-stores fp16}
has() { [[ " $STEPS " == *" $1 "* ]]; }
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
ncu_side_by_side() {  # ncu_side_by_side CSV...: the metrics of each ncu CSV (its first kernel) in columns
  python3 - "$@" <<'PY'
import csv, sys
tables = []
for path in sys.argv[1:]:
    rows = [l for l in open(path, errors="replace") if l.startswith('"')]
    t = {}
    for r in csv.DictReader(rows):
        t.setdefault("kernel", r["Kernel Name"][:60])
        key = "%s / %s [%s]" % (r["Section Name"], r["Metric Name"], r["Metric Unit"])
        t.setdefault(key, r["Metric Value"])
    tables.append(t)
keys = [k for k in tables[0] if any(k in t for t in tables)] if tables else []
for k in keys:
    print("%-90s %s" % (k[:90], " | ".join(t.get(k, "-") for t in tables)))
PY
}
gpu_info "$R"
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > "$R/cublas-build.log" 2>&1 &
build=$!
SHAPES=${SHAPES:-1605632x64x147,401408x64x64,401408x64x576,401408x256x64,401408x64x256,401408x128x256,100352x128x1152,100352x512x128,100352x512x256,100352x128x512,100352x256x512,25088x256x2304,25088x1024x256,25088x1024x512,25088x256x1024,25088x512x1024,6272x512x4608,6272x2048x512,6272x2048x1024,6272x512x2048}
cp "$COMMITTED" "$R/store.yaml"
has tests && cuda_tests "$D/tests" "$R"
has stores && exhaustive_into "$X" "$SHAPES" "$R/store.yaml" "$R"
wait $build
if has fp16; then
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R" 128 fp16
  cublas_runs "$R" 128 fp16
fi
has stores && [ "${VERIFY:-1}" != 0 ] && verify_store "$X" "$R/store.yaml" "$R"
if has runs; then
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R"
  cublas_runs "$R"
fi
if has retune; then
  step "retune: fp32 b128 and b1, fp16 b1, climb budget 20"
  timeout 200 $X/autotune --space cuda --batch 128,1 --dtype fp32 --budget 20 --out "$R/store.yaml" > "$R/retune-fp32.log" 2>&1
  echo "autotune fp32 rc=$? $(tail -1 "$R/retune-fp32.log")"
  timeout 100 $X/autotune --space cuda --batch 1 --dtype fp16 --budget 20 --out "$R/store.yaml" > "$R/retune-fp16.log" 2>&1
  echo "autotune fp16 rc=$? $(tail -1 "$R/retune-fp16.log")"
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R" 128 fp32
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R" 1 "fp16 fp32"
  cublas_runs "$R" 128 fp32
  cublas_runs "$R" 1 "fp16 fp32"
fi
if has fallback; then
  mkdir -p "$R/other" && cp "$PWD/$OTHER" "$R/other/"
  for batch in 128 1; do
    for dtype in fp16 fp32; do
      KGEMM_CONFIG_PATH=$R/other timeout 120 $X/kgemm-run --space cuda --batch $batch --dtype $dtype --format csv \
        > "$R/fallback-$dtype-b$batch.csv" 2> "$R/fallback-$dtype-b$batch.err"
      echo "b$batch $dtype fallback: $(geomean "$R/fallback-$dtype-b$batch.csv") $(grep -m1 -o 'same architecture[^;]*' "$R/fallback-$dtype-b$batch.err" "$R/fallback-$dtype-b$batch.csv" | head -1)"
    done
  done
fi
if has ncu; then
  step "ncu: kgemm and cuBLAS kernels"
  NCU="ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --csv --page details"
  for probe in ${PROBES:-100352x512x256:mb192_nb128_kb64_tm64_tn128_team512_st4_ws}; do
    shape=${probe%%:*} config=${probe#*:}
    timeout 120 $NCU --kernel-name-base demangled -k regex:WarpSpecializedGemm --launch-skip 2 -c 1 \
      $X/kgemm-run --space cuda --shape $shape --dtype fp16 --config $config --reps 2 > "$R/ncu-kgemm-$shape.csv" 2> "$R/ncu-kgemm-$shape.err"
    echo "kgemm $shape $config rc=$?"
    printf 'set,layer,m,n,k\nprobe,%s,%s,%s,%s\n' $shape ${shape//x/ } | tr ' ' ',' > "$R/probe-$shape.csv"
    timeout 120 $NCU -k regex:'nvjet|sm90|xmma|cutlass' --launch-skip 2 -c 1 \
      /tmp/cublas_peer --shapes "$R/probe-$shape.csv" --dtype fp16 --impls cublas --reps 2 --warmup 1 > "$R/ncu-cublas-$shape.csv" 2> "$R/ncu-cublas-$shape.err"
    echo "cublas $shape rc=$?"
    ncu_side_by_side "$R/ncu-kgemm-$shape.csv" "$R/ncu-cublas-$shape.csv"
  done
fi
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
