"""Elementwise math, comparison and logical ops, reductions and products (MindSpore's ``ops/function/math_func.py``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...tensor import default_int_dtype
from ._utils import _axis, _dtype, _v, exporter, install_renames

__all__ = []
_public = exporter(__all__)

# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {
    "matmul": (jnp.matmul, "(input, other)"),
    "gt": (jnp.greater, "(input, other)"),
    "greater": (jnp.greater, "(input, other)"),
    "ge": (jnp.greater_equal, "(input, other)"),
    "greater_equal": (jnp.greater_equal, "(input, other)"),
    "lt": (jnp.less, "(input, other)"),
    "less": (jnp.less, "(input, other)"),
    "le": (jnp.less_equal, "(input, other)"),
    "less_equal": (jnp.less_equal, "(input, other)"),
    "eq": (jnp.equal, "(input, other)"),
    "equal": (jnp.equal, "(input, other)"),
    "ne": (jnp.not_equal, "(input, other)"),
    "not_equal": (jnp.not_equal, "(input, other)"),
    "exp": (jnp.exp, "(input)"),
    "log": (jnp.log, "(input)"),
    "sqrt": (jnp.sqrt, "(x)"),
    "rsqrt": (jax.lax.rsqrt, "(input)"),
    "square": (jnp.square, "(input)"),
    "abs": (jnp.abs, "(input)"),
    "neg": (jnp.negative, "(input)"),
    "sin": (jnp.sin, "(input)"),
    "cos": (jnp.cos, "(input)"),
    "tanh": (jnp.tanh, "(input)"),
    "erf": (jax.lax.erf, "(input)"),
    "floor": (jnp.floor, "(input)"),
    "ceil": (jnp.ceil, "(input)"),
    "round": (jnp.round, "(input)"),
    "sign": (jnp.sign, "(input)"),
    "maximum": (jnp.maximum, "(input, other)"),
    "minimum": (jnp.minimum, "(input, other)"),
    "add": (jnp.add, "(input, other)"),
    "sub": (jnp.subtract, "(input, other)"),
    "mul": (jnp.multiply, "(input, other)"),
    "div": (jnp.divide, "(input, other)"),
    "pow": (jnp.power, "(input, exponent)"),
    "logical_and": (jnp.logical_and, "(input, other)"),
    "logical_or": (jnp.logical_or, "(input, other)"),
    "logical_not": (jnp.logical_not, "(input)"),
    "isnan": (jnp.isnan, "(input)"),
    "isfinite": (jnp.isfinite, "(input)"),
    "outer": (jnp.outer, "(input, vec2)"),
    "dot": (jnp.dot, "(input, other)"),
    "bmm": (jnp.matmul, "(input_x, mat2)"),
}
install_renames(globals(), __all__, RENAMES)


@_public
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001,A002
    """Sum over ``dim`` (all axes when None).

    >>> import cellkit as ms
    >>> ms.ops.sum(ms.Tensor([[1., 2.], [3., 4.]]), dim=0)
    Array([4., 6.], dtype=float32)
    """
    return jnp.sum(_v(input), axis=_axis(dim), keepdims=keepdim, dtype=_dtype(dtype))


@_public
def mean(x, axis=None, keep_dims=False):
    """Mean over ``axis``; integer inputs give an integer (truncated) mean, as in MindSpore."""
    x = _v(x)
    out = jnp.mean(x, axis=_axis(axis), keepdims=keep_dims)
    return out.astype(x.dtype) if jnp.issubdtype(x.dtype, jnp.integer) else out


@_public
def prod(input, axis=None, keep_dims=False, dtype=None):  # noqa: A002
    """Product over ``axis``."""
    return jnp.prod(_v(input), axis=_axis(axis), keepdims=keep_dims, dtype=_dtype(dtype))


@_public
def var(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """Variance over ``axis``."""
    return jnp.var(_v(input), axis=_axis(axis), ddof=ddof, keepdims=keepdims)


def _reduce_with_index(x, axis, keepdims, reduce, arg):
    x = _v(x)
    if axis is None:
        # MindSpore 2.10 returns index 0 here whatever the data; cellkit returns the flat index.
        return reduce(x), arg(x.reshape(-1)).astype(default_int_dtype())
    values = reduce(x, axis=axis, keepdims=keepdims)
    index = arg(x, axis=axis, keepdims=keepdims).astype(default_int_dtype())
    return values, index


@_public
def max(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001,A002
    """``(values, indices)`` of the maximum over ``axis`` (MindSpore always returns both).

    >>> import cellkit as ms
    >>> value, index = ms.ops.max(ms.Tensor([1., 5., 2.]))
    >>> float(value), int(index)
    (5.0, 1)
    """
    if initial is not None or where is not None:
        x = _v(input)
        return jnp.max(x, axis=axis, keepdims=keepdims, initial=initial, where=_v(where)), None
    return _reduce_with_index(input, axis, keepdims, jnp.max, jnp.argmax)


@_public
def min(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001,A002
    """``(values, indices)`` of the minimum over ``axis``."""
    if initial is not None or where is not None:
        x = _v(input)
        return jnp.min(x, axis=axis, keepdims=keepdims, initial=initial, where=_v(where)), None
    return _reduce_with_index(input, axis, keepdims, jnp.min, jnp.argmin)


@_public
def amax(input, axis=None, keepdims=False):  # noqa: A002
    """The maximum over ``axis`` (values only)."""
    return jnp.max(_v(input), axis=_axis(axis), keepdims=keepdims)


@_public
def amin(input, axis=None, keepdims=False):  # noqa: A002
    """The minimum over ``axis`` (values only)."""
    return jnp.min(_v(input), axis=_axis(axis), keepdims=keepdims)


@_public
def argmax(input, dim=None, keepdim=False):  # noqa: A002
    """Index of the maximum (a flat index when ``dim`` is None)."""
    return jnp.argmax(_v(input), axis=dim, keepdims=keepdim).astype(default_int_dtype())


@_public
def argmin(input, axis=None, keepdims=False):  # noqa: A002
    """Index of the minimum (a flat index when ``axis`` is None)."""
    return jnp.argmin(_v(input), axis=axis, keepdims=keepdims).astype(default_int_dtype())


@_public
def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """Clip to ``[clip_value_min, clip_value_max]`` (either bound may be None)."""
    return jnp.clip(_v(x), _v(clip_value_min), _v(clip_value_max))


clamp = clip = clip_by_value


__all__ += ["clamp", "clip"]
