"""Reads Google Benchmark JSON result files into one Result per benchmark (see ../RESULTS_SCHEMA.md)."""
import json
import math
import re
import sys
from dataclasses import dataclass
from typing import Optional

OPS = ("gemm", "batched")
DTYPES = ("fp32", "fp16")
SHAPE_RE = re.compile(r"^m(\d+)_n(\d+)_k(\d+)$")
# Suffixes Google Benchmark itself appends to a name (UseRealTime(), Iterations(), ...):
# they are not part of the schema's six fields, so they are dropped before parsing.
GBENCH_SUFFIX_RE = re.compile(
    r"(/(real_time|manual_time|process_time|(iterations|repeats|threads|min_time|min_warmup_time):[^/]*))+$")
# A kgemm config string, e.g. mb64_nb64_kb16_tm4_tn4_team256 (the label's last token).
CONFIG_RE = re.compile(r"^mb\d+_nb\d+(_\w+)*$")
TO_MICROSECONDS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
PEAK_KEY = "fma_peak_gflops_"  # + space: a context key of kgemm-fma-peak's file

# Column and legend order: CPU spaces before the GPU, our kernel before its peers.
SPACE_ORDER = ("serial", "openmp", "cuda")
IMPL_ORDER = ("kgemm", "kgemm-default", "openblas", "mkl", "mkl-jit", "blis", "kokkosblas", "kkbatched", "cublas",
              "cublaslt", "cutlass", "cublaslt-tf32", "cutlass-tf32")
# Impls computing with less precision than the row's dtype says (TF32 inputs for fp32): shown with
# their own ratio, never a row's best peer.
LOWER_PRECISION_IMPLS = ("cublaslt-tf32", "cutlass-tf32")


class ReportError(Exception):
    """An input problem that stops the report (the message names the file)."""


@dataclass
class Result:
    op: str
    impl: str
    space: str
    dtype: str
    set: str
    shape: str
    M: int
    N: int
    K: int
    batch: int
    gflops: float
    time_us: float
    launch_us: Optional[float]
    call_us: Optional[float]
    transfer_us: Optional[float]
    label: str

    @property
    def series(self):
        return (self.impl, self.space)

    @property
    def config(self):
        tokens = self.label.split()
        return tokens[-1] if tokens and CONFIG_RE.match(tokens[-1]) else ""

    @property
    def layer(self):
        tokens = self.label.split()
        return " ".join(tokens[:-1] if self.config else tokens)


def series_sort_key(series):
    impl, space = series
    def rank(order, value):
        return (order.index(value), "") if value in order else (len(order), value)
    return (rank(SPACE_ORDER, space), rank(IMPL_ORDER, impl))


def is_peer(impl):
    """Whether `impl` is a peer kgemm is judged against: any library but kgemm itself, at the row's precision."""
    return not impl.startswith("kgemm") and impl not in LOWER_PRECISION_IMPLS


def series_name(series):
    impl, space = series
    return f"{impl} ({space})"


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def warn(message):
    print(f"warning: {message}", file=sys.stderr)


def _read_document(path):
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror}") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: not valid JSON: {e}") from e
    if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
        raise ReportError(f"{path}: no \"benchmarks\" list, not a Google Benchmark JSON file")
    return document


def _read_entries(path):
    document = _read_document(path)
    entries = [e for e in document["benchmarks"] if isinstance(e, dict)]
    if len(entries) < len(document["benchmarks"]):
        skipped = len(document["benchmarks"]) - len(entries)
        warn(f"{path}: skipping {skipped} benchmarks[] item(s) that are not JSON objects")
    return entries


