#!/usr/bin/env bash
# One device call: kgemm's Python package on a GPU machine. The arrays library comes built here
# (CUDA 12.4, Kokkos 4.6.01 for Hopper as position-independent code, -DKGEMM_BUILD_PYTHON=ON,
# target kgemm_arrays) and packed with the C++ tests (pack.sh, KGEMM_PACK_SOLID=1) into
# .device/h100; the module is compiled there over it with the machine's Python 3.12 and nanobind.
# Then: the C++ suites on the GPU, the pytest suite (CPU and GPU tests), the per-call overhead
# against torch.matmul, and the course notebook as a script (its GPU cells).
# Usage (repository root on the GPU machine): docs/results/h100/2026-11-27-s23/run.sh [python|overhead|batched]
#   python:   the module and the pytest suite only
#   overhead: the module and the per-call overhead only
#   batched:  kgemm-bench-batched (shared weights, squares) beside the cuBLAS peer's batched rows
set -uo pipefail
# Everything lands in one folder, packed into $OUT/s23.tar.xz at the end (the device tool returns
# a handful of files).
out=/tmp/s23; mkdir -p "$out"
pack=$PWD/.device/h100
"$pack/unpack.sh" > /dev/null
export LD_LIBRARY_PATH=$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
python3 -c 'import sys, torch, nanobind; print(sys.version.split()[0], torch.__version__, nanobind.__version__)' | tee -a "$out/gpu.txt"

echo "=== the module, compiled here over the carried arrays library"
t0=$(date +%s)
cmake -S python -B /tmp/kgemm-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v python3)" \
      -DKGEMM_ARRAYS_LIBRARY="$pack/bin/libkgemm_arrays.so" > "$out/module-build.log" 2>&1 &&
  cmake --build /tmp/kgemm-py >> "$out/module-build.log" 2>&1 || { tail -30 "$out/module-build.log"; exit 1; }
