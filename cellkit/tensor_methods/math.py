"""Elementwise, comparison, bitwise and matrix methods: ``add(other, alpha=)``, ``sqrt``, ``clamp``, ``matmul``, ...

>>> import cellkit as ms
>>> x = ms.Tensor([1., 4., 9.])
>>> x.sqrt().tolist(), x.add(1, alpha=2).tolist(), x.clamp(2, 5).tolist()
([1.0, 2.0, 3.0], [3.0, 6.0, 11.0], [2.0, 4.0, 5.0])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from ._common import arr

__all__ = ["METHODS", "PROPERTIES", "ADAPTERS"]


def _unary(fn):
    return lambda x: fn(x)


def _binary(fn):
    return lambda x, other: fn(x, arr(other))


def _alpha(fn):
    def op(x, other, *, alpha=1):
        other = arr(other)
        return fn(x, other if alpha == 1 else other * alpha)
    return op


def _div(x, other, *, rounding_mode=None):
    other = arr(other)
    if rounding_mode is None:
        return jnp.true_divide(x, other)
    if rounding_mode == "floor":
        return jnp.floor_divide(x, other)
    if rounding_mode == "trunc":
        return jnp.trunc(jnp.true_divide(x, other)).astype(jnp.result_type(x, other))
    raise ValueError(f"Tensor.div: rounding_mode must be None, 'floor' or 'trunc', got {rounding_mode!r}")


def _clamp(x, min=None, max=None):  # noqa: A002 - MindSpore's names
    if min is None and max is None:
        raise ValueError("Tensor.clamp: give min, max or both")
    return jnp.clip(x, arr(min), arr(max))


def _logit(x, eps=None):
    if eps is not None:
        x = jnp.clip(x, eps, 1 - eps)
    return jnp.log(x / (1 - x))


def _softmax(fn):
    def op(x, axis=-1, dtype=None, *, dim=None):
        if dtype is not None:
            x = x.astype(dtype)
        return fn(x, axis=axis if dim is None else dim)
    return op


def _addmm(x, mat1, mat2, *, beta=1, alpha=1):
    return beta * x + alpha * (arr(mat1) @ arr(mat2))


def _addbmm(x, batch1, batch2, *, beta=1, alpha=1):
    return beta * x + alpha * jnp.sum(arr(batch1) @ arr(batch2), axis=0)


def _cross(x, other, dim=None):
    other = arr(other)
    if dim is None:  # the first axis of size 3
        dim = next(i for i, n in enumerate(jnp.broadcast_shapes(x.shape, other.shape)) if n == 3)
    return jnp.cross(x, other, axis=dim)


def _hardshrink(x, lambd=0.5):
    return jnp.where(jnp.abs(x) > lambd, x, jnp.zeros_like(x))


def _isclose(x, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return jnp.isclose(x, arr(other), rtol=rtol, atol=atol, equal_nan=equal_nan)


def _allclose(x, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(jnp.allclose(x, arr(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


def _qr(x, some=True):
    return jnp.linalg.qr(x, mode="reduced" if some else "complete")


def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


METHODS = {
    # arithmetic
    "add": _alpha(jnp.add),
    "sub": _alpha(jnp.subtract),
    "subtract": _alpha(jnp.subtract),
    "mul": _binary(jnp.multiply),
    "multiply": lambda x, value: jnp.multiply(x, arr(value)),
    "div": _div,
    "divide": _div,
    "true_divide": _binary(jnp.true_divide),
    "floor_divide": _binary(jnp.floor_divide),
    "remainder": _binary(jnp.remainder),
    "fmod": _binary(jnp.fmod),
    "pow": _binary(jnp.power),
    "float_power": lambda x, other: jnp.power(x.astype(jnp.result_type(float)), arr(other)),
    "neg": _unary(jnp.negative),
    "negative": _unary(jnp.negative),
    "abs": _unary(jnp.abs),
    "absolute": _unary(jnp.abs),
    "reciprocal": _unary(jnp.reciprocal),
    "square": _unary(jnp.square),
    "sqrt": _unary(jnp.sqrt),
    "rsqrt": _unary(jax.lax.rsqrt),
    "exp": _unary(jnp.exp),
    "exp2": _unary(jnp.exp2),
    "expm1": _unary(jnp.expm1),
    "log": _unary(jnp.log),
    "log1p": _unary(jnp.log1p),
    "log2": _unary(jnp.log2),
    "log10": _unary(jnp.log10),
    "xlogy": _binary(jsp.xlogy),
    "lerp": lambda x, end, weight: x + arr(weight) * (arr(end) - x),
    "addcmul": lambda x, tensor1, tensor2, value=1: x + value * arr(tensor1) * arr(tensor2),
    "addcdiv": lambda x, tensor1, tensor2, value=1: x + value * arr(tensor1) / arr(tensor2),
    "sign": _unary(jnp.sign),
    "ceil": _unary(jnp.ceil),
    "floor": _unary(jnp.floor),
    "trunc": _unary(jnp.trunc),
    "fix": _unary(jnp.trunc),
    "frac": lambda x: x - jnp.trunc(x),
    "clamp": _clamp,
    "nan_to_num": _nan_to_num,
    "maximum": _binary(jnp.maximum),
    "minimum": _binary(jnp.minimum),
    "fmax": _binary(jnp.fmax),
    "fmin": _binary(jnp.fmin),
    # trigonometric and special
    "sin": _unary(jnp.sin), "cos": _unary(jnp.cos), "tan": _unary(jnp.tan),
    "asin": _unary(jnp.arcsin), "acos": _unary(jnp.arccos), "atan": _unary(jnp.arctan),
    "arcsin": _unary(jnp.arcsin), "arccos": _unary(jnp.arccos), "arctan": _unary(jnp.arctan),
    "sinh": _unary(jnp.sinh), "cosh": _unary(jnp.cosh), "tanh": _unary(jnp.tanh),
    "asinh": _unary(jnp.arcsinh), "acosh": _unary(jnp.arccosh), "atanh": _unary(jnp.arctanh),
    "arcsinh": _unary(jnp.arcsinh), "arccosh": _unary(jnp.arccosh), "arctanh": _unary(jnp.arctanh),
    "atan2": _binary(jnp.arctan2), "arctan2": _binary(jnp.arctan2),
    "sinc": _unary(jnp.sinc),
    "deg2rad": _unary(jnp.deg2rad),
    "rad2deg": _unary(jnp.rad2deg),
    "erf": _unary(jsp.erf),
    "erfc": _unary(jsp.erfc),
    "erfinv": _unary(jsp.erfinv),
    "lgamma": _unary(jsp.gammaln),
    "digamma": _unary(jsp.digamma),
    "sigmoid": _unary(jax.nn.sigmoid),
    "logit": _logit,
    "hardshrink": _hardshrink,
    "softmax": _softmax(jax.nn.softmax),
    "log_softmax": _softmax(jax.nn.log_softmax),
    # comparison and logical
    "eq": _binary(jnp.equal), "equal": _binary(jnp.equal),
    "ne": _binary(jnp.not_equal), "not_equal": _binary(jnp.not_equal),
    "lt": _binary(jnp.less), "less": _binary(jnp.less),
    "le": _binary(jnp.less_equal), "less_equal": _binary(jnp.less_equal),
    "gt": _binary(jnp.greater), "greater": _binary(jnp.greater),
    "ge": _binary(jnp.greater_equal), "greater_equal": _binary(jnp.greater_equal),
    "isclose": _isclose,
    "allclose": _allclose,
    "isfinite": _unary(jnp.isfinite),
    "isinf": _unary(jnp.isinf),
    "isnan": _unary(jnp.isnan),
    "isneginf": _unary(jnp.isneginf),
    "isposinf": _unary(jnp.isposinf),
    "logical_and": _binary(jnp.logical_and),
    "logical_or": _binary(jnp.logical_or),
    "logical_xor": _binary(jnp.logical_xor),
    "logical_not": _unary(jnp.logical_not),
    "bitwise_and": _binary(jnp.bitwise_and),
    "bitwise_or": _binary(jnp.bitwise_or),
    "bitwise_xor": _binary(jnp.bitwise_xor),
    "bitwise_not": _unary(jnp.bitwise_not),
    "bitwise_left_shift": _binary(jnp.left_shift),
    "bitwise_right_shift": _binary(jnp.right_shift),
    "where": lambda x, condition, y: jnp.where(arr(condition), x, arr(y)),
    # matrix
    "matmul": _binary(jnp.matmul),
    "mm": _binary(jnp.matmul),
    "bmm": lambda x, mat2: jnp.matmul(x, arr(mat2)),
    "mv": _binary(jnp.matmul),
    "inner": _binary(jnp.inner),
    "outer": _binary(jnp.outer),
    "cross": _cross,
    "addmm": _addmm,
    "addmv": _addmm,
    "baddbmm": _addmm,
    "addbmm": _addbmm,
    "diag": lambda x, diagonal=0: jnp.diag(x, diagonal),
    "qr": _qr,
}

PROPERTIES = {}
ADAPTERS = {}
