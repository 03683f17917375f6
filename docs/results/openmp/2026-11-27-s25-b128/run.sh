#!/usr/bin/env bash
# ResNet-50 batch 128 fp32 on this host (issue 43): kgemm (store and default) and the host peers
# (OpenBLAS, MKL, BLIS), each in a process of its own, 1 and 2 threads, ROUNDS rounds one after
# another (default 2), then the report of the last round with its table of kgemm against the best
# peer per row. Run from the repository root with the openmp build: run.sh OUT_DIR
set -euo pipefail
out=${1:?usage: run.sh OUT_DIR}; B=build/openmp/benchmarks; mkdir -p "$out"
gb=(--benchmark_min_time=0.05 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out_format=json)
cat /proc/loadavg > "$out/load-before.txt"
for round in $(seq "${ROUNDS:-2}"); do
  r=$out/round$round; mkdir -p "$r"
  OMP_PROC_BIND=spread OMP_PLACES=threads $B/kgemm-bench-gemm --space serial,openmp --batch 128 --peers= \
    "${gb[@]}" --benchmark_out="$r/kgemm.json" > "$r/kgemm.log"
  for peer in openblas mkl blis; do
    [ -x "$B/kgemm-$peer-peer" ] || continue
    $B/kgemm-$peer-peer --threads 1,2 --batch 128 "${gb[@]}" --benchmark_out="$r/$peer.json" > "$r/$peer.log"
  done
  $B/kgemm-fma-peak --out "$r/fma_peak.json" > "$r/fma_peak.log"
  echo "round $round done: $(cat /proc/loadavg)"
done
cat /proc/loadavg > "$out/load-after.txt"
python3 benchmarks/report/kgemm_report.py --out-dir "$out/report" --title "ResNet-50 batch 128, host" --summary "$r"/*.json
