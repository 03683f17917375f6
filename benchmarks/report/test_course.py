#!/usr/bin/python3
"""End-to-end check of kgemm_course.py: runs the real kgemm-run on this build's host spaces with
small images and checks the files it writes and the arithmetic behind their numbers (never the
timings themselves: the machine is shared).

Run: /usr/bin/python3 benchmarks/report/test_course.py KGEMM_RUN SPACES  (ctest: course.end_to_end)
  SPACES: comma-separated host spaces of the build, e.g. serial,openmp
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

COURSE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kgemm_course.py")
KGEMM_RUN, SPACES = sys.argv[1], sys.argv[2]
IMAGES, DTYPES = (32, 64), ("fp32", "fp16")
RESNET18_CONVOLUTIONS = 20  # conv1, 16 3x3 convolutions, 3 downsamples (the fc layer is no convolution)


def close(a, b, rel=1e-6):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-12)


def table_rows(markdown, heading):
    """The cells of the markdown table under `heading` (its header and alignment rows skipped)."""
    lines = markdown.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


class CourseEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "report")
        cls.course = subprocess.run(
            [sys.executable, COURSE, "--kgemm-run", KGEMM_RUN, "--out", cls.out, "--space", SPACES, "--model",
             "resnet18", "--image", ",".join(map(str, IMAGES)), "--batch", "1", "--dtype", ",".join(DTYPES),
             "--reps", "1", "--kokkos-num-threads=2"], capture_output=True, text=True)
        cls.spaces = SPACES.split(",")
        with open(os.path.join(cls.out, "course.csv"), encoding="utf-8") as f:
            cls.rows = list(csv.DictReader(f))
        with open(os.path.join(cls.out, "kgemm-run.json"), encoding="utf-8") as f:
            cls.document = json.load(f)
        with open(os.path.join(cls.out, "course.md"), encoding="utf-8") as f:
            cls.markdown = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def runs(self):
        return [(space, dtype, f"resnet18_i{image}_b1") for space in self.spaces for dtype in DTYPES for image in IMAGES]

    def rows_of(self, kind, space, dtype, set_name):
        return [r for r in self.rows if (r["row"], r["space"], r["dtype"], r["set"]) == (kind, space, dtype, set_name)]

    def test_succeeds_and_shows_progress(self):
        self.assertEqual(self.course.returncode, 0, self.course.stderr)
        total = len(self.spaces) * len(DTYPES) * len(IMAGES) * 11  # 11 distinct GEMM shapes in ResNet-18
        self.assertIn(f"[{total}/{total}]", self.course.stderr)

    def test_files_written_and_listed(self):
        listed = self.course.stdout.split()
        for name in ("course.md", "course.csv", "kgemm-run.json", "forward_time_resnet18_b1.png"):
            self.assertIn(os.path.join(self.out, name), listed)
        for space in self.spaces:
            for image in IMAGES:
                self.assertIn(os.path.join(self.out, f"error_{space}_resnet18_i{image}_b1.png"), listed)
        pngs = [p for p in listed if p.endswith(".png")]
        self.assertGreaterEqual(len(pngs), 1 + 2 * len(self.spaces) + 2 * len(IMAGES))
        for path in pngs:
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", path)
            self.assertGreater(os.path.getsize(path), 5000, path)

    def test_every_run_has_its_layers_and_one_forward_row(self):
        for run in self.runs():
            self.assertEqual(len(self.rows_of("layer", *run)), 11, run)
            self.assertEqual(len(self.rows_of("forward", *run)), 1, run)
        self.assertEqual(len(self.rows), len(self.runs()) * 12)

    def test_forward_pass_is_the_sum_of_count_times_layer_time(self):
        for run in self.runs():
            layers, (forward,) = self.rows_of("layer", *run), self.rows_of("forward", *run)
            self.assertEqual(sum(int(r["count"]) for r in layers), RESNET18_CONVOLUTIONS)
            self.assertEqual(int(forward["count"]), RESNET18_CONVOLUTIONS)
            for layer in layers:
                self.assertTrue(close(layer["forward_ms"], int(layer["count"]) * float(layer["kernel_ms"])), layer)
            for key in ("kernel_ms", "launch_ms", "call_ms", "transfer_ms"):
                total = sum(int(r["count"]) * float(r[key]) for r in layers)
                self.assertTrue(close(forward[key], total, 1e-5), (run, key, forward[key], total))
            self.assertTrue(close(forward["forward_ms"], forward["kernel_ms"]))
            self.assertTrue(close(forward["forward_s"], float(forward["forward_ms"]) / 1e3))
            flops = sum(int(r["count"]) * 2.0 * int(r["m"]) * int(r["n"]) * int(r["k"]) for r in layers)
            self.assertTrue(close(forward["gflops"], flops / (float(forward["forward_s"]) * 1e9), 1e-4), run)

    def test_layer_rates_and_host_transfers(self):
        for row in (r for r in self.rows if r["row"] == "layer"):
            flops = 2.0 * int(row["m"]) * int(row["n"]) * int(row["k"])
            self.assertTrue(close(row["gflops"], flops / (float(row["kernel_ms"]) * 1e6), 1e-4), row)
            self.assertEqual(float(row["transfer_ms"]), 0.0, row)  # host spaces: nothing to move
            for key in ("kernel_ms", "launch_ms", "call_ms"):
                self.assertGreater(float(row[key]), 0.0, row)

    def test_image_size_scales_the_rows_of_every_layer(self):
        """im2col: M = batch * H * W of the layer's output, so doubling the image side gives 4x M."""
        for space in self.spaces:
            small = self.rows_of("layer", space, "fp32", "resnet18_i32_b1")
            large = self.rows_of("layer", space, "fp32", "resnet18_i64_b1")
            self.assertEqual([int(r["m"]) * 4 for r in small], [int(r["m"]) for r in large])
            self.assertEqual([(r["n"], r["k"]) for r in small], [(r["n"], r["k"]) for r in large])

    def test_errors_follow_the_arithmetic(self):
        """fp32: the inputs are exact, only the accumulation rounds (far below 1e-4 for K <= 4608).
        fp16: rounding the inputs to 11 bits costs about 2^-11 relative, far above fp32's error; an
        fp16 that silently ran in fp32 would fail here."""
        for run in self.runs():
            for row in self.rows_of("layer", *run):
                max_err, mean_err = float(row["max_rel_err"]), float(row["mean_rel_err"])
                self.assertLessEqual(mean_err, 4 * max_err, row)
                if run[1] == "fp32":
                    self.assertLess(max_err, 1e-4, row)
                else:
                    self.assertGreater(mean_err, 2.0 ** -14, row)
                    self.assertLess(max_err, 4 * 2.0 ** -11, row)

    def test_json_and_csv_agree(self):
        by_key = {(r["space"], r["dtype"], r["set"]): r for r in self.rows if r["row"] == "forward"}
        self.assertEqual(len(self.document["runs"]), len(self.runs()))
        for run in self.document["runs"]:
            row = by_key[run["space"], run["dtype"], run["set"]]
            self.assertTrue(close(row["kernel_ms"], run["forward"]["kernel_ms"]))
            self.assertTrue(run["operands_in_host_memory"])

    def test_markdown_forward_table_matches_the_csv(self):
        rows = table_rows(self.markdown, "## Forward pass")
        self.assertEqual(len(rows), len(DTYPES) * len(IMAGES))
        by_key = {(r["space"], r["dtype"], r["image"]): r for r in self.rows if r["row"] == "forward"}
        for cells in rows:
            image, dtype = cells[1].split("x")[0], cells[3]
            for column, space in enumerate(self.spaces):
                seconds = float(by_key[space, dtype, image]["forward_s"])
                self.assertEqual(cells[4 + column], f"{seconds:.6f}", cells)
        for space in self.spaces:
            self.assertIn(f"### {'OpenMP' if space == 'openmp' else space.capitalize()} · fp16 · resnet18_i64_b1",
                          self.markdown)

    def test_bad_input_stops_with_the_reason(self):
        for args, message in ((["--image", "32,0"], "option --image: '0'"),
                              (["--space", "nosuch"], "unknown space 'nosuch'"),
                              (["--bogus"], "unrecognized arguments: --bogus")):
            run = subprocess.run([sys.executable, COURSE, "--kgemm-run", KGEMM_RUN, "--out",
                                  os.path.join(self.tmp.name, "bad"), *args], capture_output=True, text=True)
            self.assertNotEqual(run.returncode, 0, args)
            self.assertIn(message, run.stderr, args)
        run = subprocess.run([sys.executable, COURSE, "--kgemm-run", "/nonexistent/kgemm-run", "--out",
                              os.path.join(self.tmp.name, "bad")], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("not an executable file", run.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
