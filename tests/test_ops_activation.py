"""Activation functions and Primitives against MindSpore 2.10 (fixtures ``act_func``, ``act_prim``)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import cellkit as ms
from cellkit import ops
from cellkit.ops import operations as P

from ms_fixtures import load

FUNC = load("act_func")
PRIM = load("act_prim")

# Recorded cases where MindSpore's CPU kernels are narrower than its API (cellkit follows the API;
# docs/differences.md lists them), or where the recorded value is a CPU kernel artefact.
CPU_ONLY = {
    "elu|5": "the CPU Elu kernel only accepts alpha=1.0",
    "Elu|1": "the CPU Elu kernel only accepts alpha=1.0",
    "Softmax|2": "the CPU Softmax kernel only accepts an int axis",
    "selu|3": "the CPU SeLU kernel computes integer input in integers",
    "SeLU|1": "the CPU SeLU kernel computes integer input in integers",
    "GeLU|0": "a CPU kernel selection failure for float input (the tanh GeLU works elsewhere)",
    "tanh|0": "ops.tanh is a math op", "tanh|1": "ops.tanh is a math op", "tanh|2": "ops.tanh is a math op",
    "tanh|3": "ops.tanh is a math op", "tanh|4": "ops.tanh is a math op",
}


def _arg(a):
    return ms.Tensor(a) if isinstance(a, np.ndarray) else a


def _kw(kwargs):
    """Recorded keyword arguments as cellkit values (a dtype is recorded by its MindSpore name)."""
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, np.ndarray):
            v = ms.Tensor(v)
        elif k == "dtype":
            v = getattr(ms, v.lower())
        out[k] = v
    return out


def _tol(out):
    return dict(rtol=2e-3, atol=2e-3) if out.dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)


def _check(case, call):
    if "error" in case:
        with pytest.raises(getattr(__builtins__, case["error"], None) or Exception) as info:
            np.asarray(call())
        assert type(info.value).__name__ == case["error"], info.value
        return
    out = np.asarray(call())
    want = case["output"]
    assert out.shape == want.shape and out.dtype == want.dtype, (out.shape, out.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(out, want, **_tol(want))


def _cases(table, skip=()):
    return [pytest.param(name, marks=pytest.mark.skip(reason=CPU_ONLY[name])) if name in CPU_ONLY else name
            for name in table if not name.startswith(skip)]


@pytest.mark.parametrize("name", _cases(FUNC, skip=("rrelu|",)))
def test_function_matches_mindspore(name):
    case = FUNC[name]
    op = getattr(ops, name.split("|")[0])
    _check(case, lambda: op(*[_arg(a) for a in case["inputs"]], **_kw(case["kwargs"])))


@pytest.mark.parametrize("name", _cases(PRIM))
def test_primitive_matches_mindspore(name):
    case = PRIM[name]
    cls = getattr(P, name.split("|")[0])
    _check(case, lambda: cls(**case["kwargs"])(*[_arg(a) for a in case["inputs"]]))


@pytest.mark.parametrize("name", [n for n in FUNC if n.startswith("rrelu|")])
def test_rrelu_refusals_match_mindspore(name):
    case = FUNC[name]
    with pytest.raises(Exception) as info:
        ops.rrelu(*[_arg(a) for a in case["inputs"]], **case["kwargs"])
    assert type(info.value).__name__ == case["error"]


def test_rrelu_draws_slopes_in_range_reproducibly():
    x = -jnp.arange(1.0, 51.0)
    ms.set_seed(3)
    a = ops.rrelu(x, 0.2, 0.4)
    ms.set_seed(3)
    b = ops.rrelu(x, 0.2, 0.4)
    np.testing.assert_array_equal(a, b)
    slopes = np.asarray(a / x)
    assert slopes.min() >= 0.2 and slopes.max() <= 0.4 and slopes.std() > 0.02
    np.testing.assert_array_equal(ops.rrelu(jnp.array([0.0, 2.5])), [0.0, 2.5])


def test_swiglu_is_silu_of_first_half_times_second():
    x = jnp.array([[-0.12, 0.123, 31.122], [2.1223, 4.1212121217, 0.3123]], jnp.float32)
    a, b = x[0:1], x[1:2]
    np.testing.assert_allclose(ops.swiglu(x, 0), a * jax.nn.sigmoid(a) * b, rtol=1e-6)
    with pytest.raises(ValueError, match="divisible by 2"):
        ops.swiglu(x)


def test_parameters_are_accepted_and_lists_refused():
    p = ms.Parameter(ms.Tensor([-1.0, 2.0]), name="p")
    np.testing.assert_array_equal(ops.hardtanh(p), [-1.0, 1.0])
    with pytest.raises(TypeError, match="'sigmoid'.*'input' must be a Tensor"):
        ops.sigmoid([1.0, 2.0])
    with pytest.raises(TypeError, match="'Elu'.*'alpha' must be float"):
        P.Elu(alpha=2)


# Points away from every kink (0, +-0.5, +-1, +-3, 6).
G = np.array([[-2.7, -0.8, 0.35], [1.3, 4.1, -0.2]])
GRAD_OPS = {
    "sigmoid": ops.sigmoid, "silu": ops.silu, "relu": ops.relu, "relu6": ops.relu6, "selu": ops.selu,
    "hardswish": ops.hardswish, "hardsigmoid": ops.hardsigmoid, "mish": ops.mish, "logsigmoid": ops.logsigmoid,
    "softsign": ops.softsign, "tanhshrink": ops.tanhshrink, "fast_gelu": ops.fast_gelu, "gelu": ops.gelu,
    "gelu_tanh": lambda x: ops.gelu(x, "tanh"), "elu": lambda x: ops.elu(x, 0.7), "celu": lambda x: ops.celu(x, 0.7),
    "leaky_relu": ops.leaky_relu, "softplus": lambda x: ops.softplus(x, 2, 5), "hardtanh": ops.hardtanh,
    "hardshrink": ops.hardshrink, "softshrink": ops.softshrink, "softmax": lambda x: ops.softmax(x, 0),
    "log_softmax": ops.log_softmax, "softmin": ops.softmin, "glu": lambda x: ops.glu(x, 0),
    "swiglu": lambda x: ops.swiglu(x, 0), "threshold": lambda x: ops.threshold(x, 0.1, 2.0),
    "prelu": lambda x: ops.prelu(x, jnp.asarray([0.1, -0.3, 0.6], x.dtype)),
    "Softmax(axes)": lambda x: P.Softmax(axis=(0, 1))(x),
}


@pytest.mark.parametrize("name", GRAD_OPS)
def test_gradients(name):
    dtype = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
    tol = 1e-5 if dtype == jnp.float64 else 2e-2
    check_grads(GRAD_OPS[name], (jnp.asarray(G, dtype),), order=1, modes=["rev"], eps=1e-3, atol=tol,
                rtol=tol)


def test_float64_input_stays_float64():
    if not jax.config.jax_enable_x64:
        pytest.skip("needs JAX_ENABLE_X64")
    x = jnp.asarray(G, jnp.float64)
    for name in ("sigmoid", "gelu", "softmax", "elu", "hardswish"):
        assert getattr(ops, name)(x).dtype == jnp.float64, name
    assert ops.glu(x, 0).dtype == jnp.float64
