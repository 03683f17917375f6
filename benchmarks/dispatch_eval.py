#!/usr/bin/python3
"""The dispatch model against the nearest-entry rule, on shapes a store never tuned.

Usage:
  benchmarks/dispatch_eval.py holdout --store FILE [--run KGEMM_RUN]
  benchmarks/dispatch_eval.py measure --store FILE [--run KGEMM_RUN] [--space S] [--reps N]
                                      [--max-load L] [--max-others C] [--wait S] -- SET_OPTIONS...
  benchmarks/dispatch_eval.py table --store FILE --table CSV... [--run KGEMM_RUN] -- SET_OPTIONS...

holdout: each gemm entry of the store in turn is left out, and the config that dispatch would
  take for its shape from the others (kgemm-run --why-store) is compared with the entry's own
  winner: how often the model and the nearest-entry rule pick the config autotune found. Nothing
  runs; any store, any device.
measure: for every layer of the sets that SET_OPTIONS name (kgemm-run's --model, --image,
  --batch, --shape, --dtype) where the model's config differs from the nearest entry's, times
  both on this machine (kgemm-run --config, alternately, best of two medians each) and prints
  GFLOP/s and model / nearest per layer, and their geometric mean. It starts when the 1-minute
  load average is at most --max-load; a pair during which other processes took more than
  --max-others cores is redone, after waiting for that load again (the pairs' own threads keep
  the load average up, so it is not asked between good pairs). The store must be this machine's.
table: for every layer of the sets that SET_OPTIONS name, its own entry (if the store has one)
  left out, the config dispatch picks (kgemm-run --why-store) is looked up in a cross table of
  measured rates (kgemm-run --config ... --format csv output, one or more files: configs timed
  on the sets' shapes) and divided by the table's best rate for that shape: per layer, then the
  geometric mean per set. Picks the table lacks are listed and left out of the means. Nothing
  runs: a store and a table from any device, read anywhere.
"""
import argparse
import csv
import io
import math
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_bench import busy_cpu_seconds, children_cpu_seconds, load_average, wait_for_quiet  # noqa: E402


