#!/usr/bin/python3
"""Two tuned stores of one device, entry by entry: is OTHER as good as REFERENCE?

Made for a tune split over several GPUs (cluster/tune_node.sh: claims or shards, then the merge)
set beside a single-GPU tune of the same problems, but any two stores of one device will do.

Per problem it shows both configs and the GFLOP/s each tune recorded for its winner. Those
numbers come from different processes (and GPUs), so they differ by measurement noise even
when the configs agree. Re-timing both stores' configs on one GPU settles it: give kgemm-run's
JSON outputs (`kgemm-run --format json` with KGEMM_CONFIG_FILE set to each store, in
alternating rounds) with --reference-runs and --other-runs. Then each problem also gets the
median GFLOP/s of each store's config over its rounds, their ratio, and the noise: the larger
of the two stores' round-to-round spreads ((max - min) / median). A problem is `same config`,
`within noise` (the ratio is within 1 +- noise) or names the store whose config was faster;
a run that dispatched another config than the store entry's is named instead.

Usage: store_compare.py REFERENCE.yaml OTHER.yaml [--reference-runs J...] [--other-runs J...]
                        [--out FILE.md]
Exit status 1 when the stores hold different problems or a run file used another store; 2 on
bad input (unreadable files, stores of different devices).
"""
import argparse
import json
import os
import statistics
import sys

import yaml

from results import geomean
from store_rows import DTYPES


class Refused(Exception):
    """Input this tool cannot read or compare; the message says which file and why."""


class OtherStoreRun(Exception):
    """A kgemm-run output that ran with neither store it is given for."""


def load_store(path):
    try:
        with open(path, encoding="utf-8") as f:
            store = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise Refused(f"{path}: cannot read it as a store: {e}") from e
    if not isinstance(store, dict) or "device" not in store or not isinstance(store.get("entries"), list):
        raise Refused(f"{path}: not a kgemm store (no device or no entries list)")
    return store


def problem_key(entry):
    """(kernel, dtype, order, m, n, k, batch): one store entry per key."""
    return tuple(entry[field] for field in ("kernel", "dtype", "order", "m", "n", "k", "batch"))


def problem_name(key):
    kernel, dtype, order, m, n, k, batch = key
    return f"{kernel} {DTYPES.get(dtype, dtype)} {m}x{n}x{k}" + (f" b{batch}" if batch != 1 else "") + \
        (f" {order}" if order != "nn" else "")


