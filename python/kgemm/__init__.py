"""kgemm from Python: autotuned GEMM kernels on Kokkos, called on NumPy arrays on the CPU and on
CuPy arrays and torch tensors on the GPU, in place of their memory (no copies).

    import numpy as np, kgemm
    a, b = np.random.rand(512, 256).astype(np.float32), np.random.rand(256, 64).astype(np.float32)
    c = kgemm.gemm(a, b)                      # c = a @ b, a NumPy array
    kgemm.explain(a, b)                       # which kernel config runs it, and why

Products run on the space of the arrays' device: the host space (OpenMP) for CPU arrays, finished
on return; CUDA for GPU arrays, queued on the caller's current stream (torch's or CuPy's), as
their own operations are. Kokkos starts on the first product (kgemm.initialize() chooses its
threads or GPU before it) and ends when Python exits.
"""
import atexit
import os

from . import _kgemm

__all__ = ["gemm", "batched_gemm", "explain", "tune", "device", "spaces", "initialize", "finalize", "problem_key",
           "resnet_layers"]

# The stores shipped with the package serve after the user's own ($KGEMM_CONFIG_PATH, then
# ~/.local/share/kgemm), as an installed prefix's do for the command-line tools.
_kgemm.add_store_directory(os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs"))
atexit.register(_kgemm.finalize)


def initialize(threads=None, device_id=None, kokkos_args=()):
    """Starts Kokkos with `threads` host threads and on CUDA device `device_id` (defaults: Kokkos',
    from OMP_NUM_THREADS / KOKKOS_NUM_THREADS / KOKKOS_DEVICE_ID). Only before the first product,
    which otherwise starts it with the defaults."""
    args = list(kokkos_args)
    if threads is not None:
        args.append(f"--kokkos-num-threads={int(threads)}")
    if device_id is not None:
        args.append(f"--kokkos-device-id={int(device_id)}")
    _kgemm.initialize(args)


def finalize():
    """Ends Kokkos, as Python's exit does. Kokkos starts once per process: no product runs after it."""
    _kgemm.finalize()


def spaces():
    """The execution spaces this build has, e.g. ['serial', 'openmp', 'cuda']."""
    return _kgemm.spaces()


def device(kind="cpu"):
    """The facts kgemm's dispatch keys on for the 'cpu' or 'cuda' device (name, architecture,
    cores or SMs, memory bandwidth) and the tuned store that serves it."""
    return _kgemm.device(kind)


def _library(x):
    return type(x).__module__.split(".")[0]


def _stream(c):
    """The caller's current stream on c's GPU (0 on the host): where the product is queued."""
    lib = _library(c)
    if lib == "torch" and c.is_cuda:
        import torch
        # The raw handle, as Triton reads it: current_stream() makes a Stream object per call,
        # a microsecond or two of every small product.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        return raw(c.device.index) if raw else torch.cuda.current_stream(c.device).cuda_stream
    if lib == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


def _empty(like, shape):
    """An uninitialised array of `like`'s library, dtype and device."""
    lib = _library(like)
    if lib == "torch":
        import torch
        return torch.empty(shape, dtype=like.dtype, device=like.device)
    if lib == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=like.dtype)
    if lib == "numpy":
        import numpy
        return numpy.empty(shape, dtype=like.dtype)
    if hasattr(like, "__array_namespace__"):
        return like.__array_namespace__().empty(shape, dtype=like.dtype, device=like.device)
    raise TypeError(f"kgemm: cannot make a result like a {type(like).__name__}; pass c")


def _extents(fn, x, role, transposed):
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) < 2:
        raise ValueError(f"{fn}: {role} has shape {shape}; kgemm multiplies matrices and (batch, rows, cols) batches")
    rows, cols = shape[-2], shape[-1]
    return (cols, rows) if transposed else (rows, cols)


def _result(fn, a, b, trans_a, trans_b, batched):
    m, _ = _extents(fn, a, "a", trans_a)
    _, n = _extents(fn, b, "b", trans_b)
    if not batched:
        return _empty(a, (m, n))
    batches = [x.shape[0] for x in (a, b) if len(x.shape) == 3]
    if not batches:
        raise ValueError(f"{fn}: a and b are both single matrices; pass c (batch, m, n) to say the batch")
    return _empty(a, (batches[0], m, n))


def _check_autograd(fn, arrays):
    """torch tensors that autograd records are refused: kgemm's products are not recorded, so a
    gradient through one would silently be missing."""
    for role, x in arrays:
        if _library(x) == "torch" and x.requires_grad:
            raise ValueError(f"{fn}: {role} requires grad, and autograd does not record kgemm's products; "
                             f"pass {role}.detach() to multiply its values")


def _torch_described(x):
    """A torch tensor as the module reads it without DLPack, whose export (torch's __dlpack__)
    costs a few microseconds per operand: pointer, dtype name, on CUDA, device, shape, strides."""
    return x.data_ptr(), str(x.dtype)[6:], x.is_cuda, x.get_device() if x.is_cuda else 0, x.shape, x.stride()


