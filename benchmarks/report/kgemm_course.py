#!/usr/bin/python3
"""kgemm-course: the course's whole experiment in one command.

Runs kgemm-run once, in one process (every space, dtype, image size and batch, CPU and GPU side by
side), with --format json, and writes into --out:
  course.md        the forward-pass table (seconds per image size, one column per space), where the
                   time goes (kernel / launch / call / transfer), fp16 vs fp32 (speed-up and error),
                   per run the per-layer table, and the charts
  course.csv       kgemm-run's CSV columns: a row per layer and a forward-pass row per run
  kgemm-run.json   kgemm-run's own output
  PNG charts       forward time against image size (one line per space and dtype), GFLOP/s per layer,
                   GFLOP/s by image size and fp16 vs fp32 speed (charts.py, as kgemm_report.py draws
                   them), fp16 vs fp32 error per layer
kgemm-run prints a progress line per layer on stderr.

Example: kgemm_course.py --model resnet18 --image 224,512,1024 --batch 1,128 --dtype fp32,fp16 \\
             --space openmp,cuda --out report/
Runs with Debian's python3 (python3-matplotlib); the shebang names it because a pyenv python3
without matplotlib may come first on PATH.
"""
import argparse
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

import charts
from markdown_tables import markdown_table
from results import Result, group_by, series_sort_key

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
CSV_COLUMNS = ("row", "space", "device", "dtype", "set", "model", "image", "batch", "layer", "m", "n", "k", "count",
               "config", "kernel_ms", "launch_ms", "call_ms", "transfer_ms", "gflops", "max_rel_err", "mean_rel_err",
               "forward_ms", "forward_s")
TIME_KEYS = ("kernel_ms", "launch_ms", "call_ms", "transfer_ms")

EXPLANATION = """\
Times are medians of kgemm-run's repetitions, per call. **kernel** is the call's work (on a GPU: CUDA
events around a call queued behind another, so the host's launch is not in it; on a CPU: the call
between fences). **launch** is the host's time until the call returns, on an idle space: on a GPU the
cost of starting the kernels, on a CPU the whole call (the work runs inside it). **call** is launch to
completion, what a host clock around a call and a synchronisation sees: on a GPU, call − kernel is the
launch and synchronisation overhead. **transfer** is A and B copied to the device and C back once; 0
on CPU spaces, whose operands are in host memory already. The **forward pass** is the sum over the
layers of count × time (count: how many of the model's convolutions have that GEMM shape); its
seconds are the number practice 002 asks for. Errors are over 16 sampled rows of each output
against the fp64 product of the inputs as generated (before rounding to fp16): max |C − C64| /
max |C64| and mean |C − C64| / mean |C64|."""


