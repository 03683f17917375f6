#!/usr/bin/python3
"""End-to-end check of kgemm_report.py on two small synthetic result files.

Run: /usr/bin/python3 benchmarks/report/test_report.py  (ctest: report.markdown_and_plots)
"""
import csv
import itertools
import json
import os
import subprocess
import sys
import tempfile
import unittest

REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kgemm_report.py")
STORE_ROWS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "store_rows.py")
PEER_ALONE_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer_alone_check.py")
STORE_COMPARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "store_compare.py")
CONFIG = "mb64_nb64_kb16_tm4_tn4_team256"
SHAPES = {"m64_n64_k64": "conv1 (7x7/2)", "m128_n128_k128": "res2a_branch2a"}


def entry(name, gflops, **extra):
    m, n, k = (int(part[1:]) for part in name.rsplit("/", 1)[1].split("_"))
    seconds = 2.0 * m * n * k / (gflops * 1e9)
    return dict(name=name, run_name=name, run_type="iteration", iterations=10, real_time=seconds * 1e9,
                cpu_time=seconds * 1e9, time_unit="ns", M=m, N=n, K=k, batch=1, **{"GFLOP/s": gflops}, **extra)


def with_repetitions(name, median_gflops, label):
    """Three iterations and Google Benchmark's aggregates; mean and median differ on purpose."""
    runs = [entry(name, g, label=label) for g in (median_gflops * 0.5, median_gflops, median_gflops * 1.1)]
    aggregates = []
    for aggregate, gflops in (("mean", median_gflops * 9), ("median", median_gflops), ("stddev", 1.0)):
        aggregates.append(dict(entry(name, gflops), name=f"{name}_{aggregate}", run_type="aggregate",
                               aggregate_name=aggregate))
    return runs + aggregates


def kokkos_benchmarks_file():
    """Like kgemm's Google Benchmark output with --benchmark_repetitions=3."""
    benchmarks = []
    rates = {"kgemm": (100, 400), "kgemm-default": (50, 100), "openblas": (200, 200)}
    for impl, (small, large) in rates.items():
        for (shape, layer), gflops in zip(SHAPES.items(), (small, large)):
            label = f"{layer} {CONFIG}" if impl.startswith("kgemm") else layer
            benchmarks += with_repetitions(f"gemm/{impl}/openmp/fp32/resnet50_i224_b1/{shape}", gflops, label)
    benchmarks += with_repetitions("gemm/kgemm/openmp/fp32/resnet50_i512_b1/m256_n64_k64", 300, "conv1 (7x7/2)")
    malformed = "gemm/kgemm/openmp/fp32/only_five_fields"
    benchmarks.append(dict(entry("gemm/kgemm/openmp/fp32/x/m8_n8_k8", 1.0), name=malformed, run_name=malformed))
    return {"context": {"library_build_type": "release"}, "benchmarks": benchmarks}


def cublas_peer_file():
    """Like the standalone cuBLAS peer: iteration entries only, with the overhead counters."""
    benchmarks = []
    for dtype, factor in (("fp32", 1), ("fp16", 2)):
        for set_name in ("resnet50_i224_b1", "resnet50_i512_b1"):
            for shape, layer in SHAPES.items():
                benchmarks.append(entry(f"gemm/cublas/cuda/{dtype}/{set_name}/{shape}", 1000.0 * factor, label=layer,
                                        launch_us=4.4, call_us=9.5, transfer_us=31.0))
    return {"benchmarks": benchmarks}


