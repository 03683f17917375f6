#!/usr/bin/python3
"""Checks that a benchmark run measured a peer at the speed the peer reaches alone.

A peer timed while another runtime's threads share its cores (Kokkos' spinning OpenMP threads,
another build on the machine) reaches a fraction of its speed, and every kgemm/peer ratio of that
run flatters kgemm. This runs the peer's program again, now, as a process of its own, and compares
each of its rows with the same-named row of the run's result files: in-run GFLOP/s / alone GFLOP/s.

Usage: peer_alone_check.py [--min-ratio R] RESULT.json [RESULT.json ...] -- PEER_COMMAND [ARG ...]
  PEER_COMMAND writes Google Benchmark JSON (--benchmark_out=FILE --benchmark_out_format=json are
  appended), e.g. build/openmp/benchmarks/kgemm-openblas-peer --threads 1

Prints one line per row compared. Exit status: 0 when the geometric mean of the ratios is at least R
(default 0.8), 1 when it is below (the run measured the peer slower than it is alone: re-measure on
a quiet machine, and see that nothing runs beside the peer), 2 when the peer fails or no row of its
output is in the result files.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from results import ReportError, geomean, load_results


def parse_arguments(argv):
    if "--" not in argv:
        print(__doc__.split("\n\n")[2], file=sys.stderr)
        sys.exit(2)
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", metavar="RESULT.json", help="the run's Google Benchmark JSON files")
    parser.add_argument("--min-ratio", type=float, default=0.8,
                        help="least in-run / alone geometric mean that passes (default: %(default)s)")
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1:]
    if not args.command:
        parser.error("no peer command after --")
    return args


def rates(results):
    return {(r.op, r.impl, r.space, r.dtype, r.set, r.shape): r.gflops for r in results}


def run_alone(command):
    """The peer's rows from a fresh run of `command`, or ReportError saying why there are none."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "alone.json")
        run = subprocess.run([*command, f"--benchmark_out={out}", "--benchmark_out_format=json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            raise ReportError(f"{command[0]} failed ({run.returncode}): {run.stderr.strip()}")
        return rates(load_results([out]))


def main(argv):
    args = parse_arguments(argv)
    try:
        in_run = rates(load_results(args.results))
        alone = run_alone(args.command)
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    common = [key for key in alone if key in in_run]
    if not common:
        print(f"error: none of the {len(alone)} rows of {args.command[0]} is in {', '.join(args.results)}",
              file=sys.stderr)
        return 2
    ratios = []
    print(f"{'row':70} {'in run':>9} {'alone':>9} {'ratio':>6}")
    for key in common:
        ratios.append(in_run[key] / alone[key])
        flag = "  below" if ratios[-1] < args.min_ratio else ""
        print(f"{'/'.join(key):70} {in_run[key]:9.1f} {alone[key]:9.1f} {ratios[-1]:6.2f}{flag}")
    mean = geomean(ratios)
    passed = mean >= args.min_ratio
    print(f"geometric mean in run / alone over {len(ratios)} rows: {mean:.2f} "
          f"({'at least' if passed else 'below'} {args.min_ratio})")
    if not passed:
        print("the run measured the peer slower than it is alone: something shared its cores; "
              "re-measure on a quiet machine", file=sys.stderr)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
