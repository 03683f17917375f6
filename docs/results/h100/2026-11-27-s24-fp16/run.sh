#!/usr/bin/env bash
# s24 (issue 40): the warp-specialized fp16 kernel (_ws) with a bulk tensor copy (TMA) producer,
# in one device call; s25 ran it on the H200 with its store (STORE, default the H100's) and pack
# (PACK, default .device/fp16). PACK holds this tree's build (test_gemm test_api kgemm-run
# autotune) and, where a call compares builds, PACK/base another build's kgemm-run (both
# packed by /work/gpu/pack.sh), beside a copy of this script.
# Steps (STEPS, default "tests probes cublas"): tests: the CUDA tests with the team scratch lift
# on, and off at run time; probes: fixed _ws configs (PROBE_CONFIGS) on the 19 batch-128
# ResNet-50 layers with K % 8 = 0, both builds (or this one alone), alternating, ROUNDS rounds
# (default 2), and the committed store; BASE_ENV: the base side is this build with those
# environment variables (s26: the persistent grid off);
# tune: fp16 batch 128 autotune (budget $BUDGET, default 30) from the committed store, kgemm-run
# with it; cublas: the cuBLAS peer on the same inputs (20 layers). Everything under $OUT/r,
# tarred into $OUT/results.tgz.
set -u
D=$PWD/${PACK:-.device/fp16}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
sides=tma; [ -x "$D/base/unpack.sh" ] && "$D/base/unpack.sh" > /dev/null && sides="base tma"
# BASE_ENV (e.g. "NAME=1"): the base side is this build run with those variables set
base_env=(); [ -n "${BASE_ENV:-}" ] && { sides="base tma"; read -r -a base_env <<< "env $BASE_ENV"; }
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=$D/tests; X=$D/tools; B=$D/base/tools; STORE=$PWD/${STORE:-configs/cuda-nvidia-h100-80gb-hbm3.yaml}
STEPS=${STEPS:-tests probes cublas}
has() { [[ " $STEPS " == *" $1 "* ]]; }
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
(cd "$R" && "$OLDPWD/benchmarks/cublas_peer/build.sh" /tmp/cublas_peer) > "$R/cublas-build.log" 2>&1 &
build=$!

if has tests; then
  step tests
  timeout 240 $T/test_gemm --gtest_filter='*Cuda*:TeamScratch*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1
  echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"; grep -h '^\[team scratch\]\|FAILED  \]\|Failure' "$R/test_gemm.log" | sort | uniq -c | head -20
  KGEMM_TEAM_SCRATCH_LIFT=off timeout 120 $T/test_gemm --gtest_filter='*Cuda*TeamScratch*:*Cuda*Warp*' --gtest_brief=1 > "$R/test_gemm_off.log" 2>&1
  echo "test_gemm lift off rc=$? $(tail -1 "$R/test_gemm_off.log")"; grep -h '^\[team scratch\]\|FAILED  \]' "$R/test_gemm_off.log" | sort -u | head
  timeout 60 $T/test_api --gtest_brief=1 > "$R/test_api.log" 2>&1
  echo "test_api rc=$? $(tail -1 "$R/test_api.log")"
fi

