"""The markdown report: per (op, dtype, set) a GFLOP/s table with kgemm/peer ratios, and an overhead table."""
import os

from results import geomean, group_by, is_peer, series_name, series_sort_key

# The overhead view compares our dispatch with the vendor library's; the other peers are rate references.
OVERHEAD_IMPLS = ("kgemm", "cublas")
OVERHEAD_COLUMNS = (("kernel µs", "time_us"), ("call µs", "call_us"), ("launch µs", "launch_us"),
                    ("transfer µs", "transfer_us"))

EXPLANATION = """\
GFLOP/s are medians when the files hold repetitions; higher is better. A column `kgemm/X (space)` divides
kgemm's GFLOP/s by X's in the same space: above 1 kgemm is faster; `kgemm/kgemm-default` is the speed-up
the tuned config gives over the space default. Where a space has several peers, `best peer (space)` names
the fastest of them on each row (on the geomean row: how many rows each peer was the fastest on) and
`kgemm/best peer (space)` divides by its rate; a peer computing with less precision than the row's dtype
(cuBLASLt's TF32 for fp32) keeps a ratio of its own and is never the best peer. The geomean row is over
the rows that have the number, marked `(n/m)` when only n of the m rows do."""

OVERHEAD_EXPLANATION = """\
Overhead, µs per call: kernel = the time behind the GFLOP/s columns (on a GPU, every library: CUDA
events around a call queued behind an untimed one, device time without the launch; on the host: a call
between fences), call = one call from launch to completion timed alone (host clock), launch = host time
to launch without waiting, transfer = A and B to the device and C back once."""


def _number(value, decimals):
    return "-" if value is None else f"{value:.{decimals}f}"


def _rate(value, peak):
    """GFLOP/s, and with the space's peak known its share of it: `58.1 (14%)`."""
    if value is None or peak is None:
        return _number(value, 1)
    share = 100 * value / peak.gflops
    return f"{value:.1f} ({share:.{0 if share >= 10 else 1}f}%)"


def peaks_paragraph(peaks):
    """The line naming each space's FMA peak, or [] when no file gave one."""
    if not peaks:
        return []
    parts = [f"{p.space} {p.gflops:.1f} GFLOP/s" + (f" ({p.formula})" if p.formula else "")
             for p in sorted(peaks.values(), key=lambda p: p.space)]
    return ["", "FMA peak, fp32, measured by `kgemm-fma-peak` (independent FMA chains on every thread at the "
            "native SIMD width): " + "; ".join(parts) + ". Rates in those spaces show their share of it in "
            "parentheses."]


def _geomean_cell(values, row_count, format_value):
    cell = format_value(geomean(values))
    return cell if len(values) in (0, row_count) else f"{cell} ({len(values)}/{row_count})"


def markdown_table(header, rows, text_columns):
    """A markdown table; the first text_columns columns are left-aligned, the numbers right-aligned."""
    align = [":--" if i < text_columns else "--:" for i in range(len(header))]
    return ["| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |" for cells in (header, align, *rows)]


def _peers_by_space(series):
    """{space: [peer impl, ...]} in column order, for the spaces where kgemm has rows."""
    peers = {}
    for impl, space in series:
        if is_peer(impl) and ("kgemm", space) in series:
            peers.setdefault(space, []).append(impl)
    return peers


def _ratio_pairs(series, peers):
    """(kgemm series, other series) compared within one space, in column order: the space default,
    lower-precision peers, and a space's peer when it is the only one (with several, the best peer's
    columns stand for them)."""
    return [(("kgemm", space), (impl, space)) for impl, space in series
            if impl != "kgemm" and ("kgemm", space) in series and (not is_peer(impl) or len(peers[space]) == 1)]


def _best_peer(by_cell, shape, space, impls):
    """(impl, result) of the fastest of `impls` on `shape` in `space`, or None when none ran it."""
    ran = [(impl, by_cell[shape, (impl, space)]) for impl in impls if (shape, (impl, space)) in by_cell]
    return max(ran, key=lambda pair: pair[1].gflops) if ran else None


