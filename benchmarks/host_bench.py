#!/usr/bin/python3
"""The host's benchmark run in one command: waits for a quiet machine, runs `ctest -L bench` (kgemm
and KokkosBlas per space, every host CBLAS peer that was built (OpenBLAS; MKL, BLIS) in a process of
its own and their alone checks, the FMA peak), writes the report, prints its table of kgemm against
the best peer of each row, and records how quiet the machine stayed.

Usage: benchmarks/host_bench.py [--build DIR] [--out-dir DIR] [--max-load L] [--wait S] [--title T]
                                [--rounds N] [--tests REGEX]
  --build    the configured and built tree (default: build/openmp)
  --out-dir  where the result files, report.md, charts and conditions.txt go
             (default: DIR/bench-report)
  --rounds   run it all N times, one round after another (each into DIR/roundI/), so that kgemm and
             its peers alternate and a slow moment of the machine shows as one round's outlier;
             DIR/rounds.md then has each table's geomeans per impl and round (default: 1). Only the
             first round waits for --max-load; each round is checked against --max-others
  --tests    only the bench tests whose names match REGEX (ctest -R), e.g.
             '^bench[.](gemm|openblas|mkl|blis|fma_peak)' for the GEMM rows and their peers
  --max-load start only when the 1-minute load average is at most L (default: 0.5); on a shared
             machine other processes' threads take the cores the benchmarks time
  --wait     seconds to wait for that before giving up (default: 900)
  --max-others  fail when other processes used more than this many cores on average during the
             run (default: 0.25)

conditions.txt: the load averages before and after, and the CPU time that processes other than this
run used while it ran (from /proc/stat less the run's own), as cores on average: near 0 on a
quiet machine. Exit status: ctest's (the alone checks fail a run whose peer was slowed), else 3 when
the machine never got quiet, 4 when other processes took more than --max-others cores during the
run (the timings measured them too: re-run), or the report's when that fails; with rounds, the
first round's that is not 0.
"""
import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "report", "kgemm_report.py")
sys.path.insert(0, os.path.join(HERE, "report"))
from markdown_tables import markdown_table  # noqa: E402 (the report's modules, beside this file)
from results import ReportError, geomean, group_by, load_results, series_sort_key  # noqa: E402


def load_average():
    with open("/proc/loadavg", encoding="ascii") as f:
        return tuple(float(x) for x in f.read().split()[:3])


