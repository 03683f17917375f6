#!/usr/bin/env bash
# s20 call 3: the new model at trust decay 0.2 (kgemm-run) and 0 (kgemm-run-d0), same sets and stores as call 2
set -u
D=$PWD/.device; B=/tmp/kb; mkdir -p $B $OUT/r $B/lib
for f in $D/bin/kgemm-run.xz $D/bin/kgemm-run-d0.xz; do [ -f $f ] && { xz -dc "$f" > $B/$(basename "$f" .xz); chmod +x $B/$(basename "$f" .xz); }; done
export LD_LIBRARY_PATH=$D/lib:$B/lib
R=$OUT/r; step() { echo "=== $(date +%T) $*"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee $R/gpu.txt
step live header
$B/kgemm-run-d0 --space cuda --shape 64x64x64 --reps 1 | grep "^device"
HOLD=$D/stores/holdout2.yaml  # = ../unseen/holdout-store.yaml; TUNED=$PWD/configs/cuda-nvidia-h100-80gb-hbm3.yaml
for round in 1 2; do for d in fp32 fp16; do
  for set in "r18:--model resnet18 --image 512,1024" "r34:--model resnet34 --batch 32"; do
    n=${set%%:*}; opts=${set#*:}
    KGEMM_CONFIG_FILE=$HOLD $B/kgemm-run --space cuda --dtype $d $opts --format csv > $R/model-new-$n-$d-$round.csv 2> $R/model-new-$n-$d-$round.err
    KGEMM_CONFIG_FILE=$HOLD $B/kgemm-run-d0 --space cuda --dtype $d $opts --format csv > $R/model-d0-$n-$d-$round.csv 2> $R/model-d0-$n-$d-$round.err
    KGEMM_CONFIG_FILE=$TUNED $B/kgemm-run --space cuda --dtype $d $opts --format csv > $R/tuned-$n-$d-$round.csv 2> $R/tuned-$n-$d-$round.err
    step "round $round $d $n: $(grep -h -c '^layer' $R/model-new-$n-$d-$round.csv $R/model-d0-$n-$d-$round.csv $R/tuned-$n-$d-$round.csv | tr '\n' ' ')"
  done; done; done
cd $OUT && tar czf results.tgz r && rm -rf r
