#!/usr/bin/env bash
# s34: the climb stepping beside the fastest config measured (PACK .device/s34) against the climb
# before it (.device/s33c), live on problems in no cache (issue 45), four H200s (nvidia-h200-x4),
# from the repository root on the GPU machine. ResNet-50 at 160 x 160, batch 16, fp32 and fp16:
#   1. every candidate measured, a quarter of the problems on each GPU -> exhaustive.tsv
#   2. `autotune` from copies of the committed H200 store with each pack at budgets 8, 20 and 40,
#      twice, on two GPUs (RUNS) -> climb-NAME.yaml (their measurements: climb-NAME.tsv), and after
#      each, `autotune retime --store climb-NAME.yaml` on the same GPU, on a copy of exhaustive.tsv:
#      the 16 fastest of every problem and the choice re-timed in the same 5 rounds -> retime-NAME.log
#   3. the CUDA build's test_tuner (GPU 0)
# Everything in $OUT/s34-live.tar.xz (r/).
set -u
R=$OUT/r; mkdir -p "$R"
. "$PWD/docs/results/h100/device_lib.sh"
use_pack s34 s33c
STORE=$PWD/configs/cuda-nvidia-h200.yaml
gpu_info "$R"
FRESH="--shapes resnet50 --image 160 --batch 16 --dtype fp32,fp16"
step "every candidate, a shard a GPU"
for gpu in 0 1 2 3; do
  CUDA_VISIBLE_DEVICES=$gpu timeout 300 .device/s34/tools/autotune --space cuda $FRESH --strategy exhaustive --budget 1000000 \
    --shard $gpu/4 --out /tmp/exh-$gpu.yaml --cache "$R/exhaustive-$gpu.tsv" > "$R/exhaustive-$gpu.log" 2>&1 &
done
wait
cat "$R/exhaustive-0.tsv" > "$R/exhaustive.tsv"
for gpu in 1 2 3; do grep -v '^#device' "$R/exhaustive-$gpu.tsv" >> "$R/exhaustive.tsv"; done
echo "problems measured: $(grep -c '^#search' "$R/exhaustive.tsv")"; rm "$R"/exhaustive-[0-3].tsv
# GPU:pack:budget:tag; a GPU's runs one after the other, the GPUs side by side. Each pack at each
# budget twice on two GPUs, since a live search's choice moves with its own noisy readings.
RUNS="0:s34:40:a 0:s34:20:a 0:s33c:8:a 1:s33c:40:a 1:s33c:20:a 1:s34:8:a 2:s33c:40:b 2:s34:20:b 2:s33c:8:b 3:s34:40:b 3:s33c:20:b 3:s34:8:b"
on_gpu() {  # on_gpu GPU: the runs of one GPU, each autotune from a copy of the committed store, then retime --store
  local run gpu pack budget tag name
  for run in $RUNS; do
    IFS=: read -r gpu pack budget tag <<< "$run"; [ "$gpu" = "$1" ] || continue
    name=$pack-$budget-$tag
    cp "$STORE" "$R/climb-$name.yaml"
    CUDA_VISIBLE_DEVICES=$gpu timeout 150 .device/$pack/tools/autotune --space cuda $FRESH --budget $budget \
      --out "$R/climb-$name.yaml" --cache "$R/climb-$name.tsv" > "$R/climb-$name.log" 2>&1
    cp "$R/exhaustive.tsv" "$R/exhaustive-retimed-$name.tsv"
    CUDA_VISIBLE_DEVICES=$gpu timeout 200 .device/s34/tools/autotune retime --cache "$R/exhaustive-retimed-$name.tsv" \
      --store "$R/climb-$name.yaml" --top 16 --rounds 5 > "$R/retime-$name.log" 2> "$R/retime-$name.err"
    echo "$name: $(tail -n 1 "$R/retime-$name.log")"
  done
}
step "autotune from copies of the committed store, then the 16 fastest and its choice re-timed in 5 rounds: $RUNS"
for gpu in 0 1 2 3; do on_gpu $gpu & done
wait
step "test_tuner, the CUDA build"
CUDA_VISIBLE_DEVICES=0 timeout 120 .device/s34/tests/test_tuner --gtest_brief=1 > "$R/test_tuner.log" 2>&1
echo "test_tuner rc=$? $(tail -1 "$R/test_tuner.log")"
mv "$R/exhaustive-retimed-s34-40-a.tsv" "$R/exhaustive-retimed.tsv"  # for replays: GPU 0's leaders re-timed
rm -f "$R"/exhaustive-retimed-*.tsv "$R"/*.lock  # the retime logs hold their tables
tar -C "$OUT" -cJf "$OUT/s34-live.tar.xz" r && rm -rf "$R"
step done
