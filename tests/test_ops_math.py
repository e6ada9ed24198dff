"""Elementwise math, comparison, logical, bitwise, reduction, cumulative and clip ops against
MindSpore's recorded outputs (tests/fixtures/record/record_ops_math.py), and their gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops
from ops_replay import cases, replay

DATA, NAMES = cases("ops_math")

# Cases where cellkit's exception type, or its acceptance, deliberately differs from MindSpore's
# (docs/differences.md): None means cellkit computes what MindSpore's CPU build refuses.
DIFFERENT_ERRORS = {
    "exp2__bad": "TypeError",  # MindSpore: AttributeError ('str' object has no attribute 'dtype')
    "adjoint__bad": "TypeError",  # MindSpore: AttributeError
    "approximate_equal__bad": "ValueError",  # MindSpore: RuntimeError for unequal shapes
    "approximate_equal__bcast": None,  # cellkit broadcasts
    "diff__n": None,  # MindSpore supports only n=1
    "round__decimals": None,  # MindSpore's CPU kernel supports only decimals=0
}

# Cases where MindSpore 2.10's CPU output is wrong: checked against NumPy instead.
MINDSPORE_BUGS = {
    "nextafter__bcast": np.nextafter,  # the kernel does not broadcast a (2, 1) input against a (3,) one
}


@pytest.mark.parametrize("name", NAMES)
def test_matches_mindspore(name):
    fn = getattr(ops, name.split("__")[0])
    if name in MINDSPORE_BUGS:
        inputs = DATA[name]["inputs"]
        np.testing.assert_allclose(fn(*[ms.Tensor(x) for x in inputs]), MINDSPORE_BUGS[name](*inputs), rtol=1e-6)
        return
    replay(fn, DATA[name], name, DIFFERENT_ERRORS)


PRIM_DATA, PRIM_NAMES = cases("ops_math_prim")
PRIM_DIFFERENT_ERRORS = {
    "CountNonZero__f32": None,  # MindSpore 2.10's CPU Primitive refuses one input
    "CountNonZero__dims": None,
}


@pytest.mark.parametrize("name", PRIM_NAMES)
def test_primitive_matches_mindspore(name):
    case = PRIM_DATA[name]
    prim = getattr(ops, name.split("__")[0])(*case["ctor"])
    replay(prim, case, name, PRIM_DIFFERENT_ERRORS)


# Differentiable ops: (name, input domain (lo, hi), number of tensor inputs, extra arguments).
GRAD_TABLE = [
    *[(n, (-0.8, 0.8), 1, ()) for n in ["abs", "neg", "square", "exp", "exp2", "expm1", "sin", "cos", "tan", "sinh",
                                       "cosh", "tanh", "asin", "acos", "atan", "asinh", "atanh", "erf", "erfc",
                                       "erfinv", "deg2rad", "rad2deg", "sinc", "frac"]],
    *[(n, (0.3, 1.5), 1, ()) for n in ["sqrt", "rsqrt", "reciprocal", "log", "log2", "log10", "log1p", "lgamma",
                                      "digamma", "i0"]],
    ("acosh", (1.2, 2.0), 1, ()), ("logit", (0.2, 0.8), 1, ()),
    *[(n, (0.3, 1.5), 2, ()) for n in ["add", "sub", "mul", "div", "true_divide", "pow", "xlogy", "hypot", "atan2",
                                      "logaddexp", "logaddexp2", "maximum", "minimum", "subtract"]],
    ("addcmul", (0.3, 1.5), 3, ()), ("addcdiv", (0.3, 1.5), 3, ()), ("lerp", (0.3, 1.5), 3, ()),
    ("sum", (-1, 1), 1, ()), ("mean", (-1, 1), 1, ()), ("prod", (0.5, 1.5), 1, ()), ("std", (-1, 1), 1, ()),
    ("var", (-1, 1), 1, ()), ("logsumexp", (-1, 1), 1, (1,)), ("amax", (-1, 1), 1, ()), ("amin", (-1, 1), 1, ()),
    ("cumsum", (-1, 1), 1, (1,)), ("cumprod", (0.5, 1.5), 1, (1,)), ("logcumsumexp", (-1, 1), 1, (1,)),
    ("nansum", (-1, 1), 1, ()), ("nanmean", (-1, 1), 1, ()), ("reduce_sum", (-1, 1), 1, ()),
    ("reduce_mean", (-1, 1), 1, ()), ("reduce_max", (-1, 1), 1, ()), ("clamp", (-1, 1), 1, (-0.5, 0.5)),
    ("matmul", (-1, 1), 2, ()), ("inner", (-1, 1), 2, ()), ("kron", (-1, 1), 2, ()), ("vecdot", (-1, 1), 2, ()),
    ("det", (-1, 1), 1, ()), ("inverse", (-1, 1), 1, ()), ("trace", (-1, 1), 1, ()), ("norm", (-1, 1), 1, ()),
    ("vector_norm", (-1, 1), 1, ()), ("matrix_norm", (-1, 1), 1, ()), ("dist", (-1, 1), 2, ()),
    ("cdist", (-1, 1), 2, ()), ("cosine_similarity", (-1, 1), 2, ()), ("matrix_power", (-1, 1), 1, (2,)),
    ("matrix_exp", (-0.5, 0.5), 1, ()),
]
SQUARE = {"det", "inverse", "trace", "matrix_power", "matrix_exp"}


@pytest.mark.parametrize("name, domain, n_inputs, extra", GRAD_TABLE, ids=[row[0] for row in GRAD_TABLE])
def test_gradient(name, domain, n_inputs, extra):
    rng = np.random.default_rng(len(name))
    shape = (3, 3) if name in SQUARE else (2, 3)
    dtype = np.float64 if jax.config.jax_enable_x64 else np.float32
    xs = [jnp.asarray(rng.uniform(*domain, shape).astype(dtype)) for _ in range(n_inputs)]
    if name in SQUARE:
        xs[0] = xs[0] + 2 * jnp.eye(3, dtype=dtype)
    if name in ("matmul", "inner", "kron") and n_inputs == 2:
        xs[1] = xs[1].T if name == "matmul" else xs[1]
    op = getattr(ops, name)
    check_grads(lambda *a: op(*a, *extra), xs, order=1, modes=["rev"], atol=5e-2, rtol=5e-2, eps=1e-3)


def test_int_results_widen_with_64_bit_mode():
    """MindSpore sums int32 as int64; cellkit does where 64-bit mode is on, else int32."""
    out = ops.sum(ms.Tensor(np.array([1, 2], np.int32)))
    assert out.dtype == (np.int64 if jax.config.jax_enable_x64 else np.int32)


def test_ops_run_under_jit():
    x = jnp.asarray(np.linspace(0.1, 1.0, 6, dtype=np.float32).reshape(2, 3))
    f = jax.jit(lambda a: ops.cummax(a, 1)[0] + ops.logsumexp(a, 1, True) + ops.clamp(a, 0.2, 0.8))
    np.testing.assert_allclose(f(x), np.maximum.accumulate(np.asarray(x), 1)
                               + np.log(np.exp(np.asarray(x)).sum(1, keepdims=True)) + np.clip(x, 0.2, 0.8), rtol=1e-5)


PRIMITIVE_EQUALS_FUNCTIONAL = [
    ("Add", (), "add", 2), ("Sub", (), "sub", 2), ("Mul", (), "mul", 2), ("RealDiv", (), "true_divide", 2),
    ("Pow", (), "pow", 2), ("Maximum", (), "maximum", 2), ("Minimum", (), "minimum", 2), ("Sqrt", (), "sqrt", 1),
    ("Exp", (), "exp", 1), ("Log", (), "log", 1), ("Square", (), "square", 1), ("Abs", (), "abs", 1),
    ("Neg", (), "neg", 1), ("Cos", (), "cos", 1), ("Sin", (), "sin", 1), ("Tanh", (), "tanh", 1),
    ("Erf", (), "erf", 1), ("Sign", (), "sign", 1), ("Rsqrt", (), "rsqrt", 1), ("Equal", (), "equal", 2),
    ("Greater", (), "greater", 2), ("Less", (), "less", 2), ("Reciprocal", (), "reciprocal", 1),
    ("Lgamma", (), "lgamma", 1), ("Floor", (), "floor", 1), ("Atan2", (), "atan2", 2), ("Xlogy", (), "xlogy", 2),
    ("LogicalNot", (), "logical_not", 1), ("IsFinite", (), "isfinite", 1),
]


@pytest.mark.parametrize("prim, ctor, fn, n", PRIMITIVE_EQUALS_FUNCTIONAL, ids=[r[0] for r in PRIMITIVE_EQUALS_FUNCTIONAL])
def test_primitive_equals_functional(prim, ctor, fn, n):
    rng = np.random.default_rng(1)
    xs = [ms.Tensor(rng.uniform(0.2, 2.0, (2, 3)).astype(np.float32)) for _ in range(n)]
    np.testing.assert_array_equal(getattr(ops, prim)(*ctor)(*xs), getattr(ops, fn)(*xs))
