"""Helpers for the kgemm package's tests: fresh random inputs, the fp64 reference and the bound
every element is held to (kgemm's error_bound.hpp, through the module)."""
import os

import numpy as np
import pytest

import kgemm
from kgemm import _kgemm


class SeededGenerator:
    """NumPy's Generator that remembers its seed, for failure messages."""

    def __init__(self, seed):
        self.seed = seed
        self._generator = np.random.default_rng(seed)

    def __getattr__(self, name):
        return getattr(self._generator, name)


@pytest.fixture
def rng():
    # Fresh inputs each run; the seed is in the failure message of any test that uses it.
    return SeededGenerator(int.from_bytes(os.urandom(4), "little"))


def bound_coefficients(dtype, accumulate, k, config, alpha):
    """The element bound is affine in |exact|, sum |a b| and |beta c0| (error_bound.hpp): its
    coefficients, from the module's scalar bound."""
    f = lambda exact, magnitude, beta_c0: _kgemm.error_bound(dtype, accumulate, k, config, exact, magnitude, alpha,
                                                             beta_c0)
    base = f(0.0, 0.0, 0.0)
    return base, f(1.0, 0.0, 0.0) - base, f(0.0, 1.0, 0.0) - base, f(0.0, 0.0, 1.0) - base


def check_product(c, a, b, c0=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, accumulate="float32",
                  config, seed=None):
    """Asserts every element of the computed c (NumPy, (m, n) or (batch, m, n)) is within the bound
    of alpha op(a) op(b) + beta c0 computed in fp64 from the same (already rounded) inputs."""
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    if trans_a:
        a64 = np.swapaxes(a64, -1, -2)
    if trans_b:
        b64 = np.swapaxes(b64, -1, -2)
    product = np.matmul(a64, b64)
    magnitude = np.matmul(np.abs(a64), np.abs(b64))
    beta_c0 = beta * np.asarray(c0, dtype=np.float64) if c0 is not None and beta != 0 else np.zeros_like(product)
    exact = alpha * product + beta_c0
    k = a64.shape[-1]
    base, per_exact, per_magnitude, per_beta_c0 = bound_coefficients(str(np.dtype(c.dtype)), accumulate, k, config,
                                                                     alpha)
    bound = base + per_exact * np.abs(exact) + per_magnitude * magnitude + per_beta_c0 * np.abs(beta_c0)
    error = np.abs(np.asarray(c, dtype=np.float64) - exact)
    worst = np.unravel_index(np.argmax(error - bound), error.shape) if error.size else None
    assert error.size == 0 or np.all(error <= bound), (
        f"element {worst}: |c - exact| = {error[worst]:.3g} > bound {bound[worst]:.3g} (config {config}, seed {seed})")


def dispatched_config(a, b, c=None, **kw):
    return kgemm.explain(a, b, c, **kw)["config"]