def why_rows(run, store, set_options):
    out = subprocess.run([run, "--why-store", store, "--format", "csv", *set_options], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def store_lines(path):
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    return lines, next(i for i, line in enumerate(lines) if line.startswith("entries:")) + 1


def entry_fields(line):
    """The fields of a store's one-line entry, or None for other lines and other kernels."""
    if "kernel: gemm," not in line:
        return None
    return dict(part.strip().split(": ", 1) for part in line.strip()[3:-1].split(", "))


def why_without(run, lines, drop, shape, dtype):
    """kgemm-run --why-store's row for one shape, from the store `lines` less line `drop` (None: all)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as held_out:
        held_out.writelines(lines[:drop] + lines[drop + 1:] if drop is not None else lines)
    try:
        return why_rows(run, held_out.name, ["--shape", shape, "--dtype", dtype])[0]
    finally:
        os.remove(held_out.name)


def holdout(args):
    lines, entries_start = store_lines(args.store)
    model_hits = nearest_hits = total = 0
    for i in range(entries_start, len(lines)):
        fields = entry_fields(lines[i])
        if fields is None:
            continue
        dtype = "fp16" if fields["dtype"] == "f16" else "fp32"
        row = why_without(args.run, lines, i, f"{fields['m']}x{fields['n']}x{fields['k']}", dtype)
        total += 1
        model_hits += row["config"] == fields["config"]
        nearest_hits += row["nearest_config"] == fields["config"]
        print(f"{fields['dtype']} {fields['m']}x{fields['n']}x{fields['k']}: winner {fields['config']}; "
              f"model {row['config']}; nearest {row['nearest_config']}")
    print(f"{total} entries held out: the model picks the winner for {model_hits}, the nearest entry for {nearest_hits}")


def table(args):
    rates = {}  # (dtype, shape) -> {config: GFLOP/s}, the best row of each
    for path in args.table:
        with open(path, encoding="utf-8") as f:
            for r in csv.DictReader(f):
                if r.get("row") == "layer":
                    per_config = rates.setdefault((r["dtype"], f"{r['m']}x{r['n']}x{r['k']}"), {})
                    per_config[r["config"]] = max(per_config.get(r["config"], 0.0), float(r["gflops"]))
    lines, entries_start = store_lines(args.store)
    own = {}  # (dtype, shape) -> the line of its entry
    for i in range(entries_start, len(lines)):
        fields = entry_fields(lines[i])
        if fields is not None and fields["batch"] == "1":
            own[("fp16" if fields["dtype"] == "f16" else "fp32", f"{fields['m']}x{fields['n']}x{fields['k']}")] = i
    sets = {}
    for r in why_rows(args.run, args.store, args.set_options):
        sets.setdefault((r["set"], r["dtype"]), []).append(r)
    all_logs, missing = [], []
    for (name, dtype), layers in sets.items():
        logs = []
        for layer in layers:
            shape = f"{layer['m']}x{layer['n']}x{layer['k']}"
            measured = rates.get((dtype, shape), {})
            pick = why_without(args.run, lines, own.get((dtype, shape)), shape, dtype)["config"]
            if pick not in measured:
                missing.append(f"{name} {dtype} {shape}: {pick}")
                continue
            best_config = max(measured, key=measured.get)
            ratio = measured[pick] / measured[best_config]
            logs.append(math.log(ratio))
            print(f"{name} {dtype} {layer['layer']} {shape}: {pick} {measured[pick]:.1f} GFLOP/s, best "
                  f"{best_config} {measured[best_config]:.1f}: {ratio:.3f}", flush=True)
        if logs:
            print(f"{name} {dtype}: geometric mean {math.exp(sum(logs) / len(logs)):.3f} of the table's best "
                  f"over {len(logs)} layers", flush=True)
        all_logs += logs
    for m in missing:
        print(f"not in the table: {m}")
    if all_logs:
        print(f"all sets: geometric mean {math.exp(sum(all_logs) / len(all_logs)):.3f} over {len(all_logs)} layers")


def gflops(args, shape, config):
    out = subprocess.run([args.run, "--space", args.space, "--shape", shape, "--config", config, "--reps",
                          str(args.reps), "--format", "csv"], check=True, capture_output=True, text=True).stdout
    return float(next(r for r in csv.DictReader(io.StringIO(out)) if r["row"] == "layer")["gflops"])


def measure(args):
    rows = [r for r in why_rows(args.run, args.store, args.set_options) if r["config"] != r["nearest_config"]]
    print(f"{len(rows)} layers where the model and the nearest entry differ")
    log_sum, quiet, first_load = 0.0, False, None
    for r in rows:
        shape = f"{r['m']}x{r['n']}x{r['k']}"
        while True:
            if not quiet:
                waited = wait_for_quiet(args.max_load, args.wait)
                if waited is None:
                    sys.exit(f"error: the 1-minute load average stayed above {args.max_load} for {args.wait:.0f} s")
                first_load = first_load or waited
                quiet = True
            before = load_average()
            start_busy, start_children, start = busy_cpu_seconds(), children_cpu_seconds(), time.monotonic()
            model, nearest = gflops(args, shape, r["config"]), gflops(args, shape, r["nearest_config"])
            model = max(model, gflops(args, shape, r["config"]))
            nearest = max(nearest, gflops(args, shape, r["nearest_config"]))
            wall = time.monotonic() - start
            others = ((busy_cpu_seconds() - start_busy) - (children_cpu_seconds() - start_children)) / wall
            if others <= args.max_others:
                break
            quiet = False
            print(f"other processes used {others:.2f} cores while {shape} ran: again", flush=True)
        log_sum += math.log(model / nearest)
        print(f"{r['set']} {r['layer']} {shape}: model {r['config']} {model:.1f} GFLOP/s, nearest "
              f"{r['nearest_config']} {nearest:.1f}: {model / nearest:.3f}x (load before {before[0]:.2f}, "
              f"others {others:.2f} cores)", flush=True)
    if rows:
        print(f"geometric mean model / nearest over {len(rows)} layers: {math.exp(log_sum / len(rows)):.3f}x; "
              f"1-minute load average {first_load[0]:.2f} when the pairs started")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["holdout", "measure", "table"])
    parser.add_argument("--store", required=True)
    parser.add_argument("--run", default="build/openmp/tools/kgemm-run")
    parser.add_argument("--space", default="openmp")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--max-load", type=float, default=0.6)
    parser.add_argument("--max-others", type=float, default=0.25)
    parser.add_argument("--wait", type=float, default=1800)
    parser.add_argument("--table", nargs="+", default=[])
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.set_options = argv[split + 1:]
    {"holdout": holdout, "measure": measure, "table": table}[args.mode](args)


if __name__ == "__main__":
    main()
