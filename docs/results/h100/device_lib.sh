# Shell functions the device-call scripts under docs/results/h100/ share (sourced, not run).
step() { echo "=== $(date +%T) $*"; }
geomean() {  # geomean FILE.csv: kgemm-run's per-layer GFLOP/s, as TFLOP/s
  python3 -c 'import csv, math, sys
r = [float(x["gflops"]) for x in csv.DictReader(open(sys.argv[1])) if x["row"] == "layer" and x["gflops"]]
print(sys.argv[1].rsplit("/", 1)[-1], "geomean %.1f TFLOP/s over %d layers" % (math.exp(sum(map(math.log, r)) / len(r)) / 1e3, len(r)) if r else "no layers")' "$1"
}
gpu_info() {  # gpu_info DIR: the GPU's name, driver and clock, also into DIR/gpu.txt
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$1/gpu.txt"
}
