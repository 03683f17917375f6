#!/usr/bin/env python3
"""What a kgemm call costs from Python, next to the library a Python user would call instead, in
one process: microseconds per call of kgemm.gemm(a, b, c) and torch.matmul(a, b, out=c) (CUDA
tensors) or numpy.matmul(a, b, out=c) (CPU), c given, queued back to back and timed to the
device's finish. On a 1x1x1 product the time is all overhead; the ResNet-50 batch-1 layers show
it against real work.

Usage: benchmarks/python_overhead.py [--device cpu|cuda] [--calls N] [--repeats R]
Prints a Markdown table: per shape, the median over R rounds of N calls each, the three timed
rounds interleaved.
"""
import argparse
import statistics
import time

import numpy as np

import kgemm


def per_call_us(runs, sync, calls, repeats):
    """Median microseconds per call of each of `runs`, their rounds interleaved (one round of each
    in turn), so that a machine's drift falls on all of them alike."""
    for run in runs:
        run()
    sync()
    rounds = [[] for _ in runs]
    for _ in range(repeats):
        for run, times in zip(runs, rounds):
            start = time.perf_counter()
            for _ in range(calls):
                run()
            sync()
            times.append((time.perf_counter() - start) / calls * 1e6)
    return [statistics.median(times) for times in rounds]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    shapes = [("1x1x1", 1, 1, 1)] + [(l["layer"], l["m"], l["n"], l["k"]) for l in kgemm.resnet_layers("resnet50", 224, 1)[:6]]
    rng = np.random.default_rng(1)
    if args.device == "cuda":
        import torch
        peer_name, sync = f"torch {torch.__version__}", torch.cuda.synchronize
        def arrays(m, n, k):
            return (torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)).cuda(),
                    torch.from_numpy(rng.standard_normal((k, n), dtype=np.float32)).cuda(),
                    torch.empty((m, n), device="cuda"))
        peer = lambda a, b, c: torch.matmul(a, b, out=c)
        print(f"device: {torch.cuda.get_device_name()}, kgemm: {kgemm.device('cuda')['device']}")
    else:
        peer_name, sync = f"numpy {np.__version__}", lambda: None
        def arrays(m, n, k):
            return (rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32),
                    np.empty((m, n), np.float32))
        peer = lambda a, b, c: np.matmul(a, b, out=c)
        print(f"device: {kgemm.device('cpu')['device']} ({kgemm.device('cpu')['threads']} threads)")
    print(f"\n| shape | M x N x K | kgemm us/call | of which the compiled call | {peer_name} us/call | kgemm - peer |")
    print("|---|---|--:|--:|--:|--:|")
    for name, m, n, k in shapes:
        a, b, c = arrays(m, n, k)
        calls = args.calls if m * n * k < 1e6 else max(20, args.calls // 20)
        # The module's call alone, its arguments ready (the operands as the package hands them,
        # the stream looked up once): what the package's Python adds is the difference.
        stream = kgemm._stream(c)
        *operands, described = kgemm._operands(a, b, c)
        ours, compiled, theirs = per_call_us(
            [lambda: kgemm.gemm(a, b, c),
             lambda: kgemm._kgemm.gemm(*operands, 1.0, 0.0, False, False, False, "", "float32", stream, described),
             lambda: peer(a, b, c)], sync, calls, args.repeats)
        print(f"| {name} | {m}x{n}x{k} | {ours:.1f} | {compiled:.1f} | {theirs:.1f} | {ours - theirs:+.1f} |")
    if hasattr(a, "__dlpack__"):
        # One array's DLPack export (what the module's import of each operand starts with).
        export, = per_call_us([lambda: a.__dlpack__()], lambda: None, args.calls, args.repeats)
        print(f"\nDLPack export of one operand (a.__dlpack__()): {export:.1f} us")


if __name__ == "__main__":
    main()