def busy_cpu_seconds():
    """CPU time all processes have used since boot (the `cpu` line of /proc/stat less idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wait_for_quiet(max_load, wait_s):
    deadline = time.monotonic() + wait_s
    while True:
        load = load_average()
        if load[0] <= max_load:
            return load
        if time.monotonic() >= deadline:
            return None
        print(f"load average {load[0]:.2f} > {max_load}: waiting", flush=True)
        time.sleep(15)


def run_round(args, out_dir, results_dir, wait=True):
    """One `ctest -L bench` and its report into out_dir; returns its exit status (see the usage).
    Without `wait` it starts at once: a round right after another finds the load that one left."""
    before = wait_for_quiet(args.max_load, args.wait) if wait else load_average()
    if before is None:
        print(f"error: the 1-minute load average stayed above {args.max_load} for {args.wait:.0f} s; "
              "timings now would measure the other processes too", file=sys.stderr)
        return 3
    for stale in glob.glob(os.path.join(results_dir, "*.json")):
        os.remove(stale)
    selection = ["-R", args.tests] if args.tests else []
    start_busy, start_children, start = busy_cpu_seconds(), children_cpu_seconds(), time.monotonic()
    ctest = subprocess.run(["ctest", "--test-dir", args.build, "-L", "bench", *selection, "--output-on-failure"])
    wall = time.monotonic() - start
    others = (busy_cpu_seconds() - start_busy) - (children_cpu_seconds() - start_children)
    after = load_average()

    os.makedirs(out_dir, exist_ok=True)
    results = sorted(glob.glob(os.path.join(results_dir, "*.json")))
    for path in results:
        shutil.copy(path, out_dir)
    copies = [os.path.join(out_dir, os.path.basename(path)) for path in results]
    conditions = (f"load average before: {' '.join(f'{x:.2f}' for x in before)}\n"
                  f"load average after:  {' '.join(f'{x:.2f}' for x in after)}\n"
                  f"run: {wall:.0f} s; other processes used {others:.1f} CPU s meanwhile "
                  f"({others / wall:.2f} cores on average)\n"
                  f"ctest -L bench{' -R ' + args.tests if args.tests else ''} exit status: {ctest.returncode}\n")
    with open(os.path.join(out_dir, "conditions.txt"), "w", encoding="utf-8") as f:
        f.write(conditions)
    print(conditions, end="")
    if not copies:
        print("error: ctest -L bench left no result file", file=sys.stderr)
        return ctest.returncode or 1
    report = subprocess.run([REPORT, "--out-dir", out_dir, "--title", args.title, "--summary", *copies])
    if ctest.returncode:
        return ctest.returncode
    if others / wall > args.max_others:
        print(f"error: other processes used {others / wall:.2f} cores during the run (more than "
              f"{args.max_others}): these timings measured them too; re-run on a quiet machine", file=sys.stderr)
        return 4
    return report.returncode


def rounds_table(round_dirs):
    """Markdown: per (op, dtype, set, space) and impl, the geomean GFLOP/s of each round, side by side."""
    geomeans = {}
    for index, directory in enumerate(round_dirs):
        paths = sorted(glob.glob(os.path.join(directory, "*.json")))
        try:
            results = load_results(paths) if paths else []
        except ReportError as e:
            print(f"warning: round {index + 1}: {e}", file=sys.stderr)
            continue
        for key, rs in group_by(results, lambda r: (r.op, r.dtype, r.set, r.space, r.impl)).items():
            geomeans.setdefault(key, {})[index] = geomean(r.gflops for r in rs)
    header = ["table", "space", "impl"] + [f"round {i + 1}" for i in range(len(round_dirs))]
    rows = []
    for (op, dtype, set_name, space, impl), by_round in sorted(
            geomeans.items(), key=lambda item: (item[0][:3], series_sort_key(item[0][4:2:-1]))):
        rows.append([f"{op} · {dtype} · {set_name}", space, impl]
                    + [f"{by_round[i]:.1f}" if i in by_round else "-" for i in range(len(round_dirs))])
    return markdown_table(header, rows, 3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/openmp")
    parser.add_argument("--out-dir")
    parser.add_argument("--max-load", type=float, default=0.5)
    parser.add_argument("--wait", type=float, default=900)
    parser.add_argument("--max-others", type=float, default=0.25)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--tests")
    parser.add_argument("--title", default="kgemm on the host")
    args = parser.parse_args()
    out_dir = args.out_dir or os.path.join(args.build, "bench-report")
    results_dir = os.path.join(args.build, "bench-results")
    if args.rounds == 1:
        return run_round(args, out_dir, results_dir)

    round_dirs = [os.path.join(out_dir, f"round{i + 1}") for i in range(args.rounds)]
    statuses = []
    for index, directory in enumerate(round_dirs):
        print(f"=== round {index + 1} of {args.rounds}", flush=True)
        statuses.append(run_round(args, directory, results_dir, wait=index == 0))
    table = rounds_table(round_dirs)
    lines = [f"# {args.title}: geomean GFLOP/s per round", "",
             "Rounds of the same `ctest -L bench` run one after another (each impl once a round), exit statuses "
             + ", ".join(map(str, statuses)) + "; each round's report and conditions.txt are in roundN/.", ""] + table
    with open(os.path.join(out_dir, "rounds.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(["", *table]))
    return next((status for status in statuses if status), 0)


if __name__ == "__main__":
    sys.exit(main())