def retimed_rates(run_paths, store_path):
    """{(dtype, m, n, k): [(GFLOP/s, config) per round]} from kgemm-run JSON files that all used
    `store_path` (compared by file name: the runs usually happened on another machine)."""
    rates = {}
    for path in run_paths:
        try:
            with open(path, encoding="utf-8") as f:
                runs = json.load(f)["runs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise Refused(f"{path}: cannot read it as kgemm-run JSON output: {e}") from e
        for run in runs:
            used = run.get("store") or "(no store)"
            if os.path.basename(used) != os.path.basename(store_path):
                raise OtherStoreRun(f"{path}: ran with the store {used}, not {os.path.basename(store_path)}")
            for layer in run["layers"]:
                rates.setdefault((run["dtype"], layer["m"], layer["n"], layer["k"]), []).append(
                    (layer["gflops"], layer.get("config")))
    return rates


def spread(values):
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else None


def compare(reference, other, reference_rates, other_rates):
    """One row per problem of either store, sorted; and the problems only one store holds."""
    ref_entries = {problem_key(e): e for e in reference["entries"]}
    other_entries = {problem_key(e): e for e in other["entries"]}
    rows = []
    for key in sorted(ref_entries.keys() & other_entries.keys()):
        a, b = ref_entries[key], other_entries[key]
        row = {"key": key, "ref_config": a["config"], "other_config": b["config"], "ref_gflops": a["gflops"],
               "other_gflops": b["gflops"], "tuned_ratio": b["gflops"] / a["gflops"],
               "same_config": a["config"] == b["config"]}
        kernel, dtype, order, m, n, k, batch = key
        timed = (DTYPES.get(dtype), m, n, k)
        if kernel == "gemm" and order == "nn" and batch == 1 and timed in reference_rates and timed in other_rates:
            ref_rounds = [gflops for gflops, _ in reference_rates[timed]]
            other_rounds = [gflops for gflops, _ in other_rates[timed]]
            # kgemm-run dispatches; a config other than the entry's (one it refused) is no re-timing of it.
            row["ran_other_config"] = sorted({c for _, c in reference_rates[timed] if c != a["config"]} |
                                             {c for _, c in other_rates[timed] if c != b["config"]})
            row["ref_retimed"] = statistics.median(ref_rounds)
            row["other_retimed"] = statistics.median(other_rounds)
            row["retimed_ratio"] = row["other_retimed"] / row["ref_retimed"]
            spreads = [s for s in (spread(ref_rounds), spread(other_rounds)) if s is not None]
            row["noise"] = max(spreads) if spreads else None
        rows.append(row)
    only = {"reference": sorted(ref_entries.keys() - other_entries.keys()),
            "other": sorted(other_entries.keys() - ref_entries.keys())}
    return rows, only


def verdict(row):
    if row.get("ran_other_config"):
        return "re-timed another config: " + ", ".join(row["ran_other_config"])
    if row["same_config"]:
        return "same config"
    if row.get("noise") is None:
        return "not re-timed"
    if abs(row["retimed_ratio"] - 1) <= row["noise"]:
        return "within noise"
    return "other faster" if row["retimed_ratio"] > 1 else "reference faster"


def report(reference_path, other_path, reference, rows, only, retimed):
    def fmt(value, digits=1):
        return "-" if value is None else f"{value:.{digits}f}"

    device = reference["device"]
    lines = [f"# {os.path.basename(other_path)} (other) beside {os.path.basename(reference_path)} (reference)", "",
             f"Device: {device.get('name')} ({device.get('space')}, {device.get('arch')}). "
             "Tuned GFLOP/s: what each tune recorded for its winner, in its own process."]
    if retimed:
        lines.append("Re-timed: each store's config run by kgemm-run on one GPU, median over rounds; noise = the "
                     "larger of the two stores' round-to-round spreads, (max - min) / median.")
    lines += ["", "| problem | reference config | other config | tuned ref | tuned other | tuned other/ref |"
              + (" re-timed ref | re-timed other | re-timed other/ref | noise |" if retimed else "") + " verdict |",
              "|---|---|---|---:|---:|---:|" + ("---:|---:|---:|---:|" if retimed else "") + "---|"]
    for row in rows:
        cells = [problem_name(row["key"]), f"`{row['ref_config']}`",
                 "same" if row["same_config"] else f"`{row['other_config']}`",
                 fmt(row["ref_gflops"]), fmt(row["other_gflops"]), fmt(row["tuned_ratio"], 3)]
        if retimed:
            noise = row.get("noise")
            cells += [fmt(row.get("ref_retimed")), fmt(row.get("other_retimed")), fmt(row.get("retimed_ratio"), 3),
                      "-" if noise is None else f"{100 * noise:.1f} %"]
        lines.append("| " + " | ".join(cells + [verdict(row)]) + " |")
    tuned = [r["tuned_ratio"] for r in rows]
    same = sum(r["same_config"] for r in rows)
    lines += ["", f"{len(rows)} problems in both stores; the same config on {same}."]
    if tuned:
        lines.append(f"Tuned GFLOP/s, other / reference: geometric mean {geomean(tuned):.3f}, "
                     f"from {min(tuned):.3f} to {max(tuned):.3f}.")
    timed = [r for r in rows if "retimed_ratio" in r]
    if timed:
        ratios = [r["retimed_ratio"] for r in timed]
        verdicts = [verdict(r) for r in timed]
        counts = ", ".join(f"{v} {verdicts.count(v)}" for v in
                           ("same config", "within noise", "other faster", "reference faster") if v in verdicts)
        lines.append(f"Re-timed ({len(timed)} problems), other / reference: geometric mean {geomean(ratios):.3f}, "
                     f"from {min(ratios):.3f} to {max(ratios):.3f}; {counts}.")
    for side, keys in only.items():
        if keys:
            lines.append(f"Only in the {side} store ({len(keys)}): " + ", ".join(problem_name(k) for k in keys) + ".")
    return "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference")
    parser.add_argument("other")
    parser.add_argument("--reference-runs", nargs="+", default=[], metavar="JSON")
    parser.add_argument("--other-runs", nargs="+", default=[], metavar="JSON")
    parser.add_argument("--out", help="write the markdown here instead of standard output")
    args = parser.parse_args(argv)
    if bool(args.reference_runs) != bool(args.other_runs):
        parser.error("give kgemm-run outputs for both stores (--reference-runs and --other-runs) or for neither")
    try:
        reference, other = load_store(args.reference), load_store(args.other)
        if reference["device"] != other["device"]:
            raise Refused(f"the stores are of different devices: {args.reference} holds {reference['device']}, "
                          f"{args.other} holds {other['device']}")
        reference_rates = retimed_rates(args.reference_runs, args.reference)
        other_rates = retimed_rates(args.other_runs, args.other)
    except OtherStoreRun as e:
        print(f"store_compare: {e}", file=sys.stderr)
        return 1
    except Refused as e:
        print(f"store_compare: {e}", file=sys.stderr)
        return 2
    rows, only = compare(reference, other, reference_rates, other_rates)
    text = report(args.reference, args.other, reference, rows, only, bool(args.reference_runs))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 1 if only["reference"] or only["other"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
