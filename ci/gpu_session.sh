#!/usr/bin/env bash
# One GPU session, everything in one call (GPU time is scarce): tests, autotune, benchmarks and
# the cuBLAS peer, on a machine that has the GPU and its own CUDA (nvcc + cuBLAS) but possibly
# not the toolchain kgemm was built with. Results go to $OUT (default ./gpu-results).
# Usage: ci/gpu_session.sh BUILD_DIR [steps...]   steps: tests probe tune tune-batched bench peer
#   (default: tests tune tune-batched bench peer)
#   KGEMM_TUNE_BUDGET   per-shape budget for autotune (default 30)
#   KGEMM_BATCHES       batch sizes of tune, bench and peer (default 1,128)
#   KGEMM_START_STORE   store to start from (e.g. the committed configs/ file), so that tuning a
#                       subset (one batch size) keeps every other entry
#   KGEMM_RESUME=1      autotune skips shapes the store already has (continuing a cut-off call)
#   KGEMM_PEERS         peers of the GEMM benchmarks (default: all, which is kokkosblas; the
#                       host's OpenBLAS runs in a process of its own, kgemm-openblas-peer)
#   KGEMM_PROBE         for probe: space-separated dtype:batch:config triples, each run over the
#                       20 shapes with kgemm-run (a kernel change measured before re-tuning)
set -uo pipefail
build=$(cd "$1" && pwd); shift
steps=${*:-tests tune tune-batched bench peer}
probes=${KGEMM_PROBE:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
budget=${KGEMM_TUNE_BUDGET:-30}
resume=${KGEMM_RESUME:+--resume}
batches=${KGEMM_BATCHES:-1,128}
# Runtime libraries shipped beside a cross-built binary (see docs/gpu.md).
[ -d "$build/lib" ] && export LD_LIBRARY_PATH=$build/lib:${LD_LIBRARY_PATH:-}
export KGEMM_CONFIG_FILE=$out/cuda-store.yaml
[ -n "${KGEMM_START_STORE:-}" ] && cp "$KGEMM_START_STORE" "$KGEMM_CONFIG_FILE"
has() { [[ " $steps " == *" $1 "* ]]; }
log() { echo "=== $(date +%T) $*"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader

if has tests; then
  log tests
  "$build/tests/test_gemm" --gtest_filter='-*Serial*' --gtest_brief=1 > "$out/test_gemm.log" 2>&1
  echo "test_gemm rc=$? $(tail -1 "$out/test_gemm.log")"
  for t in test_tuner test_api test_store; do
    "$build/tests/$t" --gtest_brief=1 > "$out/$t.log" 2>&1
    echo "$t rc=$? $(tail -1 "$out/$t.log")"
  done
fi

if has probe; then
  log probe
  for p in $probes; do
    IFS=: read -r dtype batch config <<< "$p"
    "$build/tools/kgemm-run" --space cuda --dtype "$dtype" --batch "$batch" --config "$config" --reps 5 \
        > "$out/probe-$dtype-b$batch-$config.log" 2>&1
    echo "probe $dtype b$batch $config rc=$? $(tail -1 "$out/probe-$dtype-b$batch-$config.log")"
  done
fi

if has tune; then
  log "autotune gemm (budget $budget)"
  "$build/tools/autotune" --space cuda --shapes resnet50 --batch "$batches" --dtype fp32,fp16 --budget "$budget" \
      --out "$KGEMM_CONFIG_FILE" --cache "$out/cuda-measurements.tsv" $resume > "$out/autotune.log" 2> "$out/autotune.err"
  echo "autotune rc=$? $(grep -h 'geometric-mean' "$out/autotune.log")"
fi

if has tune-batched; then
  log "autotune batched (budget $budget)"
  "$build/tools/autotune" --space cuda --shapes resnet50 --batch 128 --dtype fp32 --batched --shared-b --budget "$budget" \
      --out "$KGEMM_CONFIG_FILE" --cache "$out/cuda-measurements.tsv" $resume > "$out/autotune-batched.log" 2>> "$out/autotune.err"
  echo "autotune batched rc=$? $(grep -h 'geometric-mean' "$out/autotune-batched.log")"
  for n in 8 16 32 64; do  # the batched squares of the benchmarks: batch = 2^24 / n^2
    "$build/tools/autotune" --space cuda --shape ${n}x${n}x${n} --batch $((16777216 / n / n)) --dtype fp32 --batched \
        --budget "$budget" --out "$KGEMM_CONFIG_FILE" --cache "$out/cuda-measurements.tsv" $resume >> "$out/autotune-batched.log" 2>> "$out/autotune.err"
  done
fi

if has bench; then
  # This session's store when it tuned, else the one dispatch finds (the repository's configs/).
  [ -f "$KGEMM_CONFIG_FILE" ] || unset KGEMM_CONFIG_FILE
  short="--benchmark_min_time=0.05 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
  for b in ${batches//,/ }; do
    log "benchmarks batch $b"
    "$build/benchmarks/kgemm-bench-gemm" --space cuda --batch "$b" --dtype fp32,fp16 ${KGEMM_PEERS+--peers=$KGEMM_PEERS} $short \
        --benchmark_out="$out/bench-gemm-b$b.json" --benchmark_out_format=json > "$out/bench-gemm-b$b.log" 2>&1
    echo "bench gemm b$b rc=$?"
  done
  "$build/benchmarks/kgemm-bench-batched" --space cuda --dtype fp32 --shared-b --batch 128 $short \
      --benchmark_out="$out/bench-batched.json" --benchmark_out_format=json > "$out/bench-batched.log" 2>&1
  echo "bench batched rc=$?"
fi

if has peer; then
  log "cuBLAS peer"
  "$repo/benchmarks/cublas_peer/build.sh" "$out/cublas_peer" > "$out/cublas_build.log" 2>&1 || { echo "cublas build failed"; tail "$out/cublas_build.log"; }
  : > "$out/shapes.csv"
  for b in ${batches//,/ }; do
    "$build/tools/kgemm-run" --list-shapes --batch "$b" | { [ -s "$out/shapes.csv" ] && tail -n +2 || cat; } >> "$out/shapes.csv"
  done
  "$out/cublas_peer" --shapes "$out/shapes.csv" --dtype fp32,fp16 --squares 8,16,32,64 --batched-shapes --kgemm-inputs \
      --out "$out/cublas.json" > "$out/cublas.log" 2>&1
  echo "cublas rc=$? $(grep -i geometric "$out/cublas.log" | head -12 | tr '\n' ' ')"
fi
log done
