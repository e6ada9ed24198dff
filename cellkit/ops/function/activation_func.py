"""Activation functions with MindSpore 2.10's signatures, defaults, dtype rules and exceptions.

An op takes a Tensor (a ``jax.Array``, NumPy array or Parameter; a list is refused
with ``TypeError``, as in MindSpore) and returns an array of its shape. Most ops
need a float input and raise ``TypeError`` otherwise; the ones MindSpore also
computes on integers (``relu``, ``hardtanh``, ``hardsigmoid``, ``hardswish``,
``selu``, ``leaky_relu``, ``threshold``) keep the integer dtype, and
``tanhshrink`` gives float32 for integer input.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x = ms.Tensor([-2.0, -0.5, 0.0, 1.0])
>>> ops.elu(x)
Array([-0.86466473, -0.39346933,  0.        ,  1.        ], dtype=float32)
>>> ops.hardtanh(x, min_val=-1.0, max_val=0.5)
Array([-1. , -0.5,  0. ,  0.5], dtype=float32)
>>> ops.softmin(ms.Tensor([1.0, 2.0]))
Array([0.7310586 , 0.26894143], dtype=float32)
>>> ops.sigmoid(ms.Tensor([1, 2], ms.int32))
Traceback (most recent call last):
...
TypeError: For 'sigmoid', 'input' must be a float Tensor, but got int32.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np

from ...parameter import Parameter
from ...random import next_key
from ._utils import exporter

__all__ = []
_public = exporter(__all__)


# ----- input checks shared by the activations and the losses ---------------------------------

def tensor_arg(op, x, what="input"):
    """``x`` as an array (Parameters unwrapped); anything that is not a Tensor is a ``TypeError``."""
    if isinstance(x, Parameter):
        return x.value
    if isinstance(x, (jax.Array, np.ndarray, np.generic)):
        return jnp.asarray(x)
    raise TypeError(f"For '{op}', '{what}' must be a Tensor, but got {type(x).__name__}.")


def float_arg(op, x, what="input"):
    """``x`` as a float array, or a ``TypeError`` naming ``op`` and ``what``."""
    x = tensor_arg(op, x, what)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"For '{op}', '{what}' must be a float Tensor, but got {x.dtype}.")
    return x


def number_arg(op, value, what, kinds=(int, float)):
    """A Python number argument (not a bool), or a ``TypeError``."""
    if isinstance(value, bool) or not isinstance(value, kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise TypeError(f"For '{op}', '{what}' must be {names}, but got {type(value).__name__}.")
    return value


def int_axis(op, axis, what="axis"):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"For '{op}', the type of '{what}' must be 'int', but got {axis!r} with type "
                        f"{type(axis).__name__}.")
    return int(axis)


def _through_float(fn):
    """``fn`` computed in float32 for integer input and cast back (MindSpore's integer kernels)."""
    def call(x):
        if jnp.issubdtype(x.dtype, jnp.floating):
            return fn(x)
        return fn(x.astype(jnp.float32)).astype(x.dtype)
    return call


# ----- one-argument activations: name -> (function of the array, argument name, integer rule) ---
# integer rule: "float" refuses integer input, "keep" computes in float32 and casts back,
# "float32" returns float32, "any" applies the function to the integer array itself.

def _fast_gelu(x):
    ax = jnp.abs(x)
    return x / (1.0 + jnp.exp(-1.702 * ax)) * jnp.exp(0.851 * (x - ax))


def _mish(x):
    return x * jnp.tanh(jax.nn.softplus(x))


# ReLU6 and HSwish as MindSpore differentiates them at their kinks: ReLU6's slope is 1 on
# (0, 6] (0 at 0, 1 at 6) and HSwish's is (2x + 3) / 6 on [-3, 3] (-0.5 at -3, 1.5 at 3),
# where jax.nn's give the other one-sided slope at 6, -3 and 3.
def _relu6(x):
    return jnp.where(x > 6, jnp.asarray(6, x.dtype), jnp.where(x <= 0, jnp.zeros((), x.dtype), x))


def _hardswish(x):
    return jnp.where(x < -3, jnp.zeros((), x.dtype), jnp.where(x > 3, x, x * ((x + 3) / 6)))


UNARY = {
    "sigmoid": (jax.nn.sigmoid, "input", "float", "1 / (1 + exp(-x))"),
    "silu": (jax.nn.silu, "input", "float", "x * sigmoid(x)"),
    "relu6": (_relu6, "x", "float", "min(max(x, 0), 6)"),
    "selu": (jax.nn.selu, "input_x", "keep", "scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))"),
    "hardswish": (_hardswish, "input", "keep", "x * relu6(x + 3) / 6"),
    "hardsigmoid": (jax.nn.hard_sigmoid, "input", "keep", "relu6(x + 3) / 6"),
    "mish": (_mish, "x", "float", "x * tanh(softplus(x))"),
    "logsigmoid": (jax.nn.log_sigmoid, "x", "float", "log(sigmoid(x))"),
    "softsign": (jax.nn.soft_sign, "x", "float", "x / (1 + |x|)"),
    "tanhshrink": (lambda x: x - jnp.tanh(x), "input", "float32", "x - tanh(x)"),
    "fast_gelu": (_fast_gelu, "x", "float", "x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))"),
}


def _unary(name, fn, arg, ints, formula):
    sig = inspect.Signature([inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD)])
    compute = _through_float(fn) if ints == "keep" else fn

    def op(*args, **kwargs):
        x = sig.bind(*args, **kwargs).arguments[arg]
        if ints == "float32":
            x = tensor_arg(name, x, arg)
            return fn(x if jnp.issubdtype(x.dtype, jnp.floating) else x.astype(jnp.float32))
        x = float_arg(name, x, arg) if ints == "float" else tensor_arg(name, x, arg)
        return compute(x)

    op.__name__ = op.__qualname__ = name
    op.__signature__ = sig
    op.__doc__ = f"MindSpore's ``ops.{name}({arg})``: ``{formula}`` elementwise."
    return op


