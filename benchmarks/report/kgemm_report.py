#!/usr/bin/python3
"""kgemm's benchmark report: markdown tables, PNG charts and a CSV from the JSON result files
that kgemm's benchmarks and its cuBLAS peer write (../RESULTS_SCHEMA.md).

Usage: kgemm_report.py [--out-dir DIR] [--title TEXT] [--log] [--csv] [--summary] RESULT.json [RESULT.json ...]

Writes DIR/report.md, one GFLOP/s-per-layer chart per (op, dtype, set), CPU-vs-GPU charts across
image sizes, fp16-vs-fp32 charts, and with --csv DIR/results.csv; prints every file it wrote, and
with --summary then the report's table of kgemm against the best peer of each row.
Runs with Debian's python3 (python3-matplotlib); the shebang names it because a pyenv python3
without matplotlib may come first on PATH.
"""
import argparse
import csv
import os
import sys

import charts
import markdown_tables
from results import ReportError, group_by, load_peaks, load_results

CSV_COLUMNS = ("op", "impl", "space", "dtype", "set", "shape", "M", "N", "K", "batch", "gflops", "time_us",
               "launch_us", "call_us", "transfer_us", "label")


def write_csv(path, results):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        for r in results:
            writer.writerow(["" if getattr(r, c) is None else getattr(r, c) for c in CSV_COLUMNS])
    return path


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", metavar="RESULT.json", help="Google Benchmark JSON files")
    parser.add_argument("--out-dir", default="kgemm-report", help="where to write (default: %(default)s)")
    parser.add_argument("--title", default="kgemm benchmark report", help="the report's heading")
    parser.add_argument("--log", action="store_true",
                        help="log-scale y axis on the per-layer charts (CPU and GPU bars on one chart)")
    parser.add_argument("--csv", action="store_true", help="also write DIR/results.csv, one row per result")
    parser.add_argument("--summary", action="store_true",
                        help="also print the table of kgemm against the best peer of each row")
    return parser.parse_args()


def main():
    args = parse_arguments()
    try:
        results = load_results(args.results)
        peaks = load_peaks(args.results)
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not results:
        print("error: no entry in the given files follows RESULTS_SCHEMA.md", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    tables = group_by(results, lambda r: (r.op, r.dtype, r.set))
    table_charts, comparison_charts = charts.write_charts(args.out_dir, results, tables, args.log, peaks)
    report = os.path.join(args.out_dir, "report.md")
    markdown_tables.write_report(report, args.title, args.results, tables, table_charts, comparison_charts, peaks)
    written = [report, *table_charts.values(), *comparison_charts]
    if args.csv:
        written.append(write_csv(os.path.join(args.out_dir, "results.csv"), results))
    print("\n".join(written))
    if args.summary:
        summary = markdown_tables.best_peer_summary(tables) or ["none: no space has both kgemm and a peer"]
        print("\n".join(["", "kgemm against the best peer of each row:", *summary]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