def markdown_table(report, heading):
    """The first table after `heading`, as a list of {column: cell} rows."""
    after = report.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(after) if line.startswith("|"))
    table = itertools.takewhile(lambda line: line.startswith("|"), after[start:])
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    return [dict(zip(cells[0], row)) for row in cells[2:]]


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "out")
        inputs = []
        for file_name, document in (("kokkos.json", kokkos_benchmarks_file()), ("cublas.json", cublas_peer_file())):
            inputs.append(os.path.join(cls.tmp.name, file_name))
            with open(inputs[-1], "w") as f:
                json.dump(document, f)
        cls.run_result = subprocess.run([sys.executable, REPORT, "--out-dir", cls.out, "--csv", *inputs],
                                        capture_output=True, text=True)
        with open(os.path.join(cls.out, "report.md")) as f:
            cls.report = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_succeeds_and_warns_once_about_the_malformed_name(self):
        self.assertEqual(self.run_result.returncode, 0, self.run_result.stderr)
        warnings = [l for l in self.run_result.stderr.splitlines() if l.startswith("warning:")]
        self.assertEqual(len(warnings), 1, self.run_result.stderr)
        self.assertIn("only_five_fields", warnings[0])

    def test_table_takes_medians_and_computes_ratios_and_geomeans(self):
        rows = markdown_table(self.report, "## gemm · fp32 · resnet50_i224_b1")
        small, large, mean = rows
        self.assertEqual((small["shape"], small["layer"], small["kgemm config (openmp)"]),
                         ("m64_n64_k64", "conv1 (7x7/2)", CONFIG))
        self.assertEqual((small["kgemm (openmp)"], small["openblas (openmp)"], small["kgemm/openblas (openmp)"]),
                         ("100.0", "200.0", "0.50"))
        self.assertEqual((large["kgemm (openmp)"], large["kgemm/openblas (openmp)"]), ("400.0", "2.00"))
        self.assertEqual((mean["shape"], mean["kgemm (openmp)"], mean["openblas (openmp)"]),
                         ("**geomean**", "200.0", "200.0"))
        self.assertEqual(mean["kgemm/openblas (openmp)"], "1.00")
        self.assertEqual(mean["kgemm/kgemm-default (openmp)"], "2.83")  # sqrt(2 * 4): the tuning speed-up
        self.assertEqual(mean["cublas (cuda)"], "1000.0")
        self.assertNotIn("kgemm/cublas (cuda)", mean)  # no kgemm on cuda: nothing to compare in that space

    def test_overhead_table_for_cublas(self):
        rows = markdown_table(self.report, "Overhead, µs per call")
        self.assertEqual([r["impl (space)"] for r in rows], ["cublas (cuda)"] * 2)
        self.assertEqual((rows[0]["launch µs"], rows[0]["call µs"], rows[0]["transfer µs"]), ("4.4", "9.5", "31.0"))

    def test_call_time_ratio_pairs_kgemm_and_cublas_in_one_space(self):
        # kgemm on the GPU: calls of 10 and 38 µs against cuBLAS' 9.5: geomean sqrt(0.95 * 0.25) = 0.487.
        benchmarks = [entry(f"gemm/kgemm/cuda/fp32/resnet50_i224_b1/{shape}", 500.0, label=layer, launch_us=5.0,
                            call_us=call_us, transfer_us=30.0)
                      for (shape, layer), call_us in zip(SHAPES.items(), (10.0, 38.0))]
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, "cublas.json"), os.path.join(tmp, "kgemm-cuda.json")]
            for path, document in zip(paths, (cublas_peer_file(), {"benchmarks": benchmarks})):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(document, f)
            subprocess.run([sys.executable, REPORT, "--out-dir", tmp, *paths], check=True, capture_output=True, text=True)
            with open(os.path.join(tmp, "report.md"), encoding="utf-8") as f:
                report = f.read()
        section = report.split("## gemm · fp32 · resnet50_i224_b1", 1)[1].split("\n## ", 1)[0]
        self.assertIn("Launch to completion (call µs): kgemm/cublas (cuda) = 0.49, geomean over 2 shapes.", section)
        self.assertNotIn("Launch to completion", report.split("## gemm · fp16", 1)[1])  # no kgemm on cuda there

    def test_pngs_written_listed_and_non_empty(self):
        listed = self.run_result.stdout.split()
        expected = ["gemm_fp32_resnet50_i224_b1.png", "gemm_fp16_resnet50_i224_b1.png",
                    "gemm_fp32_resnet50_b1_by_image_size.png", "gemm_resnet50_i224_b1_fp16_vs_fp32.png"]
        for name in expected:
            path = os.path.join(self.out, name)
            self.assertIn(path, listed)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(os.path.getsize(path), 1000, name)
        self.assertEqual(sorted(listed), sorted(os.path.join(self.out, n) for n in os.listdir(self.out)))

    def test_csv_has_one_row_per_result(self):
        with open(os.path.join(self.out, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 3 * 2 + 1 + 2 * 2 * 2)
        kgemm = next(r for r in rows if r["impl"] == "kgemm" and r["shape"] == "m128_n128_k128")
        self.assertEqual((float(kgemm["gflops"]), kgemm["M"], kgemm["launch_us"]), (400.0, "128", ""))

    def test_invalid_json_names_the_file_and_fails(self):
        bad = os.path.join(self.tmp.name, "truncated.json")
        with open(bad, "w") as f:
            f.write('{"benchmarks": [')
        run = subprocess.run([sys.executable, REPORT, "--out-dir", os.path.join(self.tmp.name, "bad"), bad],
                             capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertEqual(len(run.stderr.strip().splitlines()), 1, run.stderr)
        self.assertIn("truncated.json", run.stderr)


class PeakTest(unittest.TestCase):
    """kgemm-fma-peak's file gives each rate of its spaces as a share of the peak."""

    def test_rates_of_spaces_with_a_peak_show_their_share(self):
        peak = {"context": {"fma_peak_gflops_openmp": "800.0", "fma_peak_threads_openmp": "2",
                            "fma_peak_formula_openmp": "2 cores x 16 lanes x 2 flops x 2.00 FMA/cycle x 6.25 GHz"},
                "benchmarks": []}
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, "kokkos.json"), os.path.join(tmp, "cublas.json"), os.path.join(tmp, "peak.json")]
            for path, document in zip(paths, (kokkos_benchmarks_file(), cublas_peer_file(), peak)):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(document, f)
            subprocess.run([sys.executable, REPORT, "--out-dir", tmp, *paths], check=True, capture_output=True)
            with open(os.path.join(tmp, "report.md"), encoding="utf-8") as f:
                report = f.read()
        self.assertIn("openmp 800.0 GFLOP/s (2 cores x 16 lanes x 2 flops x 2.00 FMA/cycle x 6.25 GHz)", report)
        small, large, mean = markdown_table(report, "## gemm · fp32 · resnet50_i224_b1")
        self.assertEqual((small["kgemm (openmp)"], small["openblas (openmp)"]), ("100.0 (12%)", "200.0 (25%)"))
        self.assertEqual((large["kgemm (openmp)"], mean["kgemm (openmp)"]), ("400.0 (50%)", "200.0 (25%)"))
        self.assertEqual(small["kgemm/openblas (openmp)"], "0.50")  # ratios stay plain
        self.assertEqual(mean["cublas (cuda)"], "1000.0")  # no peak for cuda: the rate alone


