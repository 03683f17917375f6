#!/usr/bin/env bash
# s25 (issue 41): the tree after the tools' CLI11 port, the report rewrite and the kernel family
# enum, on the H100 in one call: its CUDA suites, then kgemm-run of this tree (.device/new) and of
# the s24 build (.device/h200: kgemm-run and autotune built before these changes) on ResNet-50
# batch 1 and 128, fp32 and fp16, the committed store, alternating, two rounds. NEW and OLD name
# other packs (s26: the split-K sum moved out of SlabPipeline, against the build before it).
set -u
N=$PWD/${NEW:-.device/new}; O=$PWD/${OLD:-.device/h200}; R=$OUT/r; mkdir -p "$R"
"$N/unpack.sh" > /dev/null; "$O/unpack.sh" > /dev/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
geomean() {
  python3 -c 'import csv, math, sys
r = [float(x["gflops"]) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]]
print("%.1f TFLOP/s geomean over %d layers" % (math.exp(sum(map(math.log, r)) / len(r)) / 1e3, len(r)) if r else "no layers")' "$1"
}
export LD_LIBRARY_PATH=$N/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 240 $N/tests/test_gemm --gtest_filter='*Cuda*:TeamScratch*' --gtest_brief=1 > "$R/test_gemm.log" 2>&1; echo "test_gemm rc=$? $(tail -1 "$R/test_gemm.log")"
timeout 60 $N/tests/test_api --gtest_brief=1 > "$R/test_api.log" 2>&1; echo "test_api rc=$? $(tail -1 "$R/test_api.log")"
timeout 120 $N/tests/test_tuner --gtest_brief=1 > "$R/test_tuner.log" 2>&1; echo "test_tuner rc=$? $(tail -1 "$R/test_tuner.log")"
timeout 120 $N/tests/test_store --gtest_filter='*Cuda*:*Dispatch*:*Committed*:*Fallback*' --gtest_brief=1 > "$R/test_store.log" 2>&1; echo "test_store rc=$? $(tail -1 "$R/test_store.log")"
grep -h "FAILED  \]" "$R"/test_*.log | head
for round in 1 2; do
  for dtype in fp32 fp16; do
    for batch in 1 128; do
      for side in old new; do
        bin=$N/tools/kgemm-run; [ $side = old ] && bin=$O/tools/kgemm-run
        timeout 90 $bin --space cuda --batch $batch --dtype $dtype --format csv > "$R/$side-$dtype-b$batch-r$round.csv" 2> "$R/run.err"
        echo "rc=$? round $round $dtype b$batch $side: $(geomean "$R/$side-$dtype-b$batch-r$round.csv")"
      done
    done
  done
done
$N/tools/kgemm-run --space cuda --shape 256x128x64 --reps 1 --format json | head -c 300; echo
cd "$OUT" && tar czf results.tgz r && rm -rf r