def _wins(by_cell, shapes, space, impls):
    """'openblas 14 · mkl 6': how many of `shapes` each peer was the fastest on, most first."""
    counts = {}
    for shape in shapes:
        best = _best_peer(by_cell, shape, space, impls)
        if best:
            counts[best[0]] = counts.get(best[0], 0) + 1
    return " · ".join(f"{impl} {count}" for impl, count in sorted(counts.items(), key=lambda item: -item[1]))


def performance_table(results, peaks=None):
    shapes = group_by(results, lambda r: r.shape)
    series = sorted({r.series for r in results}, key=series_sort_key)
    by_cell = {(r.shape, r.series): r for r in results}
    config_spaces = [space for impl, space in series
                     if impl == "kgemm" and any(r.config for r in results if r.series == (impl, space))]
    layers = {shape: next((r.layer for r in rs if r.layer), "") for shape, rs in shapes.items()}
    show_layer = any(layers.values())
    show_batch = any(r.op == "batched" for r in results)
    peers = _peers_by_space(series)
    pairs = _ratio_pairs(series, peers)
    best_spaces = [space for space, impls in peers.items() if len(impls) > 1]

    def text_cells(shape):
        cells = [shape] + ([layers[shape]] if show_layer else [])
        cells += [str(shapes[shape][0].batch)] if show_batch else []
        kgemm_results = (by_cell.get((shape, ("kgemm", space))) for space in config_spaces)
        return cells + [r.config if r else "" for r in kgemm_results]

    def gflops(shape, s):
        r = by_cell.get((shape, s))
        return r.gflops if r else None

    def ratio(shape, pair):
        top, bottom = gflops(shape, pair[0]), gflops(shape, pair[1])
        return top / bottom if top is not None and bottom else None

    def best_ratio(shape, space):
        best, top = _best_peer(by_cell, shape, space, peers[space]), gflops(shape, ("kgemm", space))
        return top / best[1].gflops if best and top is not None else None

    def best_cells(shape):
        cells = []
        for space in best_spaces:
            best = _best_peer(by_cell, shape, space, peers[space])
            cells += [best[0] if best else "-", _number(best_ratio(shape, space), 2)]
        return cells

    def present(values):
        return [v for v in values if v is not None]

    def peak(s):
        return (peaks or {}).get(s[1])

    text_header = ["shape"] + (["layer"] if show_layer else []) + (["batch"] if show_batch else [])
    text_header += [f"kgemm config ({space})" for space in config_spaces]
    header = text_header + [series_name(s) for s in series]
    header += [f"{top[0]}/{bottom[0]} ({bottom[1]})" for top, bottom in pairs]
    header += [title for space in best_spaces for title in (f"best peer ({space})", f"kgemm/best peer ({space})")]
    rows = [text_cells(shape) + [_rate(gflops(shape, s), peak(s)) for s in series]
            + [_number(ratio(shape, pair), 2) for pair in pairs] + best_cells(shape) for shape in shapes]
    geomean_row = ["**geomean**"] + [""] * (len(text_header) - 1)
    geomean_row += [_geomean_cell(present(gflops(shape, s) for shape in shapes), len(shapes),
                                  lambda mean, s=s: _rate(mean, peak(s))) for s in series]
    geomean_row += [_geomean_cell(present(ratio(shape, pair) for shape in shapes), len(shapes),
                                  lambda mean: _number(mean, 2)) for pair in pairs]
    for space in best_spaces:
        geomean_row += [_wins(by_cell, shapes, space, peers[space]),
                        _geomean_cell(present(best_ratio(shape, space) for shape in shapes), len(shapes),
                                      lambda mean: _number(mean, 2))]
    return markdown_table(header, rows + [geomean_row], len(text_header))


BEST_PEER_EXPLANATION = """\
Per table and space: kgemm's geomean GFLOP/s (dispatched, and with the space default config), each peer's
(over the rows it ran), how many rows each peer was the fastest on, and the geomeans over the rows of kgemm
/ that row's fastest peer."""


