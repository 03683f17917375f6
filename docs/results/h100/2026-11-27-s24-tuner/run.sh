#!/usr/bin/env bash
# The tuner's search-quality benchmark on GPUs (docs/tuning.md), two device calls on 4-GPU machines,
# the problems split among the GPUs as the runs go (autotune --claim); .device/h100 packed with
# autotune (/work/gpu/pack.sh or equivalent). From the repository root on the GPU machine:
#   run.sh exhaustive SECONDS  every legal config of each problem measured (autotune --strategy
#       exhaustive, an empty store each) with what a search is given (#device and #search lines):
#       the im2col GEMMs of ResNet-50 and the six ResNet-18/34 shapes ResNet-50 lacks, batch 128
#       and 1, fp32 and fp16 -> /tmp/s24/exhaustive.tsv
#   run.sh confirm SECONDS     on problems outside that cache (ResNet-18 at 512 x 512, ResNet-50 at
#       batch 32, fp32 and fp16): the same exhaustive measurement, then the default strategy (climb,
#       budget 8) from a copy of the device's committed store, as a user re-tuning would; and the
#       searches of the first cache replayed with this build (autotune --replay, no kernel runs)
#       for their #search lines -> /tmp/s24/{exhaustive,climb,replay}.tsv
# Everything under /tmp/s24 is tarred into $OUT/s24.tar.xz (a call returns a few files).
set -uo pipefail
mode=${1:?exhaustive or confirm} limit=${2:-300}
pack=$PWD/.device/h100
"$pack/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=/tmp/s24; mkdir -p "$out/claims-exhaustive" "$out/claims-climb"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
store=$(grep -l "name: $name[,}]" "$pack"/share/kgemm/configs/cuda-*.yaml | head -1)
extras=196x256x1152,196x256x128,49x512x2304,49x512x256,784x128x576,784x128x64
if [ "$mode" = exhaustive ]; then
  sets=("--shapes resnet50 --batch 128" "--shape $extras --batch 128" "--shapes resnet50 --batch 1" "--shape $extras --batch 1")
else
  sets=("--shapes resnet18 --image 512 --batch 1" "--shapes resnet50 --batch 32")
fi
start=$(date +%s)
for gpu in $(seq 0 $((gpus - 1))); do
  (
    export CUDA_VISIBLE_DEVICES=$gpu
    for set in "${sets[@]}"; do
      left=$(( limit - ($(date +%s) - start) ))
      [ "$left" -gt 10 ] || break
      # shellcheck disable=SC2086
      "$pack/bin/autotune" --space cuda --strategy exhaustive --budget 1000000 --reps 5 --claim "$out/claims-exhaustive" \
          --out "$out/exhaustive-store-$gpu.yaml" --cache "$out/exhaustive-$gpu.tsv" $set --dtype fp32,fp16 --time-limit ${left}s
    done > "$out/exhaustive-$gpu.log" 2>&1
    [ "$mode" = confirm ] || exit 0
    [ -n "$store" ] && cp "$store" "$out/climb-store-$gpu.yaml"
    for set in "${sets[@]}"; do
      # shellcheck disable=SC2086
      timeout 120 "$pack/bin/autotune" --space cuda --strategy climb --budget 8 --reps 5 --claim "$out/claims-climb" \
          --out "$out/climb-store-$gpu.yaml" --cache "$out/climb-$gpu.tsv" $set --dtype fp32,fp16
    done > "$out/climb-$gpu.log" 2>&1
  ) &
done
wait
echo "wall $(( $(date +%s) - start )) s"
cat "$out"/exhaustive-[0-9].tsv > "$out/exhaustive.tsv"
if [ "$mode" = confirm ]; then
  cat "$out"/climb-[0-9].tsv > "$out/climb.tsv"
  xz -dkc docs/results/h100/2026-11-27-s24-tuner/exhaustive-h200.tsv.xz > /tmp/h200.tsv
  for what in "--shapes resnet50" "--shape $extras"; do
    # shellcheck disable=SC2086
    timeout 120 "$pack/bin/autotune" --space cuda --strategy climb --budget 8 --replay /tmp/h200.tsv --out "$out/replay-store.yaml" \
        --cache "$out/replay.tsv" $what --batch 1,128 --dtype fp32,fp16 > /dev/null 2>> "$out/replay.log"
  done
fi
grep -c '^#search' "$out"/*.tsv
tar -C /tmp -cJf "${OUT:-/tmp}/s24.tar.xz" s24
