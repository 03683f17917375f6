#!/usr/bin/env bash
# s20 call 1: the cross table. Every fp32 gemm config of the committed H100 store (and split
# variants of the common unsplit ones) timed on every shape of ResNet-18 at 512 and 1024, ResNet-34
# batch 32 and ResNet-50 batch 1 (kgemm-run --config, median of 5), for the dispatch model's study.
set -u
D=$PWD/.device; B=/tmp/kb; mkdir -p $B $OUT/r $B/lib
for f in $D/bin/kgemm-run.xz; do xz -dc "$f" > $B/$(basename "$f" .xz); chmod +x $B/$(basename "$f" .xz); done
export LD_LIBRARY_PATH=$D/lib:$B/lib
export KGEMM_CONFIG_FILE=$PWD/configs/cuda-nvidia-h100-80gb-hbm3.yaml
R=$OUT/r; start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee $R/gpu.txt
S=$(paste -sd, $D/cross/shapes.txt)
for c in $(cat $D/cross/configs.txt); do
  if (( $(date +%s) - start > 480 )); then echo "time guard: stopped before $c"; break; fi
  t0=$(date +%s)
  if ! $B/kgemm-run --space cuda --dtype fp32 --shape $S --config $c --reps 5 --format csv > $R/$c.csv 2> $R/$c.err; then
    echo "$c: whole run failed ($(tail -1 $R/$c.err)); shape by shape"
    : > $R/$c.csv
    for s in $(cat $D/cross/shapes.txt); do
      $B/kgemm-run --space cuda --dtype fp32 --shape $s --config $c --reps 5 --format csv >> $R/$c.csv 2>> $R/$c.err
    done
  fi
  echo "$c $(( $(date +%s) - t0 )) s, $(grep -c '^layer' $R/$c.csv) layers"
done
cd $OUT && tar czf results.tgz r && rm -rf r