for _name, _line in UNARY.items():
    globals()[_name] = _unary(_name, *_line)
    __all__.append(_name)


# ----- activations with arguments ------------------------------------------------------------

@_public
def relu(input, inplace=False):  # noqa: A002
    """``max(input, 0)``; integer input keeps its dtype (``inplace`` is accepted; arrays are immutable)."""
    return jax.nn.relu(tensor_arg("relu", input))


@_public
def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    """Softmax over the int ``axis``; ``dtype`` casts the input first."""
    x = tensor_arg("softmax", input)
    axis = int_axis("softmax", axis)
    if dtype is not None:
        x = x.astype(np.dtype(dtype))
    return jax.nn.softmax(float_arg("softmax", x), axis=axis)


@_public
def softmin(x, axis=-1, *, dtype=None):
    """``softmax(-x)`` over ``axis``; ``dtype`` casts the input first."""
    x = tensor_arg("softmin", x, "x")
    if dtype is not None:
        x = x.astype(np.dtype(dtype))
    return jax.nn.softmax(-float_arg("softmin", x, "x"), axis=axis)


@_public
def log_softmax(logits, axis=-1):
    """Log-softmax over the int ``axis``."""
    return jax.nn.log_softmax(float_arg("log_softmax", logits, "logits"), axis=int_axis("log_softmax", axis))


@_public
def gelu(input, approximate="none"):  # noqa: A002
    """GELU: ``0.5 x (1 + erf(x / sqrt(2)))``; ``approximate='tanh'`` for the tanh form.

    >>> import cellkit as ms
    >>> ms.ops.gelu(ms.Tensor([1.0])), ms.ops.gelu(ms.Tensor([1.0]), approximate='tanh')
    (Array([0.8413447], dtype=float32), Array([0.841192], dtype=float32))
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"For ops.gelu, approximate value should be either 'none' or 'tanh', but got "
                         f"{approximate!r}.")
    return jax.nn.gelu(float_arg("gelu", input), approximate=approximate == "tanh")


@_public
def leaky_relu(input, alpha=0.2):  # noqa: A002
    """``max(alpha * x, x)`` (``min`` when ``alpha > 1``); ``alpha`` takes the input's dtype."""
    x = tensor_arg("leaky_relu", input)
    number_arg("leaky_relu", alpha, "alpha")
    a = jnp.asarray(alpha, x.dtype)
    return jnp.minimum(a * x, x) if alpha > 1 else jnp.maximum(a * x, x)


@_public
def softplus(input, beta=1, threshold=20):  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""
    x = float_arg("softplus", input)
    if beta == 0:
        raise ValueError("For 'softplus', the value of 'beta' cannot be 0.")
    out = jax.nn.softplus(beta * x) / beta
    return jnp.where(x * beta > threshold, x, out).astype(x.dtype)


@_public
def elu(input_x, alpha=1.0):
    """``x`` for ``x > 0``, ``alpha (exp(x) - 1)`` otherwise; ``alpha`` must be a float."""
    number_arg("elu", alpha, "alpha", (float,))
    return jax.nn.elu(float_arg("elu", input_x, "input_x"), alpha)


