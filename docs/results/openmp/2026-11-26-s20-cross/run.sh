#!/usr/bin/env bash
# host cross table: every gemm config of the Xeon store on every shape of it (OpenMP, 2 threads)
cd "$(dirname "$0")/../../../.." &&  O=${OUT:-/tmp/host-cross}; mkdir -p $O
S=$(paste -sd, docs/results/openmp/2026-11-26-s20-cross/shapes.txt)
for c in $(cat docs/results/openmp/2026-11-26-s20-cross/configs.txt); do
  t0=$(date +%s)
  build/openmp/tools/kgemm-run --space openmp --shape $S --config $c --reps 3 --format csv > $O/$c.csv 2> $O/$c.err
  echo "$c rc=$? $(( $(date +%s) - t0 )) s load $(cut -d' ' -f1 /proc/loadavg)"
done
