"""kgemm on the GPU from torch and CuPy: in place of the arrays' memory, on the caller's stream,
correct against fp64 within kgemm's error bound. Skipped without a CUDA build and a GPU."""
import numpy as np
import pytest

import kgemm
from conftest import check_product

torch = pytest.importorskip("torch")
if "cuda" not in kgemm.spaces() or not torch.cuda.is_available():
    pytest.skip("needs kgemm built with CUDA and a GPU", allow_module_level=True)

DTYPES = {"float32": torch.float32, "float16": torch.float16}


def on_gpu(rng, shape, dtype):
    return torch.from_numpy(rng.uniform(-1, 1, shape).astype(dtype)).cuda()


def host(x):
    return x.cpu().numpy()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (127, 65, 33), (512, 256, 1152), (3136, 64, 576)])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_torch_product_in_place(rng, dtype, m, n, k, trans_a, trans_b):
    a = on_gpu(rng, (k, m) if trans_a else (m, k), dtype)
    b = on_gpu(rng, (n, k) if trans_b else (k, n), dtype)
    c = torch.empty((m, n), dtype=DTYPES[dtype], device="cuda")
    pointer, allocated = c.data_ptr(), torch.cuda.memory_allocated()
    out = kgemm.gemm(a, b, c, trans_a=trans_a, trans_b=trans_b)
    assert out is c and c.data_ptr() == pointer
    assert torch.cuda.memory_allocated() == allocated  # nothing copied, nothing allocated by torch
    torch.cuda.synchronize()
    config = kgemm.explain(a, b, c, trans_a=trans_a, trans_b=trans_b)["config"]
    check_product(host(c), host(a), host(b), trans_a=trans_a, trans_b=trans_b, config=config, seed=rng.seed)


def test_torch_strided_views_and_batches(rng):
    big = on_gpu(rng, (6, 90, 70), "float32")
    a = big[:, 5:85:2, 3:63]  # (6, 40, 60), row stride 140
    b = on_gpu(rng, (60, 24), "float32")  # shared by the batch
    c = kgemm.batched_gemm(a, b)
    assert isinstance(c, torch.Tensor) and c.is_cuda and c.shape == (6, 40, 24)
    torch.cuda.synchronize()
    check_product(host(c), host(a), host(b), config=kgemm.explain(a, b, batched=True)["config"], seed=rng.seed)


def test_runs_on_the_callers_stream(rng):
    a, b = on_gpu(rng, (1024, 1024), "float32"), on_gpu(rng, (1024, 512), "float32")
    c = torch.zeros((1024, 512), device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a.mul_(2)  # queued on `stream`: the product must see it
        kgemm.gemm(a, b, c)
        c.add_(1)
    stream.synchronize()
    config = kgemm.explain(a, b, c)["config"]
    check_product(host(c) - 1, host(a), host(b), config=config, seed=rng.seed)


def test_cupy_product_in_place(rng):
    cupy = pytest.importorskip("cupy")
    a = cupy.asarray(rng.uniform(-1, 1, (300, 200)).astype(np.float32))
    b = cupy.asarray(rng.uniform(-1, 1, (200, 100)).astype(np.float32))
    c = cupy.empty((300, 100), dtype=cupy.float32)
    pointer = c.data.ptr
    assert kgemm.gemm(a, b, c) is c and c.data.ptr == pointer
    made = kgemm.gemm(a, b)
    assert isinstance(made, cupy.ndarray)
    cupy.cuda.get_current_stream().synchronize()
    config = kgemm.explain(a, b)["config"]
    check_product(cupy.asnumpy(c), cupy.asnumpy(a), cupy.asnumpy(b), config=config, seed=rng.seed)
    check_product(cupy.asnumpy(made), cupy.asnumpy(a), cupy.asnumpy(b), config=config, seed=rng.seed)


def test_mixed_devices_are_refused():
    a, b = torch.ones((4, 5)), torch.ones((5, 3), device="cuda")
    with pytest.raises(ValueError, match="a is on the host .* but b on cuda:0; move them to one device"):
        kgemm.gemm(a, b, torch.empty((4, 3), device="cuda"))


def test_tensors_autograd_records_are_refused_by_name():
    a = torch.ones((4, 5), device="cuda", requires_grad=True)
    with pytest.raises(ValueError, match=r"a requires grad, .* pass a.detach\(\)"):
        kgemm.gemm(a, torch.ones((5, 3), device="cuda"))
    c = torch.empty((4, 3), device="cuda", requires_grad=True)
    with pytest.raises(ValueError, match="c requires grad"):
        kgemm.gemm(a.detach(), torch.ones((5, 3), device="cuda"), c)
