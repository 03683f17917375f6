"""Kokkos' life in a Python process, and tuning from Python: each in a process of its own, since
Kokkos starts once per process and dispatch reads a store once."""
import os
import subprocess
import sys
import textwrap


def run(code, **env):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**os.environ, **env},
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_initialize_chooses_threads_once_and_finalize_ends_kokkos():
    run("""
        import numpy as np, pytest, kgemm
        kgemm.initialize(threads=1)
        assert kgemm.device("cpu")["threads"] == 1
        with pytest.raises(ValueError, match="already running"):
            kgemm.initialize(threads=2)
        c = kgemm.gemm(np.ones((3, 2), np.float32), np.ones((2, 4), np.float32))
        assert (c == 2).all()
        kgemm.finalize()
        with pytest.raises(ValueError, match="finalized"):
            kgemm.gemm(np.ones((3, 2), np.float32), np.ones((2, 4), np.float32))
        """)


def test_bad_thread_count_is_refused_by_name():
    run("""
        import pytest, kgemm
        with pytest.raises(ValueError, match="--kokkos-num-threads"):
            kgemm.initialize(threads=0)
        """)


def test_tune_writes_the_store_and_later_products_run_its_winner(tmp_path):
    store = tmp_path / "store.yaml"
    out = run("""
        import numpy as np, kgemm
        report = kgemm.tune([(96, 40, 72)], budget=3)
        row, = report["rows"]
        assert row["stored"] and row["gflops"] > 0 and row["problem"] == kgemm.problem_key(96, 40, 72), report
        a, b = np.ones((96, 72), np.float32), np.ones((72, 40), np.float32)
        info = kgemm.explain(a, b)
        assert info["source"] == "exact entry" and info["config"] == row["config"], info
        assert (kgemm.gemm(a, b) == 72).all()
        print(report["store"])
        """, KGEMM_CONFIG_FILE=str(store))
    assert out.strip() == str(store) and "m: 96, n: 40, k: 72, batch: 1" in store.read_text()


def test_tune_times_cold_operands_when_asked_and_refuses_others_by_name(tmp_path):
    store = tmp_path / "store.yaml"
    run("""
        import pytest, kgemm
        row, = kgemm.tune([(96, 40, 72)], budget=2, operands="cold")["rows"]
        assert row["stored"] and row["gflops"] > 0, row
        with pytest.raises(ValueError, match="kgemm.tune: unknown operands 'hot' \\(expected warm or cold\\)"):
            kgemm.tune([(96, 40, 72)], budget=2, operands="hot")
        """, KGEMM_CONFIG_FILE=str(store))
    assert "m: 96, n: 40, k: 72, batch: 1" in store.read_text()


def test_kgemm_tune_tunes_a_shape_on_its_first_product(tmp_path):
    store = tmp_path / "store.yaml"
    code = """
        import numpy as np, kgemm
        a, b = np.ones((64, 48), np.float32), np.ones((48, 40), np.float32)
        assert (kgemm.gemm(a, b) == 48).all()
        print(kgemm.explain(a, b)["source"])
        """
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env={**os.environ, "KGEMM_TUNE": "2", "KGEMM_CONFIG_FILE": str(store)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tuned on first use"
    assert "kgemm: tuned gemm_f32_nn_m64_n40_k48_b1 on first use (KGEMM_TUNE=2" in result.stderr
    assert "m: 64, n: 40, k: 48" in store.read_text()
    # The next run finds it in the store.
    assert run(code, KGEMM_CONFIG_FILE=str(store)).strip() == "exact entry"


def test_bad_kgemm_tune_is_refused_by_name():
    run("""
        import numpy as np, pytest, kgemm
        with pytest.raises(ValueError, match="KGEMM_TUNE='soon' is not a budget"):
            kgemm.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
        """, KGEMM_TUNE="soon")


def test_kgemm_warnings_are_python_warnings(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("device: {space: [\n")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import warnings, numpy as np, kgemm
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = kgemm.gemm(np.ones((3, 2), np.float32), np.ones((2, 4), np.float32))
        assert (c == 2).all()
        ours = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert len(ours) == 1 and ours[0].startswith("kgemm: ignoring tuned configs: kgemm: "), ours
        """)], env={**os.environ, "KGEMM_CONFIG_FILE": str(bad)}, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "kgemm: warning" not in result.stderr, result.stderr
