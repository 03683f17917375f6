#!/usr/bin/env bash
# s33: the default search judged live on problems in no cache (issue 45), two H200s
# (nvidia-h200-x2), from the repository root on the GPU machine with PACK a bundle of autotune
# (/work/gpu/pack.sh). ResNet-50 at 320 x 320, batch 2, fp32 and fp16 (40 problems):
#   1. every candidate measured, half the problems on each GPU (an empty store each) -> exhaustive.tsv
#   2. `autotune --budget 8` (GPU 0) and `--budget 20` (GPU 1), each from a copy of the committed
#      H200 store -> climb-8.yaml, climb-20.yaml (their measurements: climb-*.tsv)
#   3. `autotune retime --store climb-B.yaml` on a copy of exhaustive.tsv each (GPU 0: 8, GPU 1: 20):
#      the 16 fastest of every problem and the climb's choice re-timed in the same 5 rounds
#      -> retime-8.log, retime-20.log (and the caches with those lines, exhaustive-retimed-*.tsv)
# Everything under $OUT/r.
set -u
D=$PWD/${PACK:-.device/s33}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; STORE=$PWD/configs/cuda-nvidia-h200.yaml
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
FRESH="--shapes resnet50 --image 320 --batch 2 --dtype fp32,fp16"
step "every candidate, a shard a GPU"
for gpu in 0 1; do
  CUDA_VISIBLE_DEVICES=$gpu timeout 330 $X/autotune --space cuda $FRESH --strategy exhaustive --budget 1000000 \
    --shard $gpu/2 --out /tmp/exh-$gpu.yaml --cache "$R/exhaustive-$gpu.tsv" > "$R/exhaustive-$gpu.log" 2>&1 &
done
wait
cat "$R/exhaustive-0.tsv" > "$R/exhaustive.tsv"; grep -v '^#device' "$R/exhaustive-1.tsv" >> "$R/exhaustive.tsv"
echo "problems measured: $(grep -c '^#search' "$R/exhaustive.tsv")"; rm "$R"/exhaustive-[01].tsv
step "autotune from a copy of the committed store, budget 8 (GPU 0) and 20 (GPU 1)"
for budget in 8 20; do
  gpu=$([ $budget = 8 ] && echo 0 || echo 1)
  cp "$STORE" "$R/climb-$budget.yaml"
  CUDA_VISIBLE_DEVICES=$gpu timeout 120 $X/autotune --space cuda $FRESH --budget $budget --out "$R/climb-$budget.yaml" \
    --cache "$R/climb-$budget.tsv" > "$R/climb-$budget.log" 2>&1 &
done
wait
grep -h "wall time" "$R"/climb-*.log
step "re-timed: the 16 fastest and the climb's choice of each problem, 5 rounds"
for budget in 8 20; do
  gpu=$([ $budget = 8 ] && echo 0 || echo 1)
  cp "$R/exhaustive.tsv" "$R/exhaustive-retimed-$budget.tsv"
  CUDA_VISIBLE_DEVICES=$gpu timeout 200 $X/autotune retime --cache "$R/exhaustive-retimed-$budget.tsv" \
    --store "$R/climb-$budget.yaml" --top 16 --rounds 5 > "$R/retime-$budget.log" 2> "$R/retime-$budget.err" &
done
wait
tail -n 2 "$R"/retime-*.log
step done
