#!/usr/bin/env bash
# s26 (issue 40): one GPU's committed store brought to this tree's kernels (the warp-specialized
# kernel persistent, its results by bulk stores), in one device call: fp16 batch 128 re-tuned
# from the committed store (budget $BUDGET, default 60), then every entry verified and those
# measured before their kernels changed re-timed (`autotune --verify-store`); kgemm-run with the
# committed and the new store, ResNet-50 fp16 and fp32 at batch 128 and 1; cuBLAS on the same
# inputs. STORE: the committed store (a path in the checkout); PACK: this tree's build
# (test_gemm kgemm-run autotune), packed by /work/gpu/pack.sh. Everything under $OUT/r, tarred
# into $OUT/results.tgz.
set -u
D=$PWD/${PACK:-.device/p26}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; T=$D/tests; COMMITTED=$PWD/$STORE
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > "$R/cublas-build.log" 2>&1 &
build=$!

step tests
timeout 240 $T/test_gemm --gtest_filter='*Cuda*Warp*:*Cuda*TeamScratch*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1
echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"

cp "$COMMITTED" "$R/store.yaml"
step "fp16 batch 128: autotune (budget ${BUDGET:-60}) from the committed store"
timeout 300 $X/autotune --space cuda --shapes resnet50 --batch 128 --dtype fp16 --budget "${BUDGET:-60}" --out "$R/store.yaml" \
    > "$R/autotune-fp16-b128.log" 2>&1
echo "autotune rc=$? $(grep -h 'geometric' "$R/autotune-fp16-b128.log")"
verify_store "$X" "$R/store.yaml" "$R"

store_runs "$X" "$COMMITTED" "$R/store.yaml" "$R"
wait $build
cublas_runs "$R"
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