$X/kgemm-run --space cuda --batch 128 --list-shapes > "$R/shapes.csv"
shapes=$(python3 -c 'import csv, sys
print(",".join("%sx%sx%s" % (r["m"], r["n"], r["k"]) for r in csv.DictReader(open(sys.argv[1])) if int(r["k"]) % 8 == 0))' "$R/shapes.csv")
if has probes; then
  step "fp16 probes (19 layers): $sides, alternating"
  for round in $(seq "${ROUNDS:-2}"); do
    KGEMM_CONFIG_FILE=$STORE timeout 60 $X/kgemm-run --space cuda --shape "$shapes" --dtype fp16 --format csv > "$R/probe-store-r$round.csv" 2> /dev/null
    echo "round $round committed store (tma build): $(geomean "$R/probe-store-r$round.csv")"
    for c in ${PROBE_CONFIGS:-mb128_nb128_kb64_tm64_tn128_team384_st4_ws mb128_nb128_kb64_tm64_tn128_team384_st3_ws \
             mb64_nb128_kb64_tm64_tn128_team256_st4_ws mb64_nb128_kb64_tm64_tn128_team256_st3_ws \
             mb128_nb64_kb64_tm64_tn64_team384_st4_ws}; do
      for side in $sides; do
        bin=$X; run=(); [ $side = base ] && { [ ${#base_env[@]} -gt 0 ] && run=("${base_env[@]}") || bin=$B; }
        timeout 60 "${run[@]}" $bin/kgemm-run --space cuda --shape "$shapes" --dtype fp16 --config $c --format csv > "$R/probe-$side-$c-r$round.csv" 2> "$R/probe.err"
        echo "rc=$? $side $c $(geomean "$R/probe-$side-$c-r$round.csv") $(head -c 200 "$R/probe.err")"
      done
    done
  done
  python3 - "$R" > "$R/probes.txt" <<'PY'
import csv, glob, os, sys
os.chdir(sys.argv[1])
last = max(int(f.rsplit('-r', 1)[1][:-4]) for f in glob.glob('probe-*-r*.csv'))
files = sorted(glob.glob('probe-*-r%d.csv' % last))
rows = {}
for f in files:
    for x in csv.DictReader(open(f)):
        if x['row'] == 'layer' and x['gflops']: rows.setdefault('%sx%sx%s' % (x['m'], x['n'], x['k']), {})[f] = float(x['gflops']) / 1e3
print('# TFLOP/s per layer, round %d (kgemm-run --shape ... --config C, fp16); columns:' % last)
for i, f in enumerate(files): print('# %d %s' % (i, f[6:-4 - len(str(last)) - 2]))
for key, v in rows.items(): print('%-18s' % key, ' '.join('%6.1f' % v.get(f, 0) for f in files))
PY
  cat "$R/probes.txt"
fi
if has tune; then
  step "fp16 committed store (20 layers)"
  KGEMM_CONFIG_FILE=$STORE $X/kgemm-run --space cuda --batch 128 --dtype fp16 --format csv > "$R/committed-fp16.csv" 2> "$R/committed-fp16.err"
  geomean "$R/committed-fp16.csv"
  cp "$STORE" "$R/tuned-fp16.yaml"
  step "fp16 autotune (budget ${BUDGET:-30}, from the committed store)"
  timeout 300 $X/autotune --space cuda --shapes resnet50 --batch 128 --dtype fp16 --budget "${BUDGET:-30}" --out "$R/tuned-fp16.yaml" \
      > "$R/autotune-fp16.log" 2> "$R/autotune-fp16.err"
  echo "autotune rc=$? $(grep -h 'team scratch\|geometric' "$R/autotune-fp16.log")"
  KGEMM_CONFIG_FILE=$R/tuned-fp16.yaml $X/kgemm-run --space cuda --batch 128 --dtype fp16 --format csv > "$R/tuned-fp16.csv" 2> "$R/tuned-fp16.err"
  geomean "$R/tuned-fp16.csv"
  if [ ${#base_env[@]} -gt 0 ]; then
    KGEMM_CONFIG_FILE=$R/tuned-fp16.yaml "${base_env[@]}" $X/kgemm-run --space cuda --batch 128 --dtype fp16 --format csv > "$R/tuned-fp16-base.csv" 2>&1
    echo "base ($BASE_ENV): $(geomean "$R/tuned-fp16-base.csv")"
  fi
fi
wait $build
if has cublas; then
  step "fp16 cuBLAS (20 layers)"
  timeout 120 /tmp/cublas_peer --shapes "$R/shapes.csv" --dtype fp16 --kgemm-inputs --out "$R/cublas-fp16.json" > "$R/cublas-fp16.log" 2>&1
  echo "cublas rc=$?"; grep -h "geometric" "$R/cublas-fp16.log"
fi
step done
cd "$OUT" && tar czf results.tgz r && rm -rf r
