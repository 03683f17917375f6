#!/usr/bin/env bash
# s28 (issue 40): conv1's fp16 rows (K = 147: 294 bytes, not 16-byte aligned) staged as realigned
# 16-byte runs (SpaceTraits<Cuda>::copy_realigned_runs_to_scratch) instead of 2-byte element
# copies, and one GPU's committed store brought to kernel generation 4 (the tensor-core family
# changed), in one device call per step set. PACK: this tree's build (test_gemm test_api
# kgemm-run autotune), packed by /work/gpu/pack.sh; STORE: the committed store (a path in the
# checkout). Steps (STEPS, default "tests stores runs cublas"):
#   tests: the CUDA tests;
#   probes: fixed tensor-core configs on the two conv1 GEMMs (batch 128 and 1), this build and
#     BASE's (the build before the change), alternating, two rounds;
#   stores: conv1's two fp16 GEMMs searched exhaustively into a copy of STORE (--cache), then
#     every entry verified and those measured before their kernels changed re-timed
#     (`autotune --verify-store`);
#   runs: kgemm-run with STORE and the new store, ResNet-50 fp16 and fp32 at batch 128 and 1;
#   cublas: the cuBLAS peer on the same inputs;
#   builds: kgemm-run of BASE's build and this one alternating, the committed store, ResNet-50
#     fp16 and fp32 at batch 128 and 1 (a change that should keep every rate);
#   search: problems in no committed cache (ResNet-18 at 320 x 320, batch 1, fp32 and fp16)
#     searched exhaustively (--cache, for kgemm-compare-strategies) and by the default climb at
#     budget 8 from a copy of STORE.
# Call 1 (H100): STEPS="tests probes cublas" BASE=<the previous build>; calls 2-3 (H100, H200):
# the default; call 6 (H100): STEPS="tests builds search" BASE=<call 2's build>. Everything under $OUT/r, tarred into $OUT/results.tgz.
set -u
D=$PWD/${PACK:-.device/s28b}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; T=$D/tests; COMMITTED=$PWD/${STORE:-configs/cuda-nvidia-h100-80gb-hbm3.yaml}
STEPS=${STEPS:-tests stores runs cublas}
has() { [[ " $STEPS " == *" $1 "* ]]; }
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > "$R/cublas-build.log" 2>&1 &
build=$!
SHAPES=1605632x64x147,12544x64x147

if has tests; then
  step tests
  timeout 300 $T/test_gemm --gtest_filter='*Cuda*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1
  echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"; grep -h 'FAILED  \]\|Failure' "$R/test_gemm.log" | sort | uniq -c | head
  timeout 60 $T/test_api --gtest_brief=1 > "$R/test_api.log" 2>&1
  echo "test_api rc=$?"; tail -5 "$R/test_api.log"
  if [ -x $T/test_tuner ]; then
    timeout 120 $T/test_tuner --gtest_brief=1 > "$R/test_tuner.log" 2>&1
    echo "test_tuner rc=$? $(tail -1 "$R/test_tuner.log")"; grep -h 'FAILED  \]' "$R/test_tuner.log" | head
  fi
fi
if has builds; then
  B=$PWD/$BASE; "$B/unpack.sh" > /dev/null
  step "the committed store on BASE's build and this one, alternating"
  for batch in 128 1; do
    for dtype in fp16 fp32; do
      for side in base new; do
        bin=$X; [ $side = base ] && bin=$B/tools
        KGEMM_CONFIG_FILE=$COMMITTED timeout 120 $bin/kgemm-run --space cuda --batch $batch --dtype $dtype --format csv \
            > "$R/build-$side-$dtype-b$batch.csv" 2> /dev/null
        echo "b$batch $dtype $side: $(geomean "$R/build-$side-$dtype-b$batch.csv")"
      done
    done
  done
fi
if has search; then
  step "ResNet-18 320 x 320 batch 1: exhaustive, then the default climb (budget 8) from the store"
  timeout 400 $X/autotune --space cuda --shapes resnet18 --image 320 --batch 1 --dtype fp32,fp16 --strategy exhaustive \
      --budget 100000 --out "$R/exhaustive.yaml" --cache "$R/exhaustive-r18-320.tsv" > "$R/exhaustive-r18-320.log" 2>&1
  echo "exhaustive rc=$? $(tail -2 "$R/exhaustive-r18-320.log" | head -1)"
  cp "$COMMITTED" "$R/climb.yaml"
  timeout 200 $X/autotune --space cuda --shapes resnet18 --image 320 --batch 1 --dtype fp32,fp16 --budget 8 \
      --out "$R/climb.yaml" --cache "$R/climb-r18-320.tsv" > "$R/climb-r18-320.log" 2>&1
  echo "climb rc=$? $(tail -2 "$R/climb-r18-320.log" | head -1)"
fi

if has probes; then
  B=$PWD/$BASE; "$B/unpack.sh" > /dev/null
  step "conv1 probes, fp16: base and new, alternating"
  for round in 1 2; do
    for c in ${PROBE_CONFIGS:-mb32_nb64_kb32_tm32_tn32_team64_tc mb64_nb64_kb32_tm32_tn32_team128_tc \
             mb64_nb64_kb32_tm32_tn32_team128_st4_tc mb128_nb64_kb32_tm64_tn32_team128_tc \
             mb128_nb64_kb32_tm64_tn64_team64_st3_tc mb64_nb64_kb64_tm32_tn32_team128_tc}; do
      for side in base new; do
        bin=$X; [ $side = base ] && bin=$B/tools
        timeout 60 $bin/kgemm-run --space cuda --shape $SHAPES --dtype fp16 --config $c --format csv > "$R/probe-$side-$c-r$round.csv" 2> "$R/probe.err"
        echo "r$round $side $c: $(python3 -c 'import csv,sys
print(" ".join("%sx%sx%s %.1f" % (x["m"], x["n"], x["k"], float(x["gflops"]) / 1e3) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]))' "$R/probe-$side-$c-r$round.csv") $(head -c 200 "$R/probe.err")"
      done
    done
  done
fi
if has stores; then
  cp "$COMMITTED" "$R/store.yaml"
  step "conv1 fp16 (batch 128 and 1): exhaustive into the store"
  timeout 240 $X/autotune --space cuda --shape $SHAPES --dtype fp16 --strategy exhaustive --budget 100000 \
    --out "$R/store.yaml" --cache "$R/exhaustive-conv1.tsv" > "$R/exhaustive-conv1.log" 2>&1
  echo "autotune rc=$?"; grep -A3 "^layer" "$R/exhaustive-conv1.log"
  verify_store "$X" "$R/store.yaml" "$R"
fi
if has runs; then
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R"
fi
wait $build
if has cublas; then
  cublas_runs "$R"
fi
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
