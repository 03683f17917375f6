#!/usr/bin/python3
"""A tuned store's own measurements as benchmark rows (../RESULTS_SCHEMA.md).

autotune times every config it keeps (fenced repetitions, median): the store holds the winner's
GFLOP/s and the space default's for each problem. This writes them as `kgemm` and
`kgemm-default` rows, so that a tuning run can be set beside a peer measured in the same session
(the cuBLAS peer's file) by kgemm_report.py, also when no device time was left for the
benchmarks. GEMM entries only; the layer and shape set come from the shapes CSV.

Usage: store_rows.py STORE.yaml SHAPES.csv > rows.json
  SHAPES.csv: `kgemm-run --list-shapes --batch B` (set,layer,m,n,k), the file the cuBLAS peer reads
"""
import csv
import json
import sys

import yaml

DTYPES = {"f32": "fp32", "f16": "fp16"}


def row(impl, space, dtype, set_name, layer, entry, gflops):
    m, n, k = entry["m"], entry["n"], entry["k"]
    name = f"gemm/{impl}/{space}/{dtype}/{set_name}/m{m}_n{n}_k{k}"
    label = f"{layer} {entry['config']}" if impl == "kgemm" else layer
    time_us = 2.0 * m * n * k / (gflops * 1e3)
    return {"name": name, "run_name": name, "run_type": "iteration", "iterations": 1, "real_time": time_us,
            "cpu_time": time_us, "time_unit": "us", "M": m, "N": n, "K": k, "batch": 1, "GFLOP/s": gflops,
            "label": label}


def store_rows(store, shapes):
    """Rows for every GEMM entry of `store` whose (M, N, K) is a shape of `shapes`."""
    space = store["device"]["space"]
    rows = []
    for entry in store["entries"]:
        if entry["kernel"] != "gemm" or entry["batch"] != 1 or entry["dtype"] not in DTYPES:
            continue
        for set_name, layer in shapes.get((entry["m"], entry["n"], entry["k"]), []):
            dtype = DTYPES[entry["dtype"]]
            rows.append(row("kgemm", space, dtype, set_name, layer, entry, entry["gflops"]))
            if entry.get("default_gflops", 0) > 0:
                rows.append(row("kgemm-default", space, dtype, set_name, layer, entry, entry["default_gflops"]))
    return rows


def read_shapes(path):
    shapes = {}
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            shapes.setdefault((int(r["m"]), int(r["n"]), int(r["k"])), []).append((r["set"], r["layer"]))
    return shapes


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        store = yaml.safe_load(f)
    rows = store_rows(store, read_shapes(sys.argv[2]))
    json.dump({"context": {"source": f"kgemm store {sys.argv[1]}"}, "benchmarks": rows}, sys.stdout, indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
