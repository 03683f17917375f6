"""PNG charts: GFLOP/s per layer, CPU vs GPU across image sizes, fp16 vs fp32; the course's
forward-pass time by image size and error per layer."""
import os
import re

import matplotlib

matplotlib.use("Agg")  # renders without a display (build machines, CI)
import matplotlib.pyplot as plt  # noqa: E402  (must follow the backend choice)

from results import geomean, group_by, series_name, series_sort_key  # noqa: E402

DPI = 120
# A ResNet-style set name: <model>_i<image side>_b<batch>, e.g. resnet50_i224_b1.
IMAGE_SET_RE = re.compile(r"^(?P<model>.+)_i(?P<image>\d+)_b(?P<batch>\d+)$")
DTYPE_COLORS = {"fp32": "tab:blue", "fp16": "tab:orange"}


def _file_name(out_dir, *parts):
    return os.path.join(out_dir, re.sub(r"[^A-Za-z0-9._-]", "_", "_".join(parts)) + ".png")


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _series_colors(results):
    """One color per (impl, space) for every chart, so a series looks the same everywhere."""
    series = sorted({r.series for r in results}, key=series_sort_key)
    palette = plt.get_cmap("tab10" if len(series) <= 10 else "tab20").colors
    return {s: palette[i % len(palette)] for i, s in enumerate(series)}


def _geomean_by_series(results):
    return {s: geomean(r.gflops for r in rs) for s, rs in group_by(results, lambda r: r.series).items()}


def per_layer_chart(out_dir, key, results, colors, log, peaks):
    """Grouped bars: GFLOP/s per layer shape, one bar per (impl, space); a dashed line at the FMA
    peak of each space drawn that has one (peaks: {space: results.Peak})."""
    op, dtype, set_name = key
    shapes = group_by(results, lambda r: r.shape)
    series = sorted({r.series for r in results}, key=series_sort_key)
    by_cell = {(r.shape, r.series): r.gflops for r in results}
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(min(max(8, 1.5 + len(shapes) * (0.3 + 0.15 * len(series))), 32), 5.5))
    for i, s in enumerate(series):
        points = [(x, by_cell[shape, s]) for x, shape in enumerate(shapes) if (shape, s) in by_cell]
        ax.bar([x - 0.4 + width * (i + 0.5) for x, _ in points], [g for _, g in points], width,
               label=series_name(s), color=colors[s])
    # Layer names read better than shapes; a shape without one keeps its m_n_k name.
    ticks = [next((r.layer for r in rs if r.layer), shape) for shape, rs in shapes.items()]
    ax.set_xticks(range(len(shapes)), ticks, rotation=45, ha="right", fontsize=9)
    ax.set_xlim(-0.6, len(shapes) - 0.4)
    for space in sorted({s[1] for s in series} & set(peaks)):
        ax.axhline(peaks[space].gflops, linestyle="--", linewidth=1, color="gray")
        ax.annotate(f"FMA peak ({space}) {peaks[space].gflops:.0f}", (len(shapes) - 0.45, peaks[space].gflops),
                    textcoords="offset points", xytext=(0, 3), ha="right", fontsize=8, color="dimgray")
    ax.set_ylabel("GFLOP/s (median)")
    ax.set_title(f"{op} {dtype} — {set_name}: GFLOP/s per layer")
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: tall bars never hide it
    return _save(fig, _file_name(out_dir, op, dtype, set_name))


def image_size_charts(out_dir, tables, colors):
    """Per model and batch seen at several image sizes: geometric-mean GFLOP/s against image size."""
    by_model = {}
    for (op, dtype, set_name), results in tables.items():
        match = IMAGE_SET_RE.match(set_name)
        if match:
            model_key = (op, dtype, match["model"], match["batch"])
            by_model.setdefault(model_key, {})[int(match["image"])] = _geomean_by_series(results)
    paths = []
    for (op, dtype, model, batch), by_image in by_model.items():
        if len(by_image) < 2:
            continue
        images = sorted(by_image)
        fig, ax = plt.subplots(figsize=(8, 5))
        for s in sorted({s for g in by_image.values() for s in g}, key=series_sort_key):
            points = [(x, by_image[image][s]) for x, image in enumerate(images) if s in by_image[image]]
            ax.plot([x for x, _ in points], [g for _, g in points], marker="o", label=series_name(s), color=colors[s])
            for x, g in points:
                ax.annotate(f"{g:.0f}", (x, g), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
        ax.set_xticks(range(len(images)), [str(i) for i in images])
        ax.set_xlabel("image side (pixels)")
        ax.set_ylabel("geometric-mean GFLOP/s over the layers")
        ax.set_yscale("log")  # CPU and GPU rates differ by orders of magnitude
        ax.set_title(f"{model}, batch {batch}, {op} {dtype}: GFLOP/s by image size")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=9)
        paths.append(_save(fig, _file_name(out_dir, op, dtype, model, f"b{batch}", "by_image_size")))
    return paths


