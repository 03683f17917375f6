#!/usr/bin/env bash
# s22: the H200's store gains batch-1 entries: autotune ResNet-50 batch 1, fp32 and fp16 (budget 30,
# seeded from its store and the model), then kgemm-run at batch 1 with the store before and after,
# two alternating rounds.
set -u
D=$PWD/.device/h100; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; S=$PWD/configs/cuda-nvidia-h200.yaml
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
geomeans() {
  python3 -c 'import csv, math, sys
g = {}
for x in csv.DictReader(open(sys.argv[1])):
    if x["row"] == "layer" and x["gflops"]: g.setdefault((x["dtype"], x["batch"]), []).append(float(x["gflops"]))
print(" ".join("%s b%s %.2f" % (d, b, math.exp(sum(map(math.log, v)) / len(v)) / 1e3) for (d, b), v in sorted(g.items())))' "$1"
}
cp "$S" "$R/tuned.yaml"
timeout 300 $X/autotune --space cuda --shapes resnet50 --batch 1 --dtype fp32,fp16 --budget 30 --out "$R/tuned.yaml" > "$R/autotune.log" 2> "$R/autotune.err"
echo "autotune rc=$? $(grep -h 'geometric\|wall time' "$R/autotune.log")"
for round in 1 2; do
  KGEMM_CONFIG_FILE=$S $X/kgemm-run --space cuda --batch 1 --dtype fp32,fp16 --format csv > "$R/before-$round.csv" 2> /dev/null
  echo "round $round before: $(geomeans "$R/before-$round.csv")"
  KGEMM_CONFIG_FILE=$R/tuned.yaml $X/kgemm-run --space cuda --batch 1 --dtype fp32,fp16 --format csv > "$R/after-$round.csv" 2> /dev/null
  echo "round $round after:  $(geomeans "$R/after-$round.csv")"
done
cd "$OUT" && tar czf results.tgz r && rm -rf r