def _describable(x):
    """A dense torch tensor in CPU or CUDA memory: anything else (sparse, meta, another device)
    goes through DLPack, which refuses it by name."""
    if _library(x) != "torch" or not (x.is_cuda or x.is_cpu):
        return False
    import torch
    return x.layout == torch.strided


def _operands(a, b, c):
    """The three operands as the module takes them, and whether they come described."""
    if _describable(a) and _describable(b) and _describable(c):
        return _torch_described(a), _torch_described(b), _torch_described(c), True
    return a, b, c, False


def _call(fn, batched, a, b, c, alpha, beta, trans_a, trans_b, config, accumulate, run):
    _check_autograd(fn, (("a", a), ("b", b)) if c is None else (("a", a), ("b", b), ("c", c)))
    if c is None:
        if beta != 0:
            raise ValueError(f"{fn}: beta={beta} scales c, and no c was given")
        c = _result(fn, a, b, trans_a, trans_b, batched)
    *operands, described = _operands(a, b, c)
    run(*operands, float(alpha), float(beta), bool(trans_a), bool(trans_b), batched, config or "", accumulate,
        _stream(c), described)
    return c


def gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, config=None, accumulate="float32"):
    """c = alpha * op(a) @ op(b) + beta * c, op(x) = x.T when trans_x; returns c.

    a, b, c: float32 or float16 matrices of one library and device (NumPy on the CPU; CuPy or
    torch on the CPU or GPU), any strides; c is written in place, or made like a when None.
    config: a kgemm config string to run instead of the tuned choice ('mb128_nb64_...').
    accumulate: 'float16' accumulates float16 products in float16 (faster on the CPU, less exact).
    """
    return _call("kgemm.gemm", False, a, b, c, alpha, beta, trans_a, trans_b, config, accumulate, _kgemm.gemm)


def batched_gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, config=None,
                 accumulate="float32"):
    """c[i] = alpha * op(a[i]) @ op(b[i]) + beta * c[i] for every i of the (batch, m, n) c; a or b
    may be one (rows, cols) matrix shared by the whole batch (a convolution's weights). Returns c."""
    return _call("kgemm.batched_gemm", True, a, b, c, alpha, beta, trans_a, trans_b, config, accumulate,
                 _kgemm.gemm)


def explain(a, b, c=None, *, batched=False, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, config=None,
            accumulate="float32"):
    """Which config gemm (batched_gemm when batched) would run on these arrays and why, without
    running it: a dict with the problem key, the config, its source ('exact entry': the store's
    entry for this problem; 'model': the dispatch model's pick among the store's configs, with the
    predicted rate and its factors; 'space default'), and the store in use."""
    fn = "kgemm.explain"
    if c is None:
        c = _result(fn, a, b, trans_a, trans_b, batched)
    *operands, described = _operands(a, b, c)
    return _kgemm.explain(*operands, float(alpha), float(beta), bool(trans_a), bool(trans_b), batched, config or "",
                          accumulate, _stream(c), described)


def problem_key(m, n, k, batch=1, dtype="float32", kernel="gemm", trans_a=False, trans_b=False):
    """The store's key of a product, e.g. problem_key(12544, 64, 147) == 'gemm_f32_nn_m12544_n64_k147_b1'.
    kernel: 'gemm', 'batched' or 'sharedb' (a batch sharing one b)."""
    order = ("t" if trans_a else "n"), ("t" if trans_b else "n")
    return _kgemm.problem_key(kernel, dtype, *order, int(m), int(n), int(k), int(batch))

def resnet_layers(model="resnet18", image=224, batch=1):
    """The distinct convolution GEMMs of a ResNet ('resnet18', 'resnet34', 'resnet50') in im2col
    form at an image size and batch: [{'layer', 'm', 'n', 'k', 'count'}], m = batch x output
    pixels, n = output channels, k = input channels x kernel area; count = layers of that shape."""
    return _kgemm.resnet_layers(model, int(image), int(batch))


def tune(problems, *, device="cpu", budget=8, strategy="climb", seed=1, reps=7, operands="warm", store=None):
    """Tunes each problem as `autotune` does and writes the winners to the device's store (the one
    autotune extends, or `store`), so that later products of those shapes run them.

    problems: problem keys (problem_key) or (m, n, k) / (m, n, k, batch) tuples of float32 products.
    budget: configs measured per problem (an int) or seconds ('30s').
    operands: 'warm' (each timed call on the same operands) or 'cold' (each on the next of a ring
    of operand sets larger than the cache, as the benchmarks time a call; docs/tuning.md).
    Returns {'store': path, 'rows': [{'problem', 'config', 'gflops', 'default_gflops', ...}]}.
    """
    keys = [p if isinstance(p, str) else problem_key(*p) for p in problems]
    return _kgemm.tune(keys, device, str(budget), strategy, int(seed), int(reps), operands, store or "")
