#!/usr/bin/env bash
# s22 call 1: the warp-specialized fp16 kernel (_ws). The CUDA tests with the team scratch lift
# on and off; fixed _ws configs on the 19 batch-128 ResNet-50 layers a _ws config can take (conv1's
# K = 147 rows are not 16-byte runs) beside the committed store; fp16 autotune from the committed
# store (budget $1, default 30); kgemm-run with it; cuBLAS on the same inputs. PROBES=0 leaves out
# the probes and the study, NCU=1 adds ncu of one _ws launch and the study's, KGEMM_STORE names
# the store to start from (default the H100's).
set -u
budget=${1:-30}
D=$PWD/.device/h100; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$D/tests; X=$D/tools; STORE=$PWD/configs/cuda-nvidia-h100-80gb-hbm3.yaml
[ -n "${KGEMM_STORE:-}" ] && STORE=$PWD/$KGEMM_STORE
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"

step tests
timeout 300 $T/test_gemm --gtest_filter='*Cuda*:TeamScratch*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1
echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"; grep -h '^\[team scratch\]\|FAILED  \]\|Failure' "$R/test_gemm.log" | sort | uniq -c | head -20
KGEMM_TEAM_SCRATCH_LIFT=off timeout 200 $T/test_gemm --gtest_filter='*Cuda*TeamScratch*:*Cuda*Warpgroup*' --gtest_brief=1 > "$R/test_gemm_off.log" 2>&1
echo "test_gemm lift off rc=$? $(tail -1 "$R/test_gemm_off.log")"; grep -h '^\[team scratch\]\|^\[skipped\]' "$R/test_gemm_off.log" | sort -u | head
if [ -x .device/nolift/unpack.sh ]; then  # the build with -DKGEMM_LIFT_TEAM_SCRATCH=OFF
  .device/nolift/unpack.sh > /dev/null
  LD_LIBRARY_PATH=$PWD/.device/nolift/lib timeout 300 .device/nolift/tests/test_gemm --gtest_filter='*Cuda*:TeamScratch*' \
      --gtest_brief=1 > "$R/test_gemm_nolift_build.log" 2>&1
  echo "test_gemm (build without the lift) rc=$? $(tail -1 "$R/test_gemm_nolift_build.log")"
  grep -h '^\[team scratch\]' "$R/test_gemm_nolift_build.log" | sort -u
fi
timeout 100 $T/test_api --gtest_brief=1 > "$R/test_api.log" 2>&1
echo "test_api rc=$? $(tail -1 "$R/test_api.log")"

