#!/usr/bin/python3
"""The tuner's search quality, replayed: the benchmark of docs/tuning.md's replay tables.

Usage:
  benchmarks/search_quality.py [--compare BIN] [--budgets 4,8,20,40] [--seeds 20]
                               [--sets others,committed,held] [--work DIR] [--out FILE]

Every problem of the caches below was measured exhaustively on its device (every candidate once,
the leaders re-timed: `autotune --strategy exhaustive --cache`, `autotune retime`). The caches
live in this repository's git history, named by commit and path (docs/results keeps a hundred
files); they are written out of git into --work and replayed with kgemm-compare-strategies: the
default strategy (climb) at each budget, 20 seeds, what autotune keeps over what exhaustive search
keeps. Three sets of starts:

  others     each replay cache, each problem's search started from a store of the cache's other
             problems (a shape tuned where its neighbours are);
  committed  the replay caches, from the committed store of the cache's device (a GPU's with its
             sibling GPU's store), less each problem's own entry (a new shape tuned today);
  held       the held-out caches (sets measured live, in no store's tuning), as committed.

Per set, a Markdown table: per cache and budget the geometric mean (worst problem and seed) and
the problems whose every seed reaches 0.98; then the totals. Nothing here is timed: the numbers
are the caches', so they repeat on any machine with the same build. Exit status 0 whatever they
are; 1 only when a cache or the tool cannot be read or run (the reason on stderr).
"""
import argparse
import lzma
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The caches: name, commit, path, device (a key of STORES), role (replay or held).
CACHES = [
    ("h200-hold", "8ee6f44", "docs/results/h100/2026-11-29-s37-hold/exhaustive-h200-hold.tsv.xz", "h200", "replay"),
    ("h200-r50-i320-b2", "ef3ca2a", "docs/results/h100/2026-11-28-s33-live/exhaustive-h200-r50-i320-b2.tsv.xz", "h200", "replay"),
    ("h200-r50-i160-b16", "ff4714e", "docs/results/h100/2026-11-28-s34-live/exhaustive-h200-r50-i160-b16.tsv.xz", "h200", "replay"),
    ("h200-r50-i224-b32", "47331bd", "docs/results/h100/2026-11-28-s35-live/exhaustive-h200-r50-i224-b32.tsv.xz", "h200", "replay"),
    ("h200-r50-i288-b8", "39a83be", "docs/results/h100/2026-11-28-s35-live/exhaustive-h200-r50-i288-b8.tsv.xz", "h200", "replay"),
    ("h200-r50-i256-b4", "e238e34", "docs/results/h100/2026-11-28-s36-repeat/exhaustive-a-r50-i256-b4.tsv.xz", "h200", "replay"),
    ("h200-r18-i256-b8", "8ee6f44", "docs/results/h100/2026-11-29-s37-hold/fresh-h200-r18-i256-b8.tsv.xz", "h200", "replay"),
    ("h200-r34-i224-b4", "f9590b2", "docs/results/h100/2026-11-29-s37-hold/fresh-h200-r34-i224-b4.tsv.xz", "h200", "replay"),
    ("h200-r18-i192-b16", "830eee6", "docs/results/h100/2026-11-29-s38-runners-up/fresh-h200-r18-i192-b16.tsv.xz", "h200", "replay"),
    ("h200-r34-i320-b2", "c6df658", "docs/results/h100/2026-11-29-s38-runners-up/fresh-h200-r34-i320-b2.tsv.xz", "h200", "replay"),
    ("h200-r50-i192-b4", "0771fd3", "docs/results/h100/2026-11-29-s38-runners-up/fresh-h200-r50-i192-b4.tsv.xz", "h200", "replay"),
    ("h200-r18-i288-b4", "c3916a2", "docs/results/h100/2026-11-29-s38-runners-up/fresh-h200-r18-i288-b4.tsv.xz", "h200", "replay"),
    ("h100-hold", "fec6063", "docs/results/h100/2026-12-06-s39-h100-hold/exhaustive-h100-hold.tsv.xz", "h100", "replay"),
    ("h100-r34-i256-b8", "fec6063", "docs/results/h100/2026-12-06-s39-h100-hold/fresh-h100-r34-i256-b8.tsv.xz", "h100", "replay"),
    ("epyc-r50-b1", "7ca00c5", "docs/results/openmp/2026-11-28-s33-tuner/exhaustive-epyc-r50-b1.tsv.xz", "epyc", "replay"),
    ("epyc-zen5", "77db055", "docs/results/openmp/2026-11-28-s33-tuner/exhaustive-epyc-zen5-s37.tsv.xz", "epyc", "replay"),
    ("epyc-r50-i160", "1ef71c9", "docs/results/openmp/2026-11-28-s33-tuner/exhaustive-epyc-r50-i160.tsv.xz", "epyc", "replay"),
    ("epyc-r50-i192", "1ef71c9", "docs/results/openmp/2026-11-28-s33-tuner/exhaustive-epyc-r50-i192.tsv.xz", "epyc", "replay"),
    ("h100-r18-i224-b16", "1b2c8d8", "docs/results/h100/2026-12-06-s39-h100-hold/fresh-h100-r18-i224-b16.tsv.xz", "h100", "held"),
    ("h100-r34-i288-b2", "915f333", "docs/results/h100/2026-12-06-s40-h100-store/fresh-h100-r34-i288-b2.tsv.xz", "h100", "held"),
    ("h100-r18-i384-b2", "38b639b", "docs/results/h100/2026-12-06-s40-h100-store/fresh-h100-r18-i384-b2.tsv.xz", "h100", "held"),
    ("h100-r50-i160-b4", "38b639b", "docs/results/h100/2026-12-06-s40-h100-store/fresh-h100-r50-i160-b4.tsv.xz", "h100", "held"),
    ("h100-r34-i160-b8", "0fec9b8", "docs/results/h100/2026-12-06-s40-h100-store/fresh-h100-r34-i160-b8.tsv.xz", "h100", "held"),
    ("h100-r18-i320-b4", "0fec9b8", "docs/results/h100/2026-12-06-s40-h100-store/fresh-h100-r18-i320-b4.tsv.xz", "h100", "held"),
    ("epyc-r18-i256", "1ef71c9", "docs/results/openmp/2026-11-28-s33-tuner/exhaustive-epyc-r18-i256.tsv.xz", "epyc", "held"),
]