class BestPeerTest(unittest.TestCase):
    """With several peers in a space, each row names its fastest peer and kgemm is divided by it;
    TF32 (less precise than fp32) keeps a ratio of its own and is never the best peer."""

    @classmethod
    def setUpClass(cls):
        small, large = SHAPES  # kgemm 100 / 400; the fastest peer: mkl 200 on small, openblas 500 on large
        rates = {"kgemm": (100, 400), "openblas": (150, 500), "mkl": (200, 250), "blis": (120, None)}
        benchmarks = [entry(f"gemm/{impl}/openmp/fp32/resnet50_i224_b1/{shape}", gflops)
                      for impl, pair in rates.items() for shape, gflops in zip((small, large), pair) if gflops]
        gpu = {"kgemm": 900, "cublas": 1000, "cublaslt": 1200, "cublaslt-tf32": 3000}
        benchmarks += [entry(f"gemm/{impl}/cuda/fp32/resnet50_i224_b1/{small}", gflops) for impl, gflops in gpu.items()]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "peers.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"benchmarks": benchmarks}, f)
            cls.report_run = subprocess.run([sys.executable, REPORT, "--out-dir", tmp, "--summary", path],
                                     check=True, capture_output=True, text=True)
            with open(os.path.join(tmp, "report.md"), encoding="utf-8") as f:
                cls.report = f.read()
        cls.rows = markdown_table(cls.report, "## gemm · fp32 · resnet50_i224_b1")

    def test_each_row_names_its_best_peer_and_divides_by_it(self):
        small, large, mean = self.rows
        self.assertEqual((small["best peer (openmp)"], small["kgemm/best peer (openmp)"]), ("mkl", "0.50"))
        self.assertEqual((large["best peer (openmp)"], large["kgemm/best peer (openmp)"]), ("openblas", "0.80"))
        self.assertEqual((mean["best peer (openmp)"], mean["kgemm/best peer (openmp)"]), ("mkl 1 · openblas 1", "0.63"))
        self.assertEqual((small["mkl (openmp)"], small["blis (openmp)"], large["blis (openmp)"]), ("200.0", "120.0", "-"))
        self.assertNotIn("kgemm/openblas (openmp)", small)  # the best peer's columns stand for the peers

    def test_tf32_has_its_own_ratio_and_is_never_the_best_peer(self):
        small = self.rows[0]
        self.assertEqual((small["best peer (cuda)"], small["kgemm/best peer (cuda)"]), ("cublaslt", "0.75"))
        self.assertEqual(small["kgemm/cublaslt-tf32 (cuda)"], "0.30")

    def test_summary_in_the_report_and_printed(self):
        summary = markdown_table(self.report, "## kgemm against the best peer")
        self.assertEqual([(r["space"], r["kgemm/best peer"]) for r in summary], [("openmp", "0.63"), ("cuda", "0.75")])
        self.assertEqual(summary[0]["peers (geomean GFLOP/s)"], "openblas 273.9 · mkl 223.6 · blis 120.0")
        self.assertIn("kgemm against the best peer of each row:", self.report_run.stdout)
        self.assertIn("| gemm · fp32 · resnet50_i224_b1 | openmp | 200.0 |", self.report_run.stdout)