pkg=/tmp/kgemm-pkg/kgemm
mkdir -p "$pkg/configs"
cp python/kgemm/__init__.py /tmp/kgemm-py/_kgemm*.so "$pack/bin/libkgemm_arrays.so" "$pkg/"
cp configs/*.yaml "$pkg/configs/"
export PYTHONPATH=/tmp/kgemm-pkg
echo "module built in $(( $(date +%s) - t0 )) s"
python3 -c 'import kgemm; print(kgemm.spaces()); print(kgemm.device("cuda"))' 2>&1 | tee "$out/device.txt"

if [ "${1:-}" = python ]; then  # the pytest suite alone
  timeout 400 python3 -m pytest -q -p no:cacheprovider python/tests > "$out/pytest.txt" 2>&1; echo "pytest rc=$?"
  grep -E "^(FAILED|ERROR)|passed|failed|^E  " "$out/pytest.txt" | head -30
  tar -C /tmp -cJf "${OUT:-/tmp}/s23.tar.xz" s23
  exit 0
fi
if [ "${1:-}" = batched ]; then  # kgemm's batched rows beside cuBLAS' default and cuBLASLt best
  benchmarks/cublas_peer/build.sh /tmp/cublas_peer > "$out/cublas_build.log" 2>&1 || tail -5 "$out/cublas_build.log"
  "$pack/bin/kgemm-run" --list-shapes --batch 128 > /tmp/shapes.csv
  "$pack/bin/kgemm-bench-batched" --space cuda --dtype fp32 --shared-b --batch 128 --benchmark_min_time=0.05 \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out="$out/bench-batched.json" \
      --benchmark_out_format=json > "$out/bench-batched.log" 2>&1
  echo "bench batched rc=$?"
  timeout 400 /tmp/cublas_peer --shapes /tmp/shapes.csv --dtype fp32 --batched-shapes --squares 8,16,32,64 --kgemm-inputs \
      --out "$out/cublas-batched.json" > "$out/cublas-batched.log" 2>&1
  echo "cublas rc=$?"; grep -i geometric "$out/cublas-batched.log"
  tar -C /tmp -cJf "${OUT:-/tmp}/s23.tar.xz" s23
  exit 0
fi
if [ "${1:-}" = overhead ]; then
  for round in 1 2; do python3 benchmarks/python_overhead.py --device cuda --repeats 9 2>&1 | tee -a "$out/overhead-cuda.md"; done
  tar -C /tmp -cJf "${OUT:-/tmp}/s23.tar.xz" s23
  exit 0
fi

echo "=== C++ suites on the GPU"
timeout 400 "$pack/bin/test_gemm" --gtest_filter='*Cuda*:TeamScratch*' --gtest_brief=1 > "$out/test_gemm.log" 2>&1
echo "test_gemm rc=$? $(tail -1 "$out/test_gemm.log")"; grep -h 'FAILED  \]\|Failure' "$out/test_gemm.log" | head -20
timeout 100 "$pack/bin/test_api" --gtest_brief=1 > "$out/test_api.log" 2>&1
echo "test_api rc=$? $(tail -1 "$out/test_api.log")"
if [ -x "$pack/bin/test_store" ]; then
  timeout 300 "$pack/bin/test_store" --gtest_filter='*Cuda*:TunedConfigs*:DispatchTest.*' --gtest_brief=1 > "$out/test_store.log" 2>&1
  echo "test_store rc=$? $(tail -1 "$out/test_store.log")"; grep -h 'FAILED  \]\|Failure' "$out/test_store.log" | head -10
fi

echo "=== KGEMM_TUNE: a shape tuned on its first call, then served from the store (kgemm-run)"
rm -f /tmp/first-use.yaml
for run in 1 2; do
  KGEMM_TUNE=8 KGEMM_CONFIG_FILE=/tmp/first-use.yaml "$pack/bin/kgemm-run" --space cuda --shape 3136x64x576,1x1x1 2>&1 |
    grep -E "on first use|tuned configs|^[0-9] " | tee -a "$out/first-use.txt"
done

echo "=== pytest"
timeout 400 python3 -m pytest -q -p no:cacheprovider python/tests > "$out/pytest.txt" 2>&1; echo "pytest rc=$?"
grep -E "^(FAILED|ERROR)|passed|failed|^E  " "$out/pytest.txt" | head -30

echo "=== per-call overhead from Python"
python3 benchmarks/python_overhead.py --device cuda 2>&1 | tee "$out/overhead-cuda.md"

if [ -f .device/cublas_peer.cu ]; then
  echo "=== kgemm (the device's store) beside cuBLAS' default and cuBLASLt best, ResNet-50 batch 128 and 1"
  nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -I tuner -I kernels -o /tmp/cublas_peer .device/cublas_peer.cu \
      -lcublasLt -lcublas > "$out/cublas_build.log" 2>&1 || tail -5 "$out/cublas_build.log"
  : > /tmp/shapes.csv
  for b in 128 1; do
    "$pack/bin/kgemm-run" --list-shapes --batch $b | { [ -s /tmp/shapes.csv ] && tail -n +2 || cat; } >> /tmp/shapes.csv
    "$pack/bin/kgemm-run" --space cuda --batch $b --dtype fp32,fp16 > "$out/kgemm-b$b.txt" 2>&1
    grep -E "^tuned configs|geometric" "$out/kgemm-b$b.txt"
  done
  timeout 300 /tmp/cublas_peer --shapes /tmp/shapes.csv --dtype fp32,fp16 --kgemm-inputs --out "$out/cublas.json" > "$out/cublas.log" 2>&1
  echo "cublas rc=$?"; grep -i geometric "$out/cublas.log" | head -12
fi

echo "=== the course notebook as a script"
[ -f .device/kgemm_resnet18.py ] && (cd /tmp && timeout 300 python3 "$OLDPWD/.device/kgemm_resnet18.py" 2>&1 | tail -40) | tee "$out/notebook.txt"
tar -C /tmp -cJf "${OUT:-/tmp}/s23.tar.xz" s23
exit 0