def _pick_entries(path, entries):
    """One entry per benchmark, by name in the order first seen: the median aggregate when
    present, else the first iteration; a benchmark with neither is skipped with a warning."""
    names, medians, iterations, errors, labels = {}, {}, {}, {}, {}
    for entry in entries:
        # Aggregates are named "<run_name>_median"; run_name is the benchmark's own name.
        name = str(entry.get("run_name") or entry.get("name", ""))
        names.setdefault(name)
        if entry.get("label"):
            labels.setdefault(name, entry["label"])
        if entry.get("run_type") == "aggregate":
            if entry.get("aggregate_name") == "median":
                medians[name] = entry
        elif entry.get("error_occurred"):
            errors.setdefault(name, f"the benchmark failed: {entry.get('error_message', 'error_occurred')}")
        else:
            iterations.setdefault(name, entry)
    picked = {}
    for name in names:
        entry = medians.get(name) or iterations.get(name)
        if entry is None:
            warn(f"{path}: skipping '{name}': {errors.get(name, 'neither a median aggregate nor an iteration')}")
        else:
            # Aggregates may lack the label; the iterations carry it.
            picked[name] = dict(entry, label=labels.get(name, ""))
    return picked


def _optional_float(entry, key):
    return float(entry[key]) if key in entry else None


def _to_result(name, entry):
    """The entry as a Result; ValueError says why it cannot be one."""
    fields = GBENCH_SUFFIX_RE.sub("", name).split("/")
    shape = SHAPE_RE.match(fields[-1])
    if len(fields) != 6 or fields[0] not in OPS or fields[3] not in DTYPES or not all(fields) or not shape:
        raise ValueError("the name is not <op>/<impl>/<space>/<dtype>/<set>/m<M>_n<N>_k<K>")
    unit = entry.get("time_unit", "ns")
    if "real_time" not in entry or unit not in TO_MICROSECONDS:
        raise ValueError(f"no real_time in a known time_unit ({unit})")
    M, N, K = (int(entry.get(key, dim)) for key, dim in zip("MNK", shape.groups()))
    batch = int(entry.get("batch", 1))
    time_us = float(entry["real_time"]) * TO_MICROSECONDS[unit]
    if "GFLOP/s" in entry:
        gflops = float(entry["GFLOP/s"])
    else:  # a peer that reports only its time: the schema's definition of the rate
        gflops = 2.0 * M * N * K * batch / time_us / 1e3 if time_us > 0 else 0.0
    if not gflops > 0:  # the geometric means need positive rates
        raise ValueError(f"GFLOP/s is {gflops}, not positive")
    return Result(*fields, M=M, N=N, K=K, batch=batch, gflops=gflops, time_us=time_us,
                  launch_us=_optional_float(entry, "launch_us"), call_us=_optional_float(entry, "call_us"),
                  transfer_us=_optional_float(entry, "transfer_us"), label=str(entry.get("label", "")))


def load_results(paths):
    """All results of all files, in the order first seen; a later duplicate replaces the earlier one."""
    results = {}
    for path in paths:
        for name, entry in _pick_entries(path, _read_entries(path)).items():
            try:
                result = _to_result(name, entry)
            except (ValueError, TypeError) as e:
                warn(f"{path}: skipping '{name}': {e}")
                continue
            key = (result.op, result.impl, result.space, result.dtype, result.set, result.shape)
            if key in results:
                warn(f"{path}: '{name}' replaces an earlier result for the same benchmark")
            results[key] = result
    return list(results.values())


@dataclass
class Peak:
    """A space's measured fp32 FMA peak (kgemm-fma-peak's context keys fma_peak_*_<space>)."""
    space: str
    gflops: float
    formula: str


def load_peaks(paths):
    """{space: Peak} from the files' contexts; a later file's peak for a space replaces an earlier one."""
    peaks = {}
    for path in paths:
        context = _read_document(path).get("context")
        if not isinstance(context, dict):
            continue
        for key, value in context.items():
            if not key.startswith(PEAK_KEY):
                continue
            space = key[len(PEAK_KEY):]
            try:
                gflops = float(value)
            except (TypeError, ValueError):
                gflops = 0.0
            if not gflops > 0:
                warn(f"{path}: skipping {key} = {value!r}: not a positive GFLOP/s")
                continue
            peaks[space] = Peak(space, gflops, str(context.get(f"fma_peak_formula_{space}", "")))
    return peaks


def group_by(results, key):
    """Results grouped by key(result), groups and members in the order first seen."""
    groups = {}
    for result in results:
        groups.setdefault(key(result), []).append(result)
    return groups
