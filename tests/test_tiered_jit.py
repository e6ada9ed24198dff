"""cellkit.tiered_jit: cheap compilation for an eager executable's first calls, full optimisation when hot."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from compile_count import compiles

from cellkit import tiered_jit as tj

pytestmark = pytest.mark.skipif(jax.default_backend() != "cpu", reason="tiering applies on CPU only")


@pytest.fixture(autouse=True)
def tiering_on():
    before = tj._enabled[0]
    tj.set_enabled(True)
    yield
    tj.set_enabled(before)


def _compiles(fn):
    with compiles(fresh=False) as made:
        out = fn()
    return made["n"], out


def test_cheap_tier_first_then_the_optimised_one_once_hot():
    f = tj.tiered_jit(lambda x: jnp.tanh(x) * 3.0 + x)
    x = jnp.linspace(-2, 2, 37, dtype=jnp.float32)
    n_first, first = _compiles(lambda: [f(x) for _ in range(tj.HOT)])
    assert n_first == 1                      # the cheap executable, reused
    n_hot, hot = _compiles(lambda: [f(x) for _ in range(3)])
    assert n_hot == 1                        # compiled again with XLA's defaults, then reused
    # the cheap tier does not fuse multiply-adds: the same values up to the last bit
    np.testing.assert_allclose(np.asarray(first[0]), np.asarray(hot[-1]), rtol=1e-6)
    x5 = x[:5]
    n_new, _ = _compiles(lambda: f(x5))  # a new shape starts in the cheap tier again
    assert n_new == 1 and f.calls[((5,), jnp.dtype(jnp.float32)),] == 1


def test_traced_calls_use_plain_jit():
    f = tj.tiered_jit(lambda x: jnp.sin(x) * 2)
    x = jnp.arange(3.0, dtype=jnp.float32)
    np.testing.assert_allclose(jax.grad(lambda v: f(v).sum())(x), 2 * np.cos(np.arange(3.0)), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda v: f(v) + 1)(x), 2 * np.sin(np.arange(3.0)) + 1, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f)(jnp.ones((2, 3))), 2 * np.sin(np.ones((2, 3))), rtol=1e-6)
    assert f.calls == {}


def test_disabled_compiles_once_per_signature_cheap_for_tiny_arrays_only():
    tj.set_enabled(False)
    f = tj.tiered_jit(lambda x: jnp.tanh(x) * 3.0 + x)
    tiny = jnp.linspace(-2, 2, 11, dtype=jnp.float32)
    n, outs = _compiles(lambda: [f(tiny) for _ in range(tj.HOT + 2)])
    assert n == 1 and f.fast._cache_size() == 1 and f.full._cache_size() == 0
    for out in outs[1:]:   # one executable for the signature: the same bits on every call
        np.testing.assert_array_equal(np.asarray(out).view(np.uint32), np.asarray(outs[0]).view(np.uint32))
    big = jnp.linspace(-2, 2, tj.SMALL + 1, dtype=jnp.float32)
    n, _ = _compiles(lambda: [f(big) for _ in range(3)])
    assert n == 1 and f.eager._cache_size() == 1 and f.full._cache_size() == 0   # EAGER_OPTIONS, always
    # Staged inside another jit, the call is plain jax.jit's (JAX refuses options on a nested jit).
    np.testing.assert_allclose(jax.jit(lambda x: f(x) * 2)(big), f(big) * 2, rtol=1e-6)
    np.testing.assert_allclose(f(tiny), jnp.tanh(tiny) * 3.0 + tiny, rtol=1e-6, atol=2.5e-7)


def test_off_by_default_in_a_fresh_process():
    import subprocess
    import sys
    code = "import cellkit.tiered_jit as t; print(t.enabled())"
    env = {k: v for k, v in __import__("os").environ.items() if k != "CELLKIT_TIERED_JIT"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


K = jax.random.split(jax.random.key(0), 4)
X = jax.random.normal(K[0], (64, 256))
W = jax.random.normal(K[1], (256, 128))
IMG = jax.random.normal(K[2], (2, 8, 16, 16))
CW = jax.random.normal(K[3], (8, 8, 3, 3))
PROGRAMS = {
    "sum": lambda: X.sum(), "mean": lambda: X.mean(0), "matmul": lambda: X @ W, "exp": lambda: jnp.exp(X),
    "tanh": lambda: jnp.tanh(X), "log1p": lambda: jnp.log1p(jnp.abs(X)), "gelu": lambda: jax.nn.gelu(X),
    "softmax": lambda: jax.nn.softmax(X), "erf": lambda: jax.scipy.special.erf(X),
    "layer_norm": lambda: (X - X.mean(-1, keepdims=True)) / jnp.sqrt(X.var(-1, keepdims=True) + 1e-5),
    "mul_add": lambda: X * 1.7 + X * X, "conv": lambda: lax.conv_general_dilated(IMG, CW, (1, 1), "SAME"),
    "pow": lambda: jnp.abs(X) ** 1.3, "grad": lambda: jax.grad(lambda x: jnp.tanh(x @ W).sum())(X),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_tiers_compute_the_same_values(name):
    """Up to the last bit (fused multiply-adds in the optimised tier only)."""
    fn = PROGRAMS[name]
    full = np.asarray(jax.jit(fn)())
    for options in (tj.FAST_OPTIONS, tj.EAGER_OPTIONS, {**tj.EAGER_OPTIONS, **tj.FAST_OPTIONS}):
        cheap = np.asarray(jax.jit(fn, compiler_options=options)())
        np.testing.assert_allclose(cheap, full, rtol=1e-6, atol=1e-6 * float(np.abs(full).max()))


def test_a_refused_option_falls_back_to_xla_defaults(monkeypatch):
    tj.set_enabled(False)
    monkeypatch.setattr(tj, "EAGER_OPTIONS", {"xla_cpu_no_such_option": True})
    monkeypatch.setattr(tj, "_eager_options", [True])
    f = tj.tiered_jit(lambda x: x * 2.0)
    big = jnp.ones(tj.SMALL + 1, jnp.float32)
    np.testing.assert_array_equal(f(big), big * 2.0)
    assert tj._eager_options == [False] and f.full._cache_size() == 1


def test_eager_options_jit_never_takes_the_cheap_tier():
    f = tj.eager_options_jit(lambda x: jnp.tanh(x) * 3.0 + x)
    tiny = jnp.linspace(-2, 2, 11, dtype=jnp.float32)
    out = f(tiny)
    assert f.fast._cache_size() == 0 and f.eager._cache_size() == 1
    np.testing.assert_allclose(out, jnp.tanh(tiny) * 3.0 + tiny, rtol=1e-6, atol=2.5e-7)
