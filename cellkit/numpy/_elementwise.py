"""The element-wise functions of ``mindspore.numpy``: one table line each.

A line is ``name: (MindSpore's parameters, JAX function, rule)``. The rule is MindSpore's
dtype rule for that function (what an integer or mixed input gives), measured against
MindSpore 2.10:

- ``same``: the input's dtype (``abs``, ``square``, ``exp2`` of an int is an int);
- ``trig``: integers computed in ``rule_for_trigonometric``'s float (int8/uint8/bool in
  float16, wider ints in float32);
- ``float``: integers and bools computed in float32 (``sqrt``, ``ceil``, ``sign``, ``exp``);
- ``arith``: two inputs promoted by MindSpore's ``promotion_rule``; ``div``: the same, then
  integers computed in float32 (``divide`` of int64 is float32, never float64); ``first``:
  the first input's dtype (``copysign``); ``weak``: a Python number takes the other input's
  dtype (``maximum``); ``trig2``: each input by ``trig`` (``arctan2``); ``bool``: a bool result.

Python numbers and lists are 32-bit Tensors (``utils.to_tensor``). ``dtype=`` casts the result.

>>> import cellkit as ms, cellkit.numpy as mnp
>>> mnp.sqrt(ms.Tensor([4, 9], ms.int32))
Array([2., 3.], dtype=float32)
>>> mnp.sin(ms.Tensor([0], ms.int8)).dtype
dtype('float16')
>>> mnp.divide(ms.Tensor([3, 4], ms.int32), 2)
Array([1.5, 2. ], dtype=float32)
>>> mnp.add([1, 2], 2.5, dtype=mnp.float16)
Array([3.5, 4.5], dtype=float16)
"""

from __future__ import absolute_import

import numbers

import jax.numpy as jnp
import numpy as np

from . import dtypes
from .utils import cast, to_tensor

__all__ = ["UNARY", "BINARY", "unary", "binary"]


def _trig(x):
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    return x.astype(np.dtype(dtypes.rule_for_trigonometric[dtypes.get_dtype(x.dtype)]))


def _float(x):
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


def _promote(a, b):
    try:
        dtype = np.dtype(dtypes.promote(a.dtype, b.dtype))
    except TypeError:
        dtype = jnp.promote_types(a.dtype, b.dtype)
    return a.astype(dtype), b.astype(dtype)


def unary(fn, rule):
    def impl(x, dtype=None):
        x = to_tensor(x)
        if rule == "trig":
            x = _trig(x)
        elif rule == "float":
            x = _float(x)
        y = fn(x)
        if rule == "same" and y.dtype != x.dtype:
            y = y.astype(x.dtype)
        return cast(y, dtypes.check_dtype(dtype))
    return impl


def binary(fn, rule):
    def impl(x1, x2, dtype=None):
        weak1 = isinstance(x1, numbers.Number)
        weak2 = isinstance(x2, numbers.Number)
        a, b = to_tensor(x1), to_tensor(x2)
        if rule == "weak" and (weak1 or weak2):
            a, b = (a.astype(b.dtype), b) if weak1 else (a, b.astype(a.dtype))
        elif rule == "trig2":
            a, b = _promote(_trig(a), _trig(b))
        elif rule in ("arith", "div", "float", "first", "weak"):
            first = a.dtype
            a, b = _promote(a, b)
            if rule in ("div", "float"):
                a, b = _float(a), _float(b)
        y = fn(a, b)
        if rule == "first":
            y = y.astype(first)
        return cast(y, dtypes.check_dtype(dtype))
    return impl


def _exp2(x):
    if jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.left_shift(jnp.ones_like(x), x) * (x >= 0)
    return jnp.exp2(x)


def _reciprocal(x):
    if jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.where(jnp.abs(x) == 1, x, 0).astype(x.dtype)
    return 1 / x


def _sign(x):
    if x.dtype == jnp.bool_:
        raise TypeError("sign does not accept dtype bool.")
    return jnp.sign(x)


def _trunc_div(a, b):
    return jnp.fmod(a, b)


def _heaviside(x1, x2):
    return jnp.where(x1 < 0, 0, jnp.where(x1 > 0, 1, x2)).astype(x1.dtype)


def _invert(x):
    if x.dtype == jnp.bool_:
        raise TypeError("invert: the input must be an integer Tensor, got bool")
    return jnp.invert(x)


U = "x, dtype=None"
B = "x1, x2, dtype=None"