def best_peer_summary(tables):
    """The summary table of kgemm against the best peer of each row, or [] when no space has kgemm
    and a peer. tables: {(op, dtype, set): results}."""
    rows = []
    for (op, dtype, set_name), results in tables.items():
        series = sorted({r.series for r in results}, key=series_sort_key)
        by_cell = {(r.shape, r.series): r for r in results}
        for space, impls in _peers_by_space(series).items():
            ours = {impl: {r.shape: r.gflops for r in results if r.series == (impl, space)}
                    for impl in ("kgemm", "kgemm-default")}
            ratios = {impl: [] for impl in ours}
            for impl, rates in ours.items():
                for shape, rate in rates.items():
                    best = _best_peer(by_cell, shape, space, impls)
                    if best:
                        ratios[impl].append(rate / best[1].gflops)
            peer_rates = " · ".join(
                f"{impl} {geomean(r.gflops for r in results if r.series == (impl, space)):.1f}" for impl in impls)
            rows.append([f"{op} · {dtype} · {set_name}", space]
                        + [_number(geomean(ours[impl].values()), 1) for impl in ours]
                        + [peer_rates, _wins(by_cell, ours["kgemm"], space, impls)]
                        + [_geomean_cell(ratios[impl], len(ours[impl]), lambda mean: _number(mean, 2))
                           if ours[impl] else "-" for impl in ours])
    if not rows:
        return []
    header = ["table", "space", "kgemm", "kgemm-default", "peers (geomean GFLOP/s)", "best peer (rows)",
              "kgemm/best peer", "kgemm-default/best peer"]
    return markdown_table(header, rows, 2)


def overhead_table(results):
    """Kernel, call, launch and transfer µs of kgemm and cuBLAS, or [] when no result measured them."""
    measured = [r for r in results if r.impl in OVERHEAD_IMPLS
                and (r.launch_us, r.call_us, r.transfer_us) != (None, None, None)]
    if not measured:
        return []
    shape_order = list(group_by(results, lambda r: r.shape))
    measured.sort(key=lambda r: (shape_order.index(r.shape), series_sort_key(r.series)))
    show_layer = any(r.layer for r in measured)
    header = ["shape"] + (["layer"] if show_layer else []) + ["impl (space)"]
    header += [title for title, _ in OVERHEAD_COLUMNS]
    rows = [[r.shape] + ([r.layer] if show_layer else []) + [series_name(r.series)]
            + [_number(getattr(r, key), 1) for _, key in OVERHEAD_COLUMNS] for r in measured]
    return markdown_table(header, rows, len(header) - len(OVERHEAD_COLUMNS))


def call_time_ratios(results):
    """kgemm over each overhead peer in its space, launch to completion (call µs, host clock): per peer
    series (geomean of peer call µs / kgemm call µs, shapes compared); empty when no shape has both."""
    calls = {(r.shape, r.series): r.call_us for r in results if r.impl in OVERHEAD_IMPLS and r.call_us}
    ratios = {}
    for (shape, (impl, space)), peer_us in calls.items():
        kgemm_us = calls.get((shape, ("kgemm", space)))
        if impl != "kgemm" and kgemm_us:
            ratios.setdefault((impl, space), []).append(peer_us / kgemm_us)
    return {series: (geomean(values), len(values)) for series, values in ratios.items()}


def write_report(path, title, sources, tables, table_charts, comparison_charts, peaks=None):
    """tables: {(op, dtype, set): results}; table_charts: {(op, dtype, set): png path};
    peaks: {space: results.Peak}."""
    lines = [f"# {title}", "", "Inputs: " + ", ".join(f"`{s}`" for s in sources) + ".", "", EXPLANATION]
    lines += peaks_paragraph(peaks)
    summary = best_peer_summary(tables)
    if summary:
        lines += ["", "## kgemm against the best peer", "", BEST_PEER_EXPLANATION, ""] + summary
    for (op, dtype, set_name), results in tables.items():
        lines += ["", f"## {op} · {dtype} · {set_name}", ""] + performance_table(results, peaks)
        overhead = overhead_table(results)
        if overhead:
            lines += ["", OVERHEAD_EXPLANATION, ""] + overhead
            for (impl, space), (ratio, count) in call_time_ratios(results).items():
                lines += ["", f"Launch to completion (call µs): kgemm/{impl} ({space}) = {ratio:.2f}, geomean over {count} shapes."]
        lines += ["", f"![{op} {dtype} {set_name}]({os.path.basename(table_charts[op, dtype, set_name])})"]
    if comparison_charts:
        lines += ["", "## Comparisons", ""]
        lines += [f"![{os.path.basename(c)}]({os.path.basename(c)})" for c in comparison_charts]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