def dtype_charts(out_dir, tables):
    """Per (op, set) measured in fp32 and fp16: geometric-mean GFLOP/s of both, per (impl, space)."""
    paths = []
    for op, set_name in dict.fromkeys((op, set_name) for op, _, set_name in tables):
        fp32, fp16 = tables.get((op, "fp32", set_name)), tables.get((op, "fp16", set_name))
        if not fp32 or not fp16:
            continue
        by_dtype = {dtype: {(r.series, r.shape): r.gflops for r in rs}
                    for dtype, rs in (("fp32", fp32), ("fp16", fp16))}
        # Only shapes measured in both dtypes, so the two means cover the same layers.
        common = by_dtype["fp32"].keys() & by_dtype["fp16"].keys()
        series = sorted({s for s, _ in common}, key=series_sort_key)
        if not series:
            continue
        means = {dtype: [geomean(gflops[cell] for cell in common if cell[0] == s) for s in series]
                 for dtype, gflops in by_dtype.items()}
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(series) + 2), 5))
        for offset, dtype, legend in ((-0.2, "fp32", "fp32"), (0.2, "fp16", "fp16 (×: speed-up over fp32)")):
            bars = ax.bar([x + offset for x in range(len(series))], means[dtype], 0.4, label=legend,
                          color=DTYPE_COLORS[dtype])
        speedups = [f"×{fp16 / fp32:.2f}" for fp32, fp16 in zip(means["fp32"], means["fp16"])]
        ax.bar_label(bars, speedups, fontsize=9)  # the last bars drawn: fp16
        ax.set_xticks(range(len(series)), [series_name(s) for s in series], rotation=20, ha="right")
        ax.set_ylabel("geometric-mean GFLOP/s over the layers")
        ax.set_title(f"fp16 vs fp32 — {op} {set_name}")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=9)
        paths.append(_save(fig, _file_name(out_dir, op, set_name, "fp16_vs_fp32")))
    return paths


def forward_time_chart(out_dir, name, title, by_series):
    """Lines of forward-pass seconds against image side; by_series: {legend: {image side: seconds}}."""
    images = sorted({image for points in by_series.values() for image in points})
    fig, ax = plt.subplots(figsize=(8, 5))
    for legend, points in by_series.items():
        xs = [x for x, image in enumerate(images) if image in points]
        ys = [points[images[x]] for x in xs]
        ax.plot(xs, ys, marker="o", label=legend)
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.3g} s", (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    ax.set_xticks(range(len(images)), [f"{i}x{i}" for i in images])
    ax.set_xlabel("image size (pixels)")
    ax.set_ylabel("forward pass, s (sum of count × kernel time)")
    ax.set_yscale("log")  # CPU and GPU times differ by orders of magnitude
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    return _save(fig, _file_name(out_dir, name))


def error_chart(out_dir, name, title, layers, by_series):
    """Grouped bars of relative error per layer, log scale; by_series: {legend: [error per layer]}."""
    width = 0.8 / len(by_series)
    fig, ax = plt.subplots(figsize=(min(max(8, 1.5 + len(layers) * (0.3 + 0.15 * len(by_series))), 32), 5.5))
    for i, (legend, errors) in enumerate(by_series.items()):
        points = [(x, e) for x, e in enumerate(errors) if e]  # None (not finite) or 0: no bar on a log axis
        ax.bar([x - 0.4 + width * (i + 0.5) for x, _ in points], [e for _, e in points], width, label=legend)
    ax.set_xticks(range(len(layers)), layers, rotation=45, ha="right", fontsize=9)
    ax.set_xlim(-0.6, len(layers) - 0.4)
    ax.set_ylabel("relative error against fp64")
    ax.set_yscale("log")  # fp16 and fp32 errors differ by orders of magnitude
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
    return _save(fig, _file_name(out_dir, name))


def write_charts(out_dir, results, tables, log, peaks=None):
    """Returns ({table key: per-layer chart}, [comparison charts])."""
    colors = _series_colors(results)
    per_table = {key: per_layer_chart(out_dir, key, rs, colors, log, peaks or {}) for key, rs in tables.items()}
    return per_table, image_size_charts(out_dir, tables, colors) + dtype_charts(out_dir, tables)