@_public
def celu(x, alpha=1.0):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))``; ``alpha`` may not be 0."""
    number_arg("celu", alpha, "alpha")
    if alpha == 0:
        raise ValueError(f"For 'celu', the alpha must be not equal to 0, but got {alpha}.")
    return jax.nn.celu(float_arg("celu", x, "x"), alpha)


@_public
def hardtanh(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """``input`` clipped to ``[min_val, max_val]`` (max first, then min, as MindSpore)."""
    x = tensor_arg("hardtanh", input)
    number_arg("hardtanh", min_val, "min_val")
    number_arg("hardtanh", max_val, "max_val")
    return jnp.minimum(jnp.maximum(x, min_val), max_val).astype(x.dtype)


@_public
def hardshrink(input, lambd=0.5):  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0."""
    x = float_arg("hardshrink", input)
    number_arg("hardshrink", lambd, "lambd")
    return jnp.where(jnp.abs(x) > lambd, x, jnp.zeros_like(x))


@_public
def softshrink(input, lambd=0.5):  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between; ``lambd >= 0``.

    A negative ``lambd`` is MindSpore's ``RuntimeError`` (its kernel's check).
    """
    x = float_arg("softshrink", input)
    number_arg("softshrink", lambd, "lambd")
    if lambd < 0:
        raise RuntimeError(f"For 'SoftShrink', the values for lambd should be greater or equal to 0, but "
                           f"found to be [{lambd}].")
    return jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, jnp.zeros_like(x))).astype(x.dtype)


@_public
def soft_shrink(input, lambd=0.5):  # noqa: A002
    """The older name of :func:`softshrink`."""
    return softshrink(input, lambd)


def _halves(op, x, axis):
    axis = int_axis(op, axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"For '{op}', 'axis' must be in [{-x.ndim}, {x.ndim}), but got {axis}.")
    if x.shape[axis] % 2:
        raise ValueError(f"For '{op}', the size of 'input' on axis {axis} must be divisible by 2 to split "
                         f"it in halves, but got shape {tuple(x.shape)}.")
    return jnp.split(x, 2, axis=axis)


@_public
def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` with ``a, b`` the halves of ``x`` along ``axis``.

    >>> import cellkit as ms
    >>> ms.ops.glu(ms.Tensor([[1.0, 0.0]]))
    Array([[0.5]], dtype=float32)
    """
    x = tensor_arg("glu", x, "x")
    a, b = _halves("glu", x, axis)
    float_arg("glu", x, "x")
    return a * jax.nn.sigmoid(b)


@_public
def swiglu(input, dim=-1):  # noqa: A002
    """``silu(a) * b`` with ``a, b`` the halves of ``input`` along ``dim`` (MindSpore runs it on Ascend only)."""
    a, b = _halves("swiglu", float_arg("swiglu", input), dim)
    return jax.nn.silu(a) * b


@_public
def threshold(input, thr, value):  # noqa: A002
    """``input`` where ``input > thr``, else ``value`` (in the input's dtype)."""
    x = tensor_arg("threshold", input)
    number_arg("threshold", thr, "thr")
    number_arg("threshold", value, "value")
    return jnp.where(x > thr, x, jnp.asarray(value, x.dtype))


@_public
def prelu(input, weight):  # noqa: A002
    """``max(0, x) + min(0, w * x)`` with one weight per channel (axis 1; one channel below 2-D).

    ``weight`` is 1-D, of size 1 or the number of channels.

    >>> import cellkit as ms
    >>> ms.ops.prelu(ms.Tensor([[-1.0, 2.0], [-4.0, 1.0]]), ms.Tensor([0.5, 0.25]))
    Array([[-0.5,  2. ],
           [-2. ,  1. ]], dtype=float32)
    """
    x = float_arg("prelu", input)
    w = float_arg("prelu", weight, "weight")
    if w.ndim != 1:
        raise ValueError(f"For 'prelu', the dimension of 'weight' must be 1, but got shape {tuple(w.shape)}.")
    channels = x.shape[1] if x.ndim >= 2 else 1
    if w.shape[0] not in (1, channels):
        raise ValueError(f"For 'prelu', the length of 'weight' must be 1 or the number of channels "
                         f"{channels}, but got {w.shape[0]}.")
    if x.ndim >= 2:
        w = w.reshape((-1,) + (1,) * (x.ndim - 2))
    return jnp.where(x > 0, x, w.astype(x.dtype) * x)


def _check_bounds(op, lower, upper):
    for what, v in (("upper", upper), ("lower", lower)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"For '{op}', '{what}' must be an int or a float, but got {type(v).__name__}.")
    if lower > upper:
        raise ValueError(f"For '{op}', the value of 'upper' must be greater than or equal to 'lower', but got "
                         f"upper: {upper}, lower: {lower}.")


@_public
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3):  # noqa: A002
    """Randomized leaky ReLU: negative inputs scaled by a slope drawn from ``U(lower, upper)`` per element.

    Draws from cellkit's key stream (reproducible after ``set_seed``).
    """
    _check_bounds("rrelu", lower, upper)
    x = tensor_arg("rrelu", input)
    slope = jax.random.uniform(next_key(), x.shape, jnp.float32, lower, upper).astype(x.dtype)
    return jnp.where(x < 0, slope * x, x)