# A device's committed store and its sibling's (configs/): a GPU's is another GPU of its
# architecture; a host has none (a host's rates move with cache sizes another CPU's lack).
STORES = {
    "h200": ("cuda-nvidia-h200.yaml", "cuda-nvidia-h100-80gb-hbm3.yaml"),
    "h100": ("cuda-nvidia-h100-80gb-hbm3.yaml", "cuda-nvidia-h200.yaml"),
    "epyc": ("openmp-amd-epyc-2t.yaml", None),
}

ROW = re.compile(r"^\| climb \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| (\d+) of (\d+) \|")


def fail(message):
    print("search_quality.py: " + message, file=sys.stderr)
    sys.exit(1)


def write_cache(name, commit, path, work):
    """The cache out of git history into work/NAME.tsv (once)."""
    out = os.path.join(work, name + ".tsv")
    if os.path.exists(out):
        return out
    shown = subprocess.run(["git", "-C", REPO, "show", "%s:%s" % (commit, path)], capture_output=True)
    if shown.returncode != 0:
        fail("cannot read %s:%s from git history (%s); the caches need a clone with its history"
             % (commit, path, shown.stderr.decode().strip()))
    with open(out + ".part", "wb") as f:
        f.write(lzma.decompress(shown.stdout))
    os.replace(out + ".part", out)
    return out


