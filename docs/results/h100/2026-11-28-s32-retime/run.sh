#!/usr/bin/env bash
# s32: the tuner's search quality with today's kernels (issue 45), on two H200s (nvidia-h200-x2).
# From the repository root on the GPU machine, PACK a bundle of autotune (/work/gpu/pack.sh):
#   run.sh stale      call 1, GPU 0: `autotune retime` of the committed s24 cache
#                     (`git show e66a947:docs/results/h100/2026-11-27-s24-tuner/exhaustive-h200.tsv.xz`,
#                     saved as h200-s24.tsv.xz in the checkout, or STALE=FILE): its 16 fastest configs a problem in 5
#                     rounds, with today's kernels (what showed the cache stale);
#                     GPU 1, problems in no cache (ResNet-34 at 288 x 288, batch 8, fp32 and fp16:
#                     22 problems): every candidate measured from a copy of the committed H200 store
#                     (each #search line records the starts a live search from that store gets),
#                     that cache re-timed, then `autotune --budget 8` (the default strategy) from
#                     another copy of the store -> fresh.tsv, climb.tsv, climb-store.yaml
#   run.sh exhaustive I J   calls 2 and 3: shards I/4 and J/4 (GPU 0 and 1) of the s24 problem set
#                     (ResNet-50's im2col GEMMs and the six ResNet-18/34 shapes it lacks, batch 128
#                     and 1, fp32 and fp16) measured exhaustively (5 reps, an empty store each), then
#                     re-timed (16 a problem, 5 rounds) -> exhaustive-I.tsv, exhaustive-J.tsv
#   run.sh live       calls 4 - 6 (one H200), this session's seeds (call 6: and autotune re-timing
#                     its three fastest configs before it keeps one; LIVE_RUNS="store-8 store-20
#                     store-20-1 seeds-8", the -1 one with --confirm 1): the CUDA tuner tests; the
#                     held-out problems measured exhaustively again and re-timed (call 5 only:
#                     call 4 read its choices' rates from call 1's cache, another machine, whose
#                     small kernels ran 20 - 30 % apart from call 4's) -> live-exhaustive.tsv; then
#                     `autotune` at budget 8 and 20 from a copy of the committed store and at
#                     budget 8 from an empty one (seeds alone), two rounds -> live-*.tsv
# Everything under $OUT/r, tarred into $OUT/results.tgz.
set -u
mode=${1:?stale, exhaustive or live}
D=$PWD/${PACK:-.device/s32}; R=$OUT/r; mkdir -p "$R"
"$D/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
X=$D/tools; STORE=$PWD/configs/cuda-nvidia-h200.yaml
. "$PWD/docs/results/h100/device_lib.sh"  # run from the checkout's root
gpu_info "$R"
retime() {  # retime CACHE LOG [SECONDS]
  timeout ${3:-120} $X/autotune retime --cache "$1" --top 16 --rounds 5 > "$2" 2> "${2%.log}.err"
  echo "retime $(basename "$1") rc=$?"; tail -1 "$2"
}
FRESH="--shapes resnet34 --image 288 --batch 8 --dtype fp32,fp16"
if [ "$mode" = live ]; then
  step "tests"
  timeout 200 "$D/tests/test_tuner" --gtest_brief=1 > "$R/test_tuner.log" 2>&1
  echo "test_tuner rc=$? $(tail -1 "$R/test_tuner.log")"; grep -h 'FAILED  \]' "$R/test_tuner.log" | head
  step "held-out problems exhaustive, then re-timed"
  cp "$STORE" /tmp/exh.yaml
  timeout 300 $X/autotune --space cuda $FRESH --strategy exhaustive --budget 1000000 \
    --out /tmp/exh.yaml --cache "$R/live-exhaustive.tsv" > "$R/live-exhaustive.log" 2>&1
  echo "exhaustive rc=$?"; retime "$R/live-exhaustive.tsv" "$R/retime-live.log" 100
  for round in 1 2; do
    for run in ${LIVE_RUNS:-store-8 store-20 seeds-8}; do  # STARTS-BUDGET[-CONFIRM]
      step "live $run, round $round"
      IFS=- read -r starts budget confirm <<< "$run"
      rm -f /tmp/live.yaml; [ $starts = store ] && cp "$STORE" /tmp/live.yaml
      timeout 100 $X/autotune --space cuda $FRESH --budget $budget ${confirm:+--confirm $confirm} --out /tmp/live.yaml \
        --cache "$R/live-$run-$round.tsv" > "$R/live-$run-$round.log" 2>&1
      echo "autotune rc=$? $(grep 'wall time' "$R/live-$run-$round.log")"
    done
  done