$X/kgemm-run --space cuda --batch 128 --list-shapes > "$R/shapes.csv"
shapes=$(python3 -c 'import csv, sys
print(",".join("%sx%sx%s" % (r["m"], r["n"], r["k"]) for r in csv.DictReader(open(sys.argv[1])) if int(r["k"]) % 8 == 0))' "$R/shapes.csv")
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > /dev/null 2>&1 &
build=$!
if [ "${PROBES:-1}" = 1 ]; then
step "fp16 probes (19 layers)"
KGEMM_CONFIG_FILE=$STORE $X/kgemm-run --space cuda --shape "$shapes" --dtype fp16 --format csv > "$R/probe-committed.csv" 2> "$R/probe-committed.err"
echo "committed store: $(geomean "$R/probe-committed.csv")"
for c in mb128_nb128_kb64_tm64_tn128_team384_st4_ws mb128_nb128_kb64_tm64_tn128_team384_st3_ws \
         mb64_nb128_kb64_tm64_tn128_team256_st3_ws mb64_nb128_kb64_tm64_tn128_team256_st4_ws \
         mb128_nb64_kb64_tm64_tn64_team384_st4_ws mb128_nb128_kb64_tm64_tn64_team640_st4_ws \
         mb64_nb64_kb64_tm64_tn64_team256_st4_ws; do
  timeout 60 $X/kgemm-run --space cuda --shape "$shapes" --dtype fp16 --config $c --format csv > "$R/probe-$c.csv" 2> "$R/probe-$c.err"
  echo "rc=$? $c $(geomean "$R/probe-$c.csv") $(head -c 300 "$R/probe-$c.err")"
done
if [ -x .device/study/warp_specialized_wgmma ]; then  # s18's study in the same call (benchmarks/ceilings)
  step "s18 study"
  timeout 120 .device/study/warp_specialized_wgmma > "$R/study.txt" 2>&1; echo "study rc=$?"
  grep "A in shared" "$R/study.txt" | grep -v "kb 32"
fi
fi
wait $build
[ "${PROBES:-1}" = 1 ] && python3 - "$R" > "$R/probes.txt" <<'PY'
import csv, glob, os, sys
os.chdir(sys.argv[1])
files = {'committed': 'probe-committed.csv'}
for f in sorted(glob.glob('probe-mb*.csv')): files[f[6:-4]] = f
rows = {}
for k, f in files.items():
    for x in csv.DictReader(open(f)):
        if x['row'] == 'layer' and x['gflops']: rows.setdefault('%sx%sx%s' % (x['m'], x['n'], x['k']), {})[k] = float(x['gflops']) / 1e3
print('# TFLOP/s per layer (kgemm-run --shape ... --config C, fp16); columns:')
for i, k in enumerate(files): print('# %d %s' % (i, k))
for key, v in rows.items(): print('%-18s' % key, ' '.join('%6.1f' % v.get(k, 0) for k in files))
PY
rm -f "$R"/probe-*.csv
step "fp16 committed store (20 layers)"
KGEMM_CONFIG_FILE=$STORE $X/kgemm-run --space cuda --batch 128 --dtype fp16 --format csv > "$R/committed-fp16.csv" 2> "$R/committed-fp16.err"
geomean "$R/committed-fp16.csv"
cp "$STORE" "$R/tuned-fp16.yaml"
step "fp16 autotune (budget $budget, from the committed store)"
timeout 400 $X/autotune --space cuda --shapes resnet50 --batch 128 --dtype fp16 --budget "$budget" --out "$R/tuned-fp16.yaml" \
    > "$R/autotune-fp16.log" 2> "$R/autotune-fp16.err"
echo "autotune rc=$? $(grep -h 'team scratch\|geometric' "$R/autotune-fp16.log")"
KGEMM_CONFIG_FILE=$R/tuned-fp16.yaml $X/kgemm-run --space cuda --batch 128 --dtype fp16 --format csv > "$R/tuned-fp16.csv" 2> "$R/tuned-fp16.err"
geomean "$R/tuned-fp16.csv"
step "fp16 cuBLAS"
/tmp/cublas_peer --shapes "$R/shapes.csv" --dtype fp16 --kgemm-inputs --out "$R/cublas-fp16.json" > "$R/cublas-fp16.log" 2>&1
grep -h "geometric" "$R/cublas-fp16.log"
if [ -n "${NCU:-}" ] && command -v ncu > /dev/null; then  # one 128 x 128 x 64 _ws launch beside the study's, on 6272x512x4608
  step ncu
  S="--section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section Occupancy"
  timeout 120 ncu $S --kernel-name-base demangled -k regex:WarpSpecializedGemm -c 1 $X/kgemm-run --space cuda --shape 6272x512x4608 --dtype fp16 \
      --config mb128_nb128_kb64_tm64_tn128_team384_st4_ws --reps 1 > "$R/ncu-ws.txt" 2>&1; echo "ncu ws rc=$?"
  timeout 120 ncu $S --kernel-name-base demangled -k "regex:warp_specialized_gemm<\(int\)64, \(int\)4, \(int\)1, \(int\)2, \(bool\)1>" -c 1 .device/study/warp_specialized_wgmma > "$R/ncu-study.txt" 2>&1
  echo "ncu study rc=$?"
fi
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