def replay(compare, cache, budgets, seeds, stores):
    """{budget: (geomean, worst, reached, problems)} of the climb on one cache."""
    command = [compare, "--cache", cache, "--budgets", ",".join(map(str, budgets)), "--seeds", str(seeds),
               "--strategies", "climb"]
    if stores:
        command += ["--store", os.path.join(REPO, "configs", stores[0])]
        if stores[1]:
            command += ["--sibling-store", os.path.join(REPO, "configs", stores[1])]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        fail("%s failed (exit %d): %s" % (" ".join(command), run.returncode, run.stderr.strip()[-2000:]))
    cells = {}
    for line in run.stdout.splitlines():
        m = ROW.match(line)
        if m:
            cells[int(m.group(1))] = (float(m.group(2)), float(m.group(3)), int(m.group(4)), int(m.group(5)))
    if sorted(cells) != sorted(budgets):
        fail("%s printed no row for every budget:\n%s" % (" ".join(command), run.stdout[-2000:]))
    return cells


def table(title, rows, budgets):
    lines = ["### " + title, "",
             "| cache | problems | " + " | ".join("budget %d" % b for b in budgets) + " |",
             "|---|--:|" + "--:|" * len(budgets)]
    for name, cells in rows:
        n = cells[budgets[0]][3]
        lines.append("| %s | %d | " % (name, n) + " | ".join(
            "%.3f (%.3f), %d" % (cells[b][0], cells[b][1], cells[b][2]) for b in budgets) + " |")
    total = sum(cells[budgets[0]][3] for _, cells in rows)
    lines.append("| **all** | %d | " % total + " | ".join(
        "**%d**, %d of %d at >= 0.995" % (sum(c[b][2] for _, c in rows), sum(c[b][0] >= 0.995 for _, c in rows), len(rows))
        for b in budgets) + " |")
    lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compare", default=os.path.join(REPO, "build", "openmp", "tools", "kgemm-compare-strategies"),
                        help="the kgemm-compare-strategies binary")
    parser.add_argument("--budgets", default="4,8,20,40")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--sets", default="others,committed,held")
    parser.add_argument("--work", default=os.path.join(REPO, "build", "search-quality"),
                        help="where the caches are written out of git history")
    parser.add_argument("--out", help="also write the tables to this file")
    args = parser.parse_args()
    try:
        budgets = [int(b) for b in args.budgets.split(",")]
    except ValueError:
        fail("--budgets: '%s' is not a comma-separated list of evaluation counts" % args.budgets)
    if not budgets or min(budgets) < 1 or args.seeds < 1:
        fail("--budgets and --seeds take counts of 1 or more")
    sets = args.sets.split(",")
    unknown = [s for s in sets if s not in ("others", "committed", "held")]
    if unknown:
        fail("--sets: unknown set '%s' (others, committed, held)" % unknown[0])
    if not os.access(args.compare, os.X_OK):
        fail("no kgemm-compare-strategies at %s (build the tools, or pass --compare)" % args.compare)
    os.makedirs(args.work, exist_ok=True)

    report = ["## Search quality at budgets %s (climb, %d seeds; cells: geometric mean (worst), problems "
              "at 0.98 in every seed)" % (args.budgets, args.seeds), ""]
    titles = {"others": "From a store of each cache's other problems",
              "committed": "From the committed stores (a GPU's with its sibling's), less each problem's own entry",
              "held": "Held out (live sets), from the committed stores (a GPU's with its sibling's)"}
    for s in sets:
        rows = []
        for name, commit, path, device, role in CACHES:
            if (role == "held") != (s == "held") or (s != "others" and device not in STORES):
                continue
            cache = write_cache(name, commit, path, args.work)
            rows.append((name, replay(args.compare, cache, budgets, args.seeds, STORES.get(device) if s != "others" else None)))
        report.append(table(titles[s], rows, budgets))
    text = "\n".join(report)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
