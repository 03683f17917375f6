#!/usr/bin/env bash
# s22, issue 42: a GPU whose own store is hidden runs from the nearest store of its architecture
# (store fallback). ResNet-50 batch 1 and 128, fp32 and fp16, in two alternating rounds of
# kgemm-run: with the GPU's own store hidden (the other Hopper's store serves), then with it.
# Usage: fallback.sh OWN_STORE_FILE_NAME (e.g. cuda-nvidia-h200.yaml)
set -u
own=$1
D=$PWD/.device/h100; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; S=$D/share/kgemm/configs
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
geomeans() {  # per dtype and batch, TFLOP/s
  python3 -c 'import csv, math, sys
g = {}
for x in csv.DictReader(open(sys.argv[1])):
    if x["row"] == "layer" and x["gflops"]: g.setdefault((x["dtype"], x["batch"]), []).append(float(x["gflops"]))
print(" ".join("%s b%s %.2f" % (d, b, math.exp(sum(map(math.log, v)) / len(v)) / 1e3) for (d, b), v in sorted(g.items())))' "$1"
}
for round in 1 2; do
  mkdir -p /tmp/hidden && mv "$S/$own" /tmp/hidden/
  $X/kgemm-run --space cuda --batch 1,128 --dtype fp32,fp16 --format csv > "$R/fallback-$round.csv" 2> "$R/fallback-$round.err"
  echo "round $round fallback: $(geomeans "$R/fallback-$round.csv")"
  $X/kgemm-run --space cuda --batch 1 --dtype fp32 2>&1 | grep -i "tuned configs\|store" | head -2
  mv "/tmp/hidden/$own" "$S/"
  $X/kgemm-run --space cuda --batch 1,128 --dtype fp32,fp16 --format csv > "$R/own-$round.csv" 2> "$R/own-$round.err"
  echo "round $round own:      $(geomeans "$R/own-$round.csv")"
done
cd "$OUT" && tar czf results.tgz r && rm -rf r