UNARY = {
    "absolute": (U, jnp.abs, "same"), "abs": (U, jnp.abs, "same"), "fabs": (U, jnp.abs, "same"),
    "negative": ("a, dtype=None", jnp.negative, "same"), "positive": ("a, dtype=None", jnp.positive, "same"),
    "square": (U, jnp.square, "same"), "exp2": (U, _exp2, "same"), "reciprocal": (U, _reciprocal, "same"),
    "bitwise_not": (U, _invert, "same"), "invert": (U, _invert, "same"),
    "sqrt": (U, jnp.sqrt, "float"), "cbrt": (U, jnp.cbrt, "float"), "exp": (U, jnp.exp, "float"),
    "expm1": (U, jnp.expm1, "float"), "log": (U, jnp.log, "float"), "log2": (U, jnp.log2, "float"),
    "log10": (U, jnp.log10, "float"), "log1p": (U, jnp.log1p, "float"), "ceil": (U, jnp.ceil, "float"),
    "floor": (U, jnp.floor, "float"), "trunc": (U, jnp.trunc, "float"), "rint": (U, jnp.rint, "float"),
    "fix": (U, jnp.trunc, "float"),
    "sign": (U, _sign, "float"),
    "sin": (U, jnp.sin, "trig"), "cos": (U, jnp.cos, "trig"), "tan": (U, jnp.tan, "trig"),
    "arcsin": (U, jnp.arcsin, "trig"), "arccos": ("input, dtype=None", jnp.arccos, "trig"),
    "arctan": (U, jnp.arctan, "trig"), "sinh": (U, jnp.sinh, "trig"), "cosh": (U, jnp.cosh, "trig"),
    "tanh": (U, jnp.tanh, "trig"), "arcsinh": (U, jnp.arcsinh, "trig"), "arccosh": (U, jnp.arccosh, "trig"),
    "arctanh": (U, jnp.arctanh, "trig"), "deg2rad": (U, jnp.deg2rad, "trig"), "rad2deg": (U, jnp.rad2deg, "trig"),
    "radians": (U, jnp.deg2rad, "trig"),
    "isnan": (U, jnp.isnan, "bool"), "isinf": (U, jnp.isinf, "bool"), "isfinite": (U, jnp.isfinite, "bool"),
    "signbit": (U, jnp.signbit, "bool"), "logical_not": ("a, dtype=None", jnp.logical_not, "bool"),
}

BINARY = {
    "add": (B, jnp.add, "arith"), "subtract": (B, jnp.subtract, "arith"), "multiply": (B, jnp.multiply, "arith"),
    "power": (B, jnp.power, "arith"), "floor_divide": (B, jnp.floor_divide, "arith"),
    "fmod": (B, _trunc_div, "arith"), "mod": (B, jnp.remainder, "arith"), "remainder": (B, jnp.remainder, "arith"),
    "heaviside": (B, _heaviside, "arith"), "divide": (B, jnp.true_divide, "div"),
    "true_divide": (B, jnp.true_divide, "div"), "float_power": (B, jnp.power, "float"),
    "hypot": (B, jnp.hypot, "float"), "logaddexp": (B, jnp.logaddexp, "float"),
    "logaddexp2": (B, jnp.logaddexp2, "float"), "arctan2": (B, jnp.arctan2, "trig2"),
    "copysign": (B, jnp.copysign, "first"), "maximum": (B, jnp.maximum, "weak"), "minimum": (B, jnp.minimum, "weak"),
    "gcd": (B, jnp.gcd, "arith"), "lcm": (B, jnp.lcm, "arith"), "bitwise_and": (B, jnp.bitwise_and, "arith"),
    "bitwise_or": (B, jnp.bitwise_or, "arith"), "bitwise_xor": (B, jnp.bitwise_xor, "arith"),
    "equal": (B, jnp.equal, "bool"), "not_equal": (B, jnp.not_equal, "bool"), "less": (B, jnp.less, "bool"),
    "less_equal": (B, jnp.less_equal, "bool"), "greater": (B, jnp.greater, "bool"),
    "greater_equal": (B, jnp.greater_equal, "bool"), "logical_and": (B, jnp.logical_and, "bool"),
    "logical_or": (B, jnp.logical_or, "bool"), "logical_xor": (B, jnp.logical_xor, "bool"),
}


def table():
    """``{name: (params, impl)}`` for ``_registry.install``."""
    out = {name: (params, unary(fn, rule)) for name, (params, fn, rule) in UNARY.items()}
    out.update({name: (params, binary(fn, rule)) for name, (params, fn, rule) in BINARY.items()})
    return out
