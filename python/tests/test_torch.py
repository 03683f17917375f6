"""torch tensors on the CPU, which the package hands to the module described (pointer, shape,
strides) rather than through DLPack: the same products, refusals and in-place writes as NumPy's.
Skipped where torch is not installed."""
import numpy as np
import pytest

import kgemm
from conftest import check_product

torch = pytest.importorskip("torch")


def tensor(rng, shape, dtype="float32"):
    return torch.from_numpy(rng.uniform(-1, 1, shape).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_torch_cpu_products_in_place(rng, dtype):
    a, b = tensor(rng, (37, 45), dtype), tensor(rng, (21, 45), dtype).t()  # b: a transposed view
    c = torch.empty((37, 21), dtype=a.dtype)
    pointer = c.data_ptr()
    assert kgemm.gemm(a, b, c) is c and c.data_ptr() == pointer
    config = kgemm.explain(a, b, c)["config"]
    check_product(c.numpy(), a.numpy(), b.numpy(), config=config, seed=rng.seed)
    window = torch.zeros((50, 40), dtype=a.dtype)
    kgemm.gemm(a, b, window[3:40, 5:26], alpha=2.0)
    assert (window[:3] == 0).all() and (window[:, :5] == 0).all()
    check_product(window[3:40, 5:26].numpy(), a.numpy(), b.numpy(), alpha=2.0, config=config, seed=rng.seed)


def test_torch_batched_and_made_result(rng):
    x, w = tensor(rng, (4, 30, 20)), tensor(rng, (20, 10))
    y = kgemm.batched_gemm(x, w)
    assert isinstance(y, torch.Tensor) and y.shape == (4, 30, 10)
    check_product(y.numpy(), x.numpy(), w.numpy(), config=kgemm.explain(x, w, batched=True)["config"], seed=rng.seed)


@pytest.mark.parametrize("call,pattern", [
    (lambda: kgemm.gemm(torch.ones((4, 5), dtype=torch.int64), torch.ones((5, 3), dtype=torch.int64),
                        torch.ones((4, 3), dtype=torch.int64)), "a is int64"),
    (lambda: kgemm.gemm(torch.ones((4, 5)), torch.ones((4, 3))), "inner dimensions differ"),
    (lambda: kgemm.gemm(torch.ones((4, 5)), torch.ones((5, 3)), torch.zeros(3).expand(4, 3)), "overlap"),
    (lambda: kgemm.gemm(torch.ones((4, 5)), torch.ones((5, 3)), torch.ones((2, 2, 2, 2))), "4 dimensions"),
    (lambda: kgemm.gemm(torch.ones((4, 5), dtype=torch.bfloat16), torch.ones((5, 3), dtype=torch.bfloat16)),
     "a is bfloat16"),
])
def test_torch_bad_input_is_refused_by_name(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


@pytest.mark.parametrize("make", [lambda: torch.ones((4, 5), device="meta"),
                                  lambda: torch.ones((4, 5)).to_sparse()])
def test_tensors_without_readable_memory_are_refused_by_name(make):
    with pytest.raises((TypeError, ValueError), match="a is a|a lives on"):
        kgemm.gemm(make(), torch.ones((5, 3)), torch.empty((4, 3)))
