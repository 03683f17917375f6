#!/usr/bin/env python3
"""kgemm-run's three formats report the same runs: CSV has the columns scripts read, JSON the
fields, and both add up a forward pass from the layers (count x per-call time, the largest error,
GFLOP/s = 2 M N K / kernel); the table has a line per layer, each run's ends with the geometric
mean (scripts read that last line), the forward-pass summary comes after the runs.
Usage: tools_report_formats.py <kgemm-run> <space>
"""
import csv
import io
import json
import math
import subprocess
import sys

SHAPES = [(40, 24, 16), (9, 7, 5)]
BATCHES = [1, 3]
CSV_COLUMNS = ("row,space,device,dtype,set,model,image,batch,layer,m,n,k,count,config,kernel_ms,launch_ms,call_ms,"
               "transfer_ms,gflops,max_rel_err,mean_rel_err,forward_ms,forward_s").split(",")
TIMES = ("kernel_ms", "launch_ms", "call_ms", "transfer_ms")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(binary, space, fmt):
    shapes = ",".join(f"{m}x{n}x{k}" for m, n, k in SHAPES)
    command = [binary, "--space", space, "--shape", shapes, "--batch", ",".join(map(str, BATCHES)), "--reps", "1",
               "--format", fmt]
    return subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout


def close(a, b, rel=1e-6):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def check_layers(label, batch, layers, forward, key):
    """Each layer's extents and rate; the forward pass summed from them."""
    check([(l["m"], l["n"], l["k"]) for l in layers] == [(m * batch, n, k) for m, n, k in SHAPES],
          f"{label}: layer extents {[(l['m'], l['n'], l['k']) for l in layers]}, batch {batch} multiplies M")
    for l in layers:
        check(close(l["gflops"], 2 * l["m"] * l["n"] * l["k"] / (l["kernel_ms"] * 1e-3) * 1e-9, 1e-4),
              f"{label} {l['layer']}: gflops {l['gflops']} is not 2 M N K / kernel")
        check(0 <= l["max_rel_err"] < 1e-5, f"{label} {l['layer']}: fp32 error {l['max_rel_err']}")
    check(forward[key] == sum(l["count"] for l in layers), f"{label}: forward {key} {forward[key]}")
    for t in TIMES:
        check(close(forward[t], sum(l["count"] * l[t] for l in layers), 1e-5), f"{label}: forward {t} is not the sum")
    check(forward["max_rel_err"] == max(l["max_rel_err"] for l in layers), f"{label}: forward max_rel_err")


def main():
    binary, space = sys.argv[1], sys.argv[2]
    document = json.loads(run(binary, space, "json"))
    check(document["tool"] == "kgemm-run" and document["reps"] == 1, "JSON header")
    check([r["batch"] for r in document["runs"]] == BATCHES, f"JSON runs: {[r['batch'] for r in document['runs']]}")
    for r in document["runs"]:
        check(r["model"] is None and r["image"] is None and r["dtype"] == "fp32" and r["space"] == space,
              f"JSON run fields {r}")
        check_layers(f"JSON {r['set']}", r["batch"], r["layers"], r["forward"], "gemms")
        check(close(r["forward"]["kernel_s"] * 1e3, r["forward"]["kernel_ms"]), "JSON forward kernel_s")

    rows = list(csv.DictReader(io.StringIO(run(binary, space, "csv"))))
    check(list(rows[0].keys()) == CSV_COLUMNS if rows else False, f"CSV columns {list(rows[0].keys()) if rows else []}")
    for batch in BATCHES:
        mine = [{k: (float(v) if k in (*TIMES, "gflops", "max_rel_err", "mean_rel_err", "forward_ms", "forward_s")
                     else int(v) if k in ("m", "n", "k", "count", "batch") and v else v) for k, v in row.items()}
                for row in rows if row["batch"] == str(batch)]
        layers = [row for row in mine if row["row"] == "layer"]
        forward = [row for row in mine if row["row"] == "forward"]
        check(len(forward) == 1 and forward[0]["layer"] == "all shapes" and forward[0]["m"] == "",
              f"CSV batch {batch}: one forward row without extents")
        if len(forward) == 1:
            # CSV rounds times to 9 significant digits, errors to 4.
            check_layers(f"CSV batch {batch}", batch, layers, forward[0], "count")
            check(close(forward[0]["forward_ms"], sum(l["forward_ms"] for l in layers), 1e-5), "CSV forward_ms sum")

    blocks = run(binary, space, "table").split("\n\n")
    check(len(blocks) == len(BATCHES) + 1, f"table: {len(blocks)} blocks, want a run's per batch and the summary")
    for block in blocks[:-1]:
        check(block.splitlines()[-1].startswith("geometric mean over 2 shapes:"), f"a run's last line: {block[-80:]!r}")
    lines = "\n".join(blocks).splitlines()
    for m, n, k in SHAPES:
        check(any(line.split()[1:5] == [f"{m}x{n}x{k}", str(m), str(n), str(k)] for line in lines),
              f"table: no line for {m}x{n}x{k}")

    for what in failures:
        print("FAIL:", what)
    print(f"kgemm-run report formats ({space}): {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
