#!/usr/bin/python3
"""Geometric means of each dispatch variant's GFLOP/s over the tuned entries', best of the two
rounds per layer. Usage: compare.py DIR VARIANT... (e.g. unseen model-new model-old)."""
import csv
import math
import os
import sys


def load(path):
    return {(r["set"], r["layer"], r["m"], r["n"], r["k"]): float(r["gflops"])
            for r in csv.DictReader(open(path)) if r["row"] == "layer"}


def best_of_rounds(folder, kind, group, dtype):
    runs = [load(os.path.join(folder, f"{kind}-{group}-{dtype}-{r}.csv")) for r in (1, 2)]
    return {key: max(run[key] for run in runs) for key in runs[0]}


folder, variants = sys.argv[1], sys.argv[2:]
for dtype in ("fp32", "fp16"):
    for group in ("r18", "r34"):
        tuned = best_of_rounds(folder, "tuned", group, dtype)
        rates = {v: best_of_rounds(folder, v, group, dtype) for v in variants}
        for name in sorted({key[0] for key in tuned}):
            keys = [key for key in tuned if key[0] == name]
            parts = []
            for v in variants:
                ratios = [rates[v][key] / tuned[key] for key in keys]
                mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
                parts.append(f"{v} {mean:.3f} worst {min(ratios):.2f} below 0.85 {sum(r < 0.85 for r in ratios)}/{len(ratios)}")
            print(dtype, name, " | ".join(parts))