class JitPeerTest(unittest.TestCase):
    """MKL's JIT rows (impl mkl-jit) are a peer of their own beside MKL's batch call, present only on
    the shapes where MKL generated a kernel: each row's best peer is the faster of the two there."""

    def test_best_of_batch_call_and_jit(self):
        small, large = SHAPES  # the JIT applied to the small shape only
        rates = {"kgemm": (100, 400), "mkl": (150, 500), "mkl-jit": (300, None), "blis": (120, 130)}
        benchmarks = [entry(f"batched/{impl}/serial/fp32/squares/{shape}", gflops)
                      for impl, pair in rates.items() for shape, gflops in zip((small, large), pair) if gflops]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mkl.serial.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"benchmarks": benchmarks}, f)
            subprocess.run([sys.executable, REPORT, "--out-dir", tmp, path], check=True, capture_output=True)
            with open(os.path.join(tmp, "report.md"), encoding="utf-8") as f:
                report = f.read()
        small_row, large_row, _ = markdown_table(report, "## batched · fp32 · squares")
        self.assertEqual((small_row["best peer (serial)"], small_row["kgemm/best peer (serial)"]), ("mkl-jit", "0.33"))
        self.assertEqual((large_row["best peer (serial)"], large_row["kgemm/best peer (serial)"]), ("mkl", "0.80"))
        self.assertEqual(large_row["mkl-jit (serial)"], "-")
        columns = list(small_row)
        self.assertEqual([c for c in columns if c in ("mkl (serial)", "mkl-jit (serial)", "blis (serial)")],
                         ["mkl (serial)", "mkl-jit (serial)", "blis (serial)"])  # MKL's two impls side by side


def fake_peer(document):
    """A command that writes `document` where --benchmark_out= says, as a peer's program would."""
    script = ("import json, sys\n"
              "out = next(a.split('=', 1)[1] for a in sys.argv if a.startswith('--benchmark_out='))\n"
              f"json.dump({document!r}, open(out, 'w'))\n")
    return [sys.executable, "-c", script]


class PeerAloneCheckTest(unittest.TestCase):
    """peer_alone_check.py fails a run whose peer rows fall far below the peer's rates alone."""

    def check(self, in_run_factor, alone_rows=None):
        alone = {"benchmarks": alone_rows if alone_rows is not None else
                 [entry(f"gemm/openblas/openmp/fp32/resnet50_i224_b1/{shape}", 200.0) for shape in SHAPES]}
        with tempfile.TemporaryDirectory() as tmp:
            in_run = os.path.join(tmp, "openblas.json")
            with open(in_run, "w", encoding="utf-8") as f:
                json.dump({"benchmarks": [entry(f"gemm/openblas/openmp/fp32/resnet50_i224_b1/{shape}", 200.0 * factor)
                                          for shape, factor in zip(SHAPES, in_run_factor)]}, f)
            return subprocess.run([sys.executable, PEER_ALONE_CHECK, in_run, "--", *fake_peer(alone)],
                                  capture_output=True, text=True)

    def test_passes_at_the_alone_speed(self):
        run = self.check((0.95, 1.0))
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("over 2 rows: 0.97", run.stdout)

    def test_fails_at_half_the_alone_speed(self):
        run = self.check((0.5, 0.6))
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("below", run.stdout)
        self.assertIn("re-measure", run.stderr)

    def test_one_slow_row_is_named_but_the_mean_decides(self):
        run = self.check((0.7, 1.0))  # geomean 0.84
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual(sum(line.endswith("below") for line in run.stdout.splitlines()), 1)

    def test_no_common_rows_is_an_error(self):
        run = self.check((1.0, 1.0), alone_rows=[entry("gemm/openblas/serial/fp32/squares/m8_n8_k8", 1.0)])
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn("none of the 1 rows", run.stderr)


