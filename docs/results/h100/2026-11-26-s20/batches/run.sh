#!/usr/bin/env bash
# s20 call 4: batch sizes never tuned. ResNet-50 at batch 8 and 32, fp32 and fp16: kgemm-run with
# the committed store (the dispatch model: no entries for these shapes), then autotune --budget 20
# for exactly those shapes into a copy of the store, then kgemm-run with the tuned copy; model and
# tuned runs alternate twice after the tuning.
set -u
D=$PWD/.device; B=/tmp/kb; mkdir -p $B $OUT/r $B/lib
for f in $D/bin/kgemm-run.xz $D/bin/autotune.xz; do xz -dc "$f" > $B/$(basename "$f" .xz); chmod +x $B/$(basename "$f" .xz); done
export LD_LIBRARY_PATH=$D/lib:$B/lib
R=$OUT/r; step() { echo "=== $(date +%T) $*"; }
STORE=$PWD/configs/cuda-nvidia-h100-80gb-hbm3.yaml
cp $STORE $R/tuned.yaml
step autotune
KGEMM_CONFIG_FILE=$R/tuned.yaml $B/autotune --space cuda --shapes resnet50 --batch 8,32 --dtype fp32,fp16 --budget 20 --time-limit 330s --out $R/tuned.yaml > $R/autotune.log 2>&1; echo "autotune rc=$?"; tail -4 $R/autotune.log
for round in 1 2; do for d in fp32 fp16; do
  KGEMM_CONFIG_FILE=$STORE $B/kgemm-run --space cuda --dtype $d --model resnet50 --batch 8,32 --format csv > $R/model-r50-$d-$round.csv 2> $R/model-r50-$d-$round.err
  KGEMM_CONFIG_FILE=$R/tuned.yaml $B/kgemm-run --space cuda --dtype $d --model resnet50 --batch 8,32 --format csv > $R/tuned-r50-$d-$round.csv 2> $R/tuned-r50-$d-$round.err
  step "round $round $d: $(grep -h -c '^layer' $R/model-r50-$d-$round.csv $R/tuned-r50-$d-$round.csv | tr '\n' ' ')"
done; done
cd $OUT && tar czf results.tgz r && rm -rf r