elif [ "$mode" = stale ]; then
  (
    xz -dc "${STALE:-h200-s24.tsv.xz}" > /tmp/h200.tsv
    lines=$(wc -l < /tmp/h200.tsv)
    CUDA_VISIBLE_DEVICES=0 retime /tmp/h200.tsv "$R/retime-h200.log" 540 > /dev/null
    tail -n +$((lines + 1)) /tmp/h200.tsv > "$R/h200-retimed.tsv"
  ) &
  gpu0=$!
  step "GPU 1: fresh problems exhaustive"
  cp "$STORE" /tmp/exh.yaml; cp "$STORE" /tmp/climb.yaml
  CUDA_VISIBLE_DEVICES=1 timeout 400 $X/autotune --space cuda $FRESH --strategy exhaustive --budget 1000000 \
    --out /tmp/exh.yaml --cache "$R/fresh.tsv" > "$R/fresh-exhaustive.log" 2>&1
  echo "exhaustive rc=$?"; grep -c "^#search" "$R/fresh.tsv"
  step "GPU 1: fresh problems retime"
  CUDA_VISIBLE_DEVICES=1 retime "$R/fresh.tsv" "$R/retime-fresh.log" 100
  step "GPU 1: fresh problems, autotune --budget 8 from the committed store"
  CUDA_VISIBLE_DEVICES=1 timeout 60 $X/autotune --space cuda $FRESH --budget 8 --out /tmp/climb.yaml \
    --cache "$R/climb.tsv" > "$R/climb.log" 2>&1
  echo "climb rc=$?"; cp /tmp/climb.yaml "$R/climb-store.yaml"
  wait $gpu0; tail -1 "$R/retime-h200.log"
else
  extras=196x256x1152,196x256x128,49x512x2304,49x512x256,784x128x576,784x128x64
  sets=("--shapes resnet50 --batch 128" "--shape $extras --batch 128" "--shapes resnet50 --batch 1" "--shape $extras --batch 1")
  start=$(date +%s); gpu=0
  for shard in "${@:2}"; do
    (
      export CUDA_VISIBLE_DEVICES=$gpu
      for set in "${sets[@]}"; do
        left=$(( ${LIMIT:-470} - ($(date +%s) - start) ))
        [ "$left" -gt 10 ] || break
        # shellcheck disable=SC2086
        $X/autotune --space cuda --strategy exhaustive --budget 1000000 --reps 5 --shard $shard/4 \
            --out /tmp/store-$shard.yaml --cache "$R/exhaustive-$shard.tsv" $set --dtype fp32,fp16 --time-limit ${left}s
      done > "$R/exhaustive-$shard.log" 2>&1
      echo "shard $shard: $(grep -c '^#search' "$R/exhaustive-$shard.tsv") problems in $(( $(date +%s) - start )) s"
      retime "$R/exhaustive-$shard.tsv" "$R/retime-$shard.log" $(( 590 - ($(date +%s) - start) ))
    ) &
    gpu=$((gpu + 1))
  done
  wait
fi
step done
tar -C "$OUT" -czf "$OUT/results.tgz" r && rm -rf "$R"