class CourseError(Exception):
    """A problem that stops the course run; the message says what and why."""


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Kokkos' flags (--kokkos-num-threads=N, --kokkos-device-id=N) go to kgemm-run.")
    parser.add_argument("--out", required=True, help="directory for the report (created if missing)")
    parser.add_argument("--kgemm-run", help="the kgemm-run binary (default: the one build/<preset>/tools/ of "
                                            "this source tree holds, else kgemm-run on PATH)")
    parser.add_argument("--space", help="spaces, e.g. openmp,cuda (default: kgemm-run's)")
    parser.add_argument("--model", help="resnet18 | resnet34 | resnet50 (default: kgemm-run's, resnet50)")
    parser.add_argument("--shape", help="GEMM shapes MxNxK instead of a model, comma-separated")
    parser.add_argument("--image", help="image sides, e.g. 224,512,1024")
    parser.add_argument("--batch", help="batch sizes, e.g. 1,128")
    parser.add_argument("--dtype", help="fp32,fp16")
    parser.add_argument("--reps", help="timed repetitions per layer (kgemm-run's --reps)")
    parser.add_argument("--title", default="kgemm course report", help="the report's heading")
    args, rest = parser.parse_known_args()
    unknown = [word for word in rest if not word.startswith("--kokkos-")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args, rest


def find_kgemm_run(given):
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise CourseError(f"--kgemm-run {given}: not an executable file")
        return given
    built = sorted(glob.glob(os.path.join(SOURCE_ROOT, "build", "*", "tools", "kgemm-run")))
    if len(built) > 1:
        raise CourseError("several builds hold kgemm-run (" + ", ".join(built) + "); choose one with --kgemm-run")
    found = built[0] if built else shutil.which("kgemm-run")
    if not found:
        raise CourseError("no kgemm-run under build/*/tools/ or on PATH; build it (cmake --workflow --preset openmp) "
                          "or name it with --kgemm-run")
    return found


def run_kgemm_run(binary, args, kokkos_flags, out_dir):
    command = [binary, "--format", "json", "--progress"]
    for option in ("space", "model", "shape", "image", "batch", "dtype", "reps"):
        value = getattr(args, option)
        if value is not None:
            command += [f"--{option}", value]
    command += kokkos_flags
    print("kgemm-course: " + " ".join(command), file=sys.stderr, flush=True)
    run = subprocess.run(command, stdout=subprocess.PIPE, text=True)  # stderr (progress, errors) passes through
    if run.returncode != 0:
        raise CourseError(f"kgemm-run failed (exit status {run.returncode}); its message is above")
    path = os.path.join(out_dir, "kgemm-run.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(run.stdout)
    try:
        document = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        raise CourseError(f"kgemm-run's output is not JSON ({e}); kept in {path}") from e
    if not document.get("runs"):
        raise CourseError(f"kgemm-run ran nothing; its output is in {path}")
    return command, document, path


def forward_label(run):
    return "forward pass" if run["model"] else "all shapes"


def csv_rows(runs):
    for run in runs:
        common = {key: run[key] for key in ("space", "device", "dtype", "set", "batch")}
        common.update(model=run["model"] or "", image=run["image"] or "")
        for layer in run["layers"]:
            share = layer["count"] * layer["kernel_ms"]
            yield dict(common, row="layer", **{key: layer[key] for key in ("layer", "m", "n", "k", "count", "config")},
                       **{key: layer[key] for key in (*TIME_KEYS, "gflops", "max_rel_err", "mean_rel_err")},
                       forward_ms=share, forward_s=share / 1e3)
        forward = run["forward"]
        yield dict(common, row="forward", layer=forward_label(run), count=forward["gemms"],
                   **{key: forward[key] for key in (*TIME_KEYS, "gflops", "max_rel_err", "mean_rel_err")},
                   forward_ms=forward["kernel_ms"], forward_s=forward["kernel_s"])


def write_csv(path, runs):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(csv_rows(runs))
    return path


def as_results(runs):
    """Layer rows as the report code's Results (one series per space), for its charts and tables."""
    results = []
    for run in runs:
        for layer in run["layers"]:
            m, n, k = layer["m"], layer["n"], layer["k"]
            results.append(Result(
                op="gemm", impl="kgemm", space=run["space"], dtype=run["dtype"], set=run["set"], shape=f"m{m}_n{n}_k{k}",
                M=m, N=n, K=k, batch=1, gflops=layer["gflops"], time_us=1e3 * layer["kernel_ms"],
                launch_us=1e3 * layer["launch_ms"], call_us=1e3 * layer["call_ms"],
                transfer_us=1e3 * layer["transfer_ms"], label=f"{layer['layer']} {layer['config']}"))
    return results


def spaces_in_order(runs):
    """(space, Kokkos' name for it) of every space measured, CPU spaces before the GPU."""
    names = {run["space"]: run["space_label"] for run in runs}
    return sorted(names.items(), key=lambda item: series_sort_key(("kgemm", item[0])))


def error_text(value):
    return "-" if value is None else f"{value:.2e}"


def forward_table(runs):
    """Practice 002's table: forward-pass seconds per set and dtype, one column per space."""
    spaces = spaces_in_order(runs)
    by_cell = {(run["set"], run["dtype"], run["space"]): run for run in runs}
    header = ["model", "image", "batch", "dtype"] + [f"{label} (s)" for _, label in spaces]
    if len(spaces) == 2:
        header.append(f"{spaces[0][1]} / {spaces[1][1]}")
    rows = []
    for (set_name, dtype), group in group_by(runs, lambda r: (r["set"], r["dtype"])).items():
        first = group[0]
        seconds = [by_cell[set_name, dtype, space]["forward"]["kernel_s"] if (set_name, dtype, space) in by_cell
                   else None for space, _ in spaces]
        cells = [first["model"] or "shapes", f"{first['image']}x{first['image']}" if first["image"] else "-",
                 str(first["batch"]), dtype] + ["-" if s is None else f"{s:.6f}" for s in seconds]
        if len(spaces) == 2:
            cells.append(f"{seconds[0] / seconds[1]:.2f}" if None not in seconds else "-")
        rows.append(cells)
    return markdown_table(header, rows, 4)


def overhead_totals_table(runs):
    header = ["space", "dtype", "set", "GEMMs", "kernel ms", "launch ms", "call ms", "transfer ms", "GFLOP/s"]
    rows = [[run["space_label"], run["dtype"], run["set"], str(run["forward"]["gemms"])]
            + [f"{run['forward'][key]:.3f}" for key in TIME_KEYS] + [f"{run['forward']['gflops']:.1f}"]
            for run in runs]
    return markdown_table(header, rows, 3)


def dtype_pairs(runs):
    """(fp32 run, fp16 run) of the same space and set."""
    by_key = {(run["space"], run["set"], run["dtype"]): run for run in runs}
    return [(run, by_key[run["space"], run["set"], "fp16"]) for run in runs
            if run["dtype"] == "fp32" and (run["space"], run["set"], "fp16") in by_key]


def dtype_table(pairs):
    header = ["space", "set", "fp32 s", "fp16 s", "fp16 speed-up", "fp32 max err", "fp16 max err", "fp32 mean err",
              "fp16 mean err"]
    rows = []
    for fp32, fp16 in pairs:
        a, b = fp32["forward"], fp16["forward"]
        rows.append([fp32["space_label"], fp32["set"], f"{a['kernel_s']:.6f}", f"{b['kernel_s']:.6f}",
                     f"{a['kernel_s'] / b['kernel_s']:.2f}", error_text(a["max_rel_err"]), error_text(b["max_rel_err"]),
                     error_text(a["mean_rel_err"]), error_text(b["mean_rel_err"])])
    return markdown_table(header, rows, 2)


def layer_table(run):
    header = ["layer", "M×N×K", "count", "config", "kernel ms", "launch ms", "call ms", "transfer ms", "GFLOP/s",
              "max rel err", "mean rel err", "share of the pass"]
    total = run["forward"]["kernel_ms"]
    rows = [[layer["layer"], f"{layer['m']}×{layer['n']}×{layer['k']}", str(layer["count"]), f"`{layer['config']}`"]
            + [f"{layer[key]:.3f}" for key in TIME_KEYS] + [f"{layer['gflops']:.1f}"]
            + [error_text(layer["max_rel_err"]), error_text(layer["mean_rel_err"]),
               f"{100 * layer['count'] * layer['kernel_ms'] / total:.1f} %"] for layer in run["layers"]]
    forward = run["forward"]
    rows.append([f"**{forward_label(run)}**", "", str(forward["gemms"]), ""]
                + [f"**{forward[key]:.3f}**" for key in TIME_KEYS] + [f"{forward['gflops']:.1f}"]
                + [error_text(forward["max_rel_err"]), error_text(forward["mean_rel_err"]), "100 %"])
    return markdown_table(header, rows, 4)


def forward_charts(out_dir, runs):
    """Per model and batch measured at several image sizes: forward seconds by image, a line per space and dtype."""
    paths = []
    for (model, batch), group in group_by([r for r in runs if r["model"]], lambda r: (r["model"], r["batch"])).items():
        by_series = {}
        for run in group:
            by_series.setdefault(f"{run['space_label']} {run['dtype']}", {})[run["image"]] = run["forward"]["kernel_s"]
        if len({run["image"] for run in group}) >= 2:
            paths.append(charts.forward_time_chart(out_dir, f"forward_time_{model}_b{batch}",
                                                   f"{model}, batch {batch}: forward pass by image size", by_series))
    return paths


def error_charts(out_dir, pairs):
    paths = []
    for fp32, fp16 in pairs:
        layers = [layer["layer"] for layer in fp32["layers"]]
        by_series = {f"{dtype} {kind}": [layer[f"{kind}_rel_err"] for layer in run["layers"]]
                     for dtype, run in (("fp32", fp32), ("fp16", fp16)) for kind in ("max", "mean")}
        paths.append(charts.error_chart(out_dir, f"error_{fp32['space']}_{fp32['set']}",
                                        f"{fp32['space_label']} {fp32['set']}: fp16 vs fp32 error per layer",
                                        layers, by_series))
    return paths


def write_markdown(path, title, command, document, runs, pairs, chart_paths):
    forward_pngs, error_pngs, layer_pngs, comparison_pngs = chart_paths
    devices = sorted({f"{run['space_label']}: {run['device']} ({run['threads']} "
                      f"{'threads' if run['operands_in_host_memory'] else 'SMs'})" for run in runs})
    image = lambda p: f"![{os.path.basename(p)}]({os.path.basename(p)})"  # noqa: E731
    lines = [f"# {title}", "", f"Command: `{' '.join(command)}` (Kokkos {document['kokkos_version']}, "
             f"{document['reps']} repetitions per layer).", "", "Devices: " + "; ".join(devices) + ".", "",
             EXPLANATION, "", "## Forward pass", ""] + forward_table(runs)
    lines += [""] + [image(p) for p in forward_pngs]
    lines += ["", "## Where the time goes (per forward pass: count × time, summed)", ""] + overhead_totals_table(runs)
    if pairs:
        lines += ["", "## fp16 vs fp32: speed and error", ""] + dtype_table(pairs)
        lines += [""] + [image(p) for p in error_pngs + comparison_pngs]
    lines += ["", "## Per layer"]
    for run in runs:
        lines += ["", f"### {run['space_label']} · {run['dtype']} · {run['set']}", ""] + layer_table(run)
    for p in layer_pngs:
        lines += ["", image(p)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def main():
    args, kokkos_flags = parse_arguments()
    try:
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise CourseError(f"--out {args.out}: exists and is not a directory")
        binary = find_kgemm_run(args.kgemm_run)
        os.makedirs(args.out, exist_ok=True)
        command, document, json_path = run_kgemm_run(binary, args, kokkos_flags, args.out)
    except (CourseError, OSError) as e:
        print(f"kgemm-course: {e}", file=sys.stderr)
        return 1
    runs = document["runs"]
    results = as_results(runs)
    tables = group_by(results, lambda r: (r.op, r.dtype, r.set))
    layer_pngs, comparison_pngs = charts.write_charts(args.out, results, tables, log=True)
    pairs = dtype_pairs(runs)
    chart_paths = (forward_charts(args.out, runs), error_charts(args.out, pairs), list(layer_pngs.values()),
                   comparison_pngs)
    written = [write_markdown(os.path.join(args.out, "course.md"), args.title, command, document, runs, pairs,
                              chart_paths),
               write_csv(os.path.join(args.out, "course.csv"), runs), json_path]
    written += [p for paths in chart_paths for p in paths]
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
