#!/usr/bin/python3
"""The host's benchmark run in one command: waits for a quiet machine, runs `ctest -L bench` (kgemm
and KokkosBlas per space, the OpenBLAS peer in its own process and its alone checks, the FMA peak),
writes the report, and records how quiet the machine stayed.

Usage: benchmarks/host_bench.py [--build DIR] [--out-dir DIR] [--max-load L] [--wait S] [--title T]
  --build    the configured and built tree (default: build/openmp)
  --out-dir  where the result files, report.md, charts and conditions.txt go
             (default: DIR/bench-report)
  --max-load start only when the 1-minute load average is at most L (default: 0.5); on a shared
             machine other processes' threads take the cores the benchmarks time
  --wait     seconds to wait for that before giving up (default: 900)
  --max-others  fail when other processes used more than this many cores on average during the
             run (default: 0.25)

conditions.txt: the load averages before and after, and the CPU time that processes other than this
run used while it ran (from /proc/stat less the run's own), as cores on average: near 0 on a
quiet machine. Exit status: ctest's (the alone checks fail a run whose peer was slowed), else 3 when
the machine never got quiet, 4 when other processes took more than --max-others cores during the
run (the timings measured them too: re-run), or the report's when that fails.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/openmp")
    parser.add_argument("--out-dir")
    parser.add_argument("--max-load", type=float, default=0.5)
    parser.add_argument("--wait", type=float, default=900)
    parser.add_argument("--max-others", type=float, default=0.25)
    parser.add_argument("--title", default="kgemm on the host")
    args = parser.parse_args()
    out_dir = args.out_dir or os.path.join(args.build, "bench-report")
    results_dir = os.path.join(args.build, "bench-results")

    before = wait_for_quiet(args.max_load, args.wait)
    if before is None:
        print(f"error: the 1-minute load average stayed above {args.max_load} for {args.wait:.0f} s; "
              "timings now would measure the other processes too", file=sys.stderr)
        return 3
    for stale in glob.glob(os.path.join(results_dir, "*.json")):
        os.remove(stale)
    start_busy, start_children, start = busy_cpu_seconds(), children_cpu_seconds(), time.monotonic()
    ctest = subprocess.run(["ctest", "--test-dir", args.build, "-L", "bench", "--output-on-failure"])
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
                  f"ctest -L bench exit status: {ctest.returncode}\n")
    with open(os.path.join(out_dir, "conditions.txt"), "w", encoding="utf-8") as f:
        f.write(conditions)
    print(conditions, end="")
    if not copies:
        print("error: ctest -L bench left no result file", file=sys.stderr)
        return ctest.returncode or 1
    report = subprocess.run([REPORT, "--out-dir", out_dir, "--title", args.title, *copies])
    if ctest.returncode:
        return ctest.returncode
    if others / wall > args.max_others:
        print(f"error: other processes used {others / wall:.2f} cores during the run (more than "
              f"{args.max_others}): these timings measured them too; re-run on a quiet machine", file=sys.stderr)
        return 4
    return report.returncode


if __name__ == "__main__":
    sys.exit(main())
