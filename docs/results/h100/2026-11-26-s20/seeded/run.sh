#!/usr/bin/env bash
# s20 call 5: autotune seeded with dispatch's pick (store_start) on shapes the store lacks:
# ResNet-18 at 512, fp32 and fp16, from the committed store less those shapes (holdout2.yaml),
# budget 20; then kgemm-run from the holdout store (the model) and from the tuned one, two rounds.
set -u
D=$PWD/.device; B=/tmp/kb; mkdir -p $B $OUT/r $B/lib
for f in $D/bin/kgemm-run.xz $D/bin/autotune.xz; do xz -dc "$f" > $B/$(basename "$f" .xz); chmod +x $B/$(basename "$f" .xz); done
export LD_LIBRARY_PATH=$D/lib:$B/lib
R=$OUT/r; step() { echo "=== $(date +%T) $*"; }
HOLD=$D/stores/holdout2.yaml
cp $HOLD $R/tuned.yaml
step autotune
KGEMM_CONFIG_FILE=$R/tuned.yaml $B/autotune --space cuda --shapes resnet18 --image 512 --dtype fp32,fp16 --budget 20 --time-limit 200s --out $R/tuned.yaml > $R/autotune.log 2>&1; echo "autotune rc=$?"; tail -3 $R/autotune.log
for round in 1 2; do for d in fp32 fp16; do
  KGEMM_CONFIG_FILE=$HOLD $B/kgemm-run --space cuda --dtype $d --model resnet18 --image 512 --format csv > $R/model-r18-$d-$round.csv 2> $R/model-r18-$d-$round.err
  KGEMM_CONFIG_FILE=$R/tuned.yaml $B/kgemm-run --space cuda --dtype $d --model resnet18 --image 512 --format csv > $R/tuned-r18-$d-$round.csv 2> $R/tuned-r18-$d-$round.err
  step "round $round $d"
done; done
cd $OUT && tar czf results.tgz r && rm -rf r