STORE = """# kgemm tuned configurations
device: {space: cuda, name: Some GPU, arch: sm_90, threads: 132}
entries:
  - {kernel: gemm, dtype: f32, order: nn, m: 64, n: 64, k: 64, batch: 1, config: %s, gflops: 400, default_gflops: 100, candidates: 9}
  - {kernel: gemm, dtype: f16, order: nn, m: 64, n: 64, k: 64, batch: 1, config: %s, gflops: 800, default_gflops: 0, candidates: 9}
  - {kernel: gemm, dtype: f32, order: nn, m: 7, n: 7, k: 7, batch: 1, config: %s, gflops: 5, default_gflops: 5, candidates: 9}
  - {kernel: batched, dtype: f32, order: nn, m: 64, n: 64, k: 64, batch: 8, config: %s, gflops: 9, default_gflops: 9, candidates: 9}
""" % ((CONFIG,) * 4)


class StoreRowsTest(unittest.TestCase):
    """A store's measurements become kgemm / kgemm-default rows the report reads beside a peer."""

    def test_gemm_entries_of_listed_shapes_become_rows(self):
        with tempfile.TemporaryDirectory() as tmp:
            store, shapes = os.path.join(tmp, "store.yaml"), os.path.join(tmp, "shapes.csv")
            with open(store, "w") as f:
                f.write(STORE)
            with open(shapes, "w") as f:
                f.write("set,layer,m,n,k\nresnet50_i224_b1,conv1 (7x7/2),64,64,64\n")
            run = subprocess.run([sys.executable, STORE_ROWS, store, shapes], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            rows = {r["name"]: r for r in json.loads(run.stdout)["benchmarks"]}
            self.assertEqual(sorted(rows), ["gemm/kgemm-default/cuda/fp32/resnet50_i224_b1/m64_n64_k64",
                                            "gemm/kgemm/cuda/fp16/resnet50_i224_b1/m64_n64_k64",
                                            "gemm/kgemm/cuda/fp32/resnet50_i224_b1/m64_n64_k64"])
            kgemm = rows["gemm/kgemm/cuda/fp32/resnet50_i224_b1/m64_n64_k64"]
            self.assertEqual((kgemm["GFLOP/s"], kgemm["label"]), (400, f"conv1 (7x7/2) {CONFIG}"))
            self.assertAlmostEqual(kgemm["real_time"], 2 * 64 ** 3 / 400e3)
            with open(os.path.join(tmp, "rows.json"), "w") as f:
                f.write(run.stdout)
            report = subprocess.run([sys.executable, REPORT, "--out-dir", os.path.join(tmp, "out"),
                                     os.path.join(tmp, "rows.json")], capture_output=True, text=True)
            self.assertEqual(report.returncode, 0, report.stderr)
            with open(os.path.join(tmp, "out", "report.md")) as f:
                row = markdown_table(f.read(), "## gemm · fp32 · resnet50_i224_b1")[0]
            self.assertEqual((row["kgemm config (cuda)"], row["kgemm/kgemm-default (cuda)"]), (CONFIG, "4.00"))


def compare_store(entries, device="{space: cuda, name: GPU X, arch: sm_90, threads: 132}"):
    """A store of `entries`: (m, n, k, config, gflops) each, fp32 GEMMs."""
    lines = [f"device: {device}", "entries:"]
    lines += [f"  - {{kernel: gemm, dtype: f32, order: nn, m: {m}, n: {n}, k: {k}, batch: 1, config: {config}, "
              f"gflops: {gflops}, default_gflops: 1, candidates: 9}}" for m, n, k, config, gflops in entries]
    return "\n".join(lines) + "\n"


def kgemm_run_output(store, rates, configs):
    """kgemm-run --format json with `store`: {(m, n, k): GFLOP/s}, configs {(m, n, k): config}."""
    layers = [{"layer": f"{m}x{n}x{k}", "m": m, "n": n, "k": k, "gflops": g, "config": configs[(m, n, k)]}
              for (m, n, k), g in rates.items()]
    return {"tool": "kgemm-run", "runs": [{"dtype": "fp32", "store": f"/elsewhere/{store}", "layers": layers}]}


class StoreCompareTest(unittest.TestCase):
    """A sharded tune's merged store beside a single tune's, with and without re-timed rounds."""

    SINGLE = [(64, 64, 64, "mb64_a", 100), (128, 64, 64, "mb64_b", 200), (256, 64, 64, "mb64_c", 300)]
    MERGED = [(64, 64, 64, "mb64_a", 104), (128, 64, 64, "mb32_x", 190), (256, 64, 64, "mb32_y", 330)]
    # Re-timed rounds: 128x64x64's configs 1 % apart with 3.9 % spread; 256x64x64's 20 % apart.
    SINGLE_ROUNDS = [{(64, 64, 64): 100, (128, 64, 64): 200, (256, 64, 64): 300},
                     {(64, 64, 64): 102, (128, 64, 64): 208, (256, 64, 64): 303}]
    MERGED_ROUNDS = [{(64, 64, 64): 101, (128, 64, 64): 202, (256, 64, 64): 360},
                     {(64, 64, 64): 99, (128, 64, 64): 205, (256, 64, 64): 363}]

    def run_compare(self, tmp, merged=None, merged_device=None, rounds=True, merged_rounds_store="merged.yaml",
                    dispatched=None):
        paths = {"single.yaml": compare_store(self.SINGLE),
                 "merged.yaml": compare_store(merged or self.MERGED, *([merged_device] if merged_device else []))}
        for name, text in paths.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        args = [os.path.join(tmp, "single.yaml"), os.path.join(tmp, "merged.yaml")]
        if rounds:
            for side, store, outputs, entries in (("reference", "single.yaml", self.SINGLE_ROUNDS, self.SINGLE),
                                                  ("other", merged_rounds_store, self.MERGED_ROUNDS, self.MERGED)):
                configs = {(m, n, k): config for m, n, k, config, _ in entries}
                if side == "other":
                    configs.update(dispatched or {})
                files = []
                for i, rates in enumerate(outputs):
                    files.append(os.path.join(tmp, f"{side}-{i}.json"))
                    with open(files[-1], "w") as f:
                        json.dump(kgemm_run_output(store, rates, configs), f)
                args += [f"--{side}-runs", *files]
        return subprocess.run([sys.executable, STORE_COMPARE, *args], capture_output=True, text=True)

    def test_verdicts_per_problem_from_the_retimed_rounds(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_compare(tmp)
        self.assertEqual(run.returncode, 0, run.stderr)
        rows = {r["problem"]: r for r in markdown_table(run.stdout, "# merged.yaml (other)")}
        self.assertEqual(rows["gemm fp32 64x64x64"]["verdict"], "same config")
        self.assertEqual(rows["gemm fp32 128x64x64"]["verdict"], "within noise")
        self.assertEqual(rows["gemm fp32 128x64x64"]["noise"], "3.9 %")  # 8 / median(200, 208)
        self.assertEqual(rows["gemm fp32 256x64x64"]["verdict"], "other faster")
        self.assertEqual(rows["gemm fp32 256x64x64"]["tuned other/ref"], "1.100")
        self.assertIn("3 problems in both stores; the same config on 1.", run.stdout)
        self.assertIn("same config 1, within noise 1, other faster 1.", run.stdout)

    def test_a_run_that_dispatched_another_config_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_compare(tmp, dispatched={(256, 64, 64): "mb16_fallback"})
        self.assertEqual(run.returncode, 0, run.stderr)
        row = markdown_table(run.stdout, "# merged.yaml (other)")[2]
        self.assertEqual(row["verdict"], "re-timed another config: mb16_fallback")

    def test_without_rounds_only_the_tuned_rates(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_compare(tmp, rounds=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        row = markdown_table(run.stdout, "# merged.yaml (other)")[1]
        self.assertEqual((row["verdict"], "noise" in row), ("not re-timed", False))

    def test_a_problem_in_one_store_only_fails_and_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_compare(tmp, merged=self.MERGED[:2])
        self.assertEqual(run.returncode, 1)
        self.assertIn("Only in the reference store (1): gemm fp32 256x64x64.", run.stdout)

    def test_refusals_name_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_compare(tmp, merged_device="{space: cuda, name: GPU Y, arch: sm_90, threads: 132}")
            self.assertEqual(run.returncode, 2)
            self.assertIn("the stores are of different devices", run.stderr)
            run = self.run_compare(tmp, merged_rounds_store="somewhere.yaml")
            self.assertEqual(run.returncode, 1)
            self.assertIn("other-0.json: ran with the store /elsewhere/somewhere.yaml, not merged.yaml", run.stderr)


if __name__ == "__main__":
    unittest.main()
