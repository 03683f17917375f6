#!/usr/bin/env bash
# s29 (issue 40): 192 x 128 blocks of the warp-specialized kernel (three 64 x 128 tiles and the
# producer, team 512), for M that 128-row blocks cut into a last wave leaving SMs idle (M = 6272:
# 98 blocks of 128 x 256 on 132 SMs, 132 of 192 x 128). One device call per step set. PACK: this
# tree's build (test_gemm test_api test_tuner kgemm-run autotune), packed by /work/gpu/pack.sh;
# STORE: the committed store of the GPU (a path in the checkout). Steps (STEPS, default
# "tests probes stores runs cublas"):
#   tests: the CUDA tests;
#   probes: fixed _ws configs on ResNet-50's fp16 GEMMs at batch 128 but conv1, two rounds;
#   stores: the four M = 6272 GEMMs and the two 25088 x 256 ones searched exhaustively into a copy of STORE (--cache), then every entry verified;
#   runs: kgemm-run with STORE and the new store, ResNet-50 fp16 and fp32 at batch 128 and 1;
#   cublas: the cuBLAS peer on the same inputs;
#   fp16: kgemm-run with STORE and the new store and the cuBLAS peer, ResNet-50 fp16 at batch 128 only.
# VERIFY=0 leaves out the stores step's --verify-store.
# Everything under $OUT/r, tarred into $OUT/results.tgz.
set -u
D=$PWD/${PACK:-.device/s29a}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; T=$D/tests; COMMITTED=$PWD/${STORE:-configs/cuda-nvidia-h100-80gb-hbm3.yaml}
STEPS=${STEPS:-tests probes stores runs cublas}
has() { [[ " $STEPS " == *" $1 "* ]]; }
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > "$R/cublas-build.log" 2>&1 &
build=$!
SHAPES=${SHAPES:-6272x512x4608,6272x512x2048,6272x2048x512,6272x2048x1024,25088x256x2304,25088x256x1024}
# ResNet-50's batch-128 GEMMs but conv1 (whose A rows no bulk copy reads: K = 147).
PROBE_SHAPES=401408x64x64,401408x64x576,401408x256x64,401408x64x256,401408x128x256,100352x128x1152,100352x512x128,100352x512x256,100352x128x512,100352x256x512,25088x256x2304,25088x1024x256,25088x1024x512,25088x256x1024,25088x512x1024,6272x512x4608,6272x2048x512,6272x2048x1024,6272x512x2048

has tests && cuda_tests "$T" "$R"
if has probes; then
  step "probes: fixed _ws configs on ResNet-50 batch 128, fp16"
  for round in 1 2; do
    for c in ${PROBE_CONFIGS:-mb128_nb256_kb64_tm64_tn256_team384_st3_ws mb192_nb128_kb64_tm64_tn128_team512_st3_ws \
             mb192_nb128_kb64_tm64_tn128_team512_st2_ws mb192_nb64_kb64_tm64_tn64_team512_st4_ws \
             mb128_nb128_kb64_tm64_tn128_team384_st4_ws}; do
      timeout 60 $X/kgemm-run --space cuda --shape $PROBE_SHAPES --dtype fp16 --config $c --format csv > "$R/probe-$c-r$round.csv" 2> "$R/probe.err"
      echo "r$round $c: $(layer_rates "$R/probe-$c-r$round.csv") $(head -c 300 "$R/probe.err")"
    done
  done
fi
if has stores; then
  cp "$COMMITTED" "$R/store.yaml"
  exhaustive_into "$X" "$SHAPES" "$R/store.yaml" "$R"
  [ "${VERIFY:-1}" = 0 ] || verify_store "$X" "$R/store.yaml" "$R"
fi
if has runs; then
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R"
fi
wait $build
if has fp16; then
  store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R" 128 fp16
  cublas_runs "$R" 128 fp16
fi
if has cublas; then
  cublas_runs "$R"
fi
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
