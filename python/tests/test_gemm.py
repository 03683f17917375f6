"""kgemm on NumPy arrays: products against fp64 within kgemm's error bound, in place, any strides;
bad inputs refused with a message that names what and why."""
import numpy as np
import pytest

import kgemm
from conftest import check_product, dispatched_config

SHAPES = [(1, 1, 1), (7, 13, 5), (64, 64, 64), (127, 65, 33), (300, 17, 259)]  # m, n, k


def operand(rng, rows, cols, dtype, layout):
    """A rows x cols array of `dtype` laid out as 'C' (row-major), 'F' (column-major) or 'strided'
    (every other row and column of a larger array: no unit stride at all)."""
    if layout == "strided":
        big = rng.uniform(-1, 1, (2 * rows + 1, 2 * cols + 1)).astype(dtype)
        return big[1::2, 1::2]
    x = rng.uniform(-1, 1, (rows, cols)).astype(dtype)
    return np.asfortranarray(x) if layout == "F" else x


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_gemm_matches_fp64(rng, dtype, m, n, k, trans_a, trans_b, layout):
    a = operand(rng, *((k, m) if trans_a else (m, k)), dtype, layout)
    b = operand(rng, *((n, k) if trans_b else (k, n)), dtype, layout)
    c = kgemm.gemm(a, b, trans_a=trans_a, trans_b=trans_b)
    assert isinstance(c, np.ndarray) and c.shape == (m, n) and c.dtype == np.dtype(dtype)
    config = dispatched_config(a, b, trans_a=trans_a, trans_b=trans_b)
    check_product(c, a, b, trans_a=trans_a, trans_b=trans_b, config=config, seed=rng.seed)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (-0.5, 2.0), (0.0, 1.5), (3.0, 0.0)])
def test_alpha_beta_update_c_in_place(rng, dtype, alpha, beta):
    m, n, k = 37, 21, 45
    a, b = operand(rng, m, k, dtype, "C"), operand(rng, k, n, dtype, "C")
    c0 = operand(rng, m, n, dtype, "C")
    c = c0.copy()
    address = c.ctypes.data
    out = kgemm.gemm(a, b, c, alpha=alpha, beta=beta)
    assert out is c and c.ctypes.data == address
    check_product(c, a, b, c0, alpha=alpha, beta=beta, config=dispatched_config(a, b, c), seed=rng.seed)


def test_writes_only_its_window_of_a_larger_array(rng):
    # c is a strided window of `outer`: everything around it must keep its value.
    a, b = operand(rng, 20, 30, "float32", "C"), operand(rng, 30, 10, "float32", "C")
    outer = np.full((50, 40), 7.0, dtype=np.float32)
    window = outer[5:45:2, 3:33:3]
    kgemm.gemm(a, b, window)
    untouched = np.ones(outer.shape, dtype=bool)
    untouched[5:45:2, 3:33:3] = False
    assert np.all(outer[untouched] == 7.0)
    check_product(window, a, b, config=dispatched_config(a, b, window), seed=rng.seed)


def test_float16_accumulation(rng):
    a, b = operand(rng, 33, 70, "float16", "C"), operand(rng, 70, 19, "float16", "C")
    c = kgemm.gemm(a, b, accumulate="float16")
    config = dispatched_config(a, b, accumulate="float16")
    check_product(c, a, b, accumulate="float16", config=config, seed=rng.seed)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shared", [None, "a", "b"])
def test_batched_gemm_matches_fp64(rng, dtype, shared):
    batch, m, n, k = 5, 19, 23, 31
    a = operand(rng, m, k, dtype, "C") if shared == "a" else rng.uniform(-1, 1, (batch, m, k)).astype(dtype)
    b = operand(rng, k, n, dtype, "C") if shared == "b" else rng.uniform(-1, 1, (batch, k, n)).astype(dtype)
    c = kgemm.batched_gemm(a, b)
    assert c.shape == (batch, m, n)
    config = dispatched_config(a, b, batched=True)
    check_product(c, a, b, config=config, seed=rng.seed)


def test_empty_extents():
    a, b = np.ones((4, 0), np.float32), np.ones((0, 3), np.float32)
    c = np.full((4, 3), 5.0, np.float32)
    kgemm.gemm(a, b, c, beta=1.0)  # k = 0: c = beta c
    assert np.all(c == 5.0)
    assert kgemm.gemm(np.ones((0, 4), np.float32), np.ones((4, 3), np.float32)).shape == (0, 3)


def test_explicit_config_runs_that_config(rng):
    a, b = operand(rng, 40, 24, "float32", "C"), operand(rng, 24, 16, "float32", "C")
    default = kgemm.explain(a, b)
    info = kgemm.explain(a, b, config=default["config"])
    assert info["source"] == "given" and info["config"] == default["config"]
    c = kgemm.gemm(a, b, config=default["config"])
    check_product(c, a, b, config=default["config"], seed=rng.seed)


def test_explain_names_the_choice_and_store():
    a, b = np.ones((128, 64), np.float32), np.ones((64, 32), np.float32)
    info = kgemm.explain(a, b)
    assert info["problem"] == kgemm.problem_key(128, 32, 64)
    assert info["source"] in ("exact entry", "model", "space default")
    assert info["config"] and info["space"] in kgemm.spaces() and info["store"]
    if info["source"] != "space default":
        assert info["predicted_gflops"] > 0 and info["source_problem"]


def test_device_facts():
    facts = kgemm.device("cpu")
    assert facts["space"] in kgemm.spaces() and facts["threads"] >= 1 and facts["device"] and facts["arch"]


def test_problem_key():
    assert kgemm.problem_key(12544, 64, 147) == "gemm_f32_nn_m12544_n64_k147_b1"
    assert kgemm.problem_key(8, 4, 2, batch=3, dtype="float16", kernel="sharedb", trans_b=True) == \
        "sharedb_f16_nt_m8_n4_k2_b3"
    with pytest.raises(ValueError, match="bfloat16"):
        kgemm.problem_key(1, 1, 1, dtype="bfloat16")


# ---- refusals: each names the argument and what kgemm takes ----

A = np.ones((4, 5), np.float32)
B = np.ones((5, 3), np.float32)


@pytest.mark.parametrize("call,error,pattern", [
    (lambda: kgemm.gemm(A.astype(np.int64), B), ValueError, "a is int64; kgemm multiplies float32 or float16"),
    (lambda: kgemm.gemm(A, B.astype(np.float64)), ValueError, "b is float64"),
    (lambda: kgemm.gemm(A, B.astype(np.float16)), ValueError, "all three must be of one dtype"),
    (lambda: kgemm.gemm(A, np.ones((4, 3), np.float32)), ValueError, "inner dimensions differ: a is 4 x 5, b is 4 x 3"),
    (lambda: kgemm.gemm(A, B, trans_a=True), ValueError, r"inner dimensions differ: a.T is 5 x 4"),
    (lambda: kgemm.gemm(A, B, np.ones((4, 4), np.float32)), ValueError, r"c has shape \(4, 4\) where the product is 4 x 3"),
    (lambda: kgemm.gemm(np.ones(5, np.float32), B), ValueError, "a has shape"),
    (lambda: kgemm.gemm(A, np.ones((2, 5, 3), np.float32)), ValueError, "kgemm.batched_gemm multiplies batches"),
    (lambda: kgemm.gemm(A, np.ones((1, 1, 5, 3), np.float32), np.ones((4, 3), np.float32)), ValueError, "4 dimensions"),
    (lambda: kgemm.gemm(A, B, np.broadcast_to(np.float32(0), (4, 3))), ValueError, "c is read-only|overlap"),
    (lambda: kgemm.gemm(A, B, np.zeros((4, 3), np.float32)[::-1]), ValueError, "negative stride"),
    (lambda: kgemm.gemm([[1.0]], [[1.0]], np.zeros((1, 1), np.float32)), TypeError, "a is a list, not an array"),
    (lambda: kgemm.gemm(A, B, beta=1.0), ValueError, "beta=1.0 scales c, and no c was given"),
    (lambda: kgemm.gemm(A, B, config="mb0_nonsense"), ValueError, "config"),
    (lambda: kgemm.gemm(A, B, accumulate="float16"), ValueError, "accumulate='float16' is for float16 arrays"),
    (lambda: kgemm.gemm(A, B, accumulate="int8"), ValueError, "expected 'float32' or 'float16'"),
    (lambda: kgemm.batched_gemm(np.ones((2, 4, 5), np.float32), np.ones((3, 5, 3), np.float32), np.zeros((2, 4, 3), np.float32)),
     ValueError, "b holds 3 matrices, c 2"),
    (lambda: kgemm.batched_gemm(A, B), ValueError, "pass c"),
    (lambda: kgemm.device("tpu"), ValueError, "expected 'cpu' or 'cuda'"),
    (lambda: kgemm.tune(["gemm_f32_nn_m-1_n1_k1_b1"]), ValueError, "m-1|negative|not a problem"),
    (lambda: kgemm.tune([(8, 8, 8)], budget="soon"), ValueError, "soon"),
])
def test_bad_input_is_refused_by_name(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_read_only_c_is_refused():
    c = np.zeros((4, 3), np.float32)
    c.setflags(write=False)
    with pytest.raises(ValueError, match="c is read-only"):
        kgemm.gemm(A, B, c)


def test_overlapping_c_is_refused():
    base = np.zeros(20, np.float32)
    c = np.lib.stride_tricks.as_strided(base, shape=(4, 3), strides=(4, 4))  # rows overlap
    with pytest.raises(ValueError, match="overlap"):
        kgemm.gemm(A, B, c)


def test_cuda_arrays_need_a_cuda_build():
    if "cuda" in kgemm.spaces():
        pytest.skip("this build has CUDA: test_gpu.py covers it")
    with pytest.raises(ValueError, match="built without CUDA"):
        kgemm.device("cuda")


def test_resnet_layers():
    layers = kgemm.resnet_layers("resnet18", 224, 1)
    assert layers[0] == {"layer": layers[0]["layer"], "m": 112 * 112, "n": 64, "k": 3 * 7 * 7, "count": 1}
    assert sum(layer["count"] for layer in layers) == 20  # ResNet-18's convolutions, shortcuts included
    with pytest.raises(ValueError, match="resnet"):
        kgemm.resnet_layers("vgg16")
