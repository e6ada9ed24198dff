"""Reductions and cumulative ops (part of MindSpore's ``ops/function/math_func.py``).

Each op takes MindSpore's own spelling of the axis and keep-dims arguments (``dim``/``keepdim``,
``axis``/``keep_dims`` or ``axis``/``keepdims``, as 2.10 has them); a list of axes is a tuple.

>>> import cellkit as ms
>>> x = ms.Tensor([[1., 2.], [3., 4.]])
>>> ms.ops.reduce_sum(x, 1)
Array([3., 7.], dtype=float32)
>>> ms.ops.cumsum(x, axis=0)
Array([[1., 2.],
       [4., 6.]], dtype=float32)
>>> values, indices = ms.ops.cummax(ms.Tensor([1., 3., 2.]), 0)
>>> values, indices.tolist()
(Array([1., 3., 3.], dtype=float32), [0, 1, 1])
"""

from __future__ import annotations

import builtins
import functools

import jax
import jax.numpy as jnp

from ...tensor import default_int_dtype
from ...tiered_jit import tiered_jit
from ._utils import _axis, _dtype, _v, exporter

__all__ = []
_public = exporter(__all__)


def _ax(axis):
    """MindSpore's "every axis" (None or ``()``) as JAX's None; a list as a tuple."""
    return None if axis is None or axis == () or axis == [] else _axis(axis)


def _tensor(name, x):
    """``x`` as an array; a string or another non-numeric input is a TypeError naming the op."""
    x = _v(x)
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"ops.{name}: the input must be a tensor, got {type(x).__name__}")
    return jnp.asarray(x)


def _check_axis(name, x, axis):
    """``axis`` (an int, a sequence of ints or None) within ``x``'s rank, else ValueError."""
    if axis is None:
        return
    ndim = builtins.max(jnp.ndim(x), 1)
    for a in (axis if isinstance(axis, (tuple, list)) else (axis,)):
        if not -ndim <= int(a) < ndim:
            raise ValueError(f"ops.{name}: axis {a} is out of range for a tensor of rank {jnp.ndim(x)} "
                             f"(expected an axis in [{-ndim}, {ndim}))")


def _int_index(i):
    return i.astype(default_int_dtype())


@_public
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001,A002
    """Sum over ``dim`` (all axes when None); integer and bool inputs sum as int64 where 64-bit is on.

    >>> import cellkit as ms
    >>> ms.ops.sum(ms.Tensor([[1., 2.], [3., 4.]]), dim=0)
    Array([4., 6.], dtype=float32)
    """
    x = _tensor("sum", input)
    _check_axis("sum", x, _ax(dim))
    if dtype is None and (jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_):
        dtype = default_int_dtype()
    return jnp.sum(x, axis=_ax(dim), keepdims=keepdim, dtype=_dtype(dtype))


@_public
def mean(x, axis=None, keep_dims=False):
    """Mean over ``axis``; integer inputs give an integer (truncated) mean, as in MindSpore."""
    x = _tensor("mean", x)
    _check_axis("mean", x, _ax(axis))
    out = jnp.mean(x, axis=_ax(axis), keepdims=keep_dims)
    return out.astype(x.dtype) if jnp.issubdtype(x.dtype, jnp.integer) else out


@_public
def prod(input, axis=None, keep_dims=False, dtype=None):  # noqa: A002
    """Product over ``axis``."""
    return jnp.prod(_v(input), axis=_ax(axis), keepdims=keep_dims, dtype=_dtype(dtype))


def _bool_reduce(name, fn):
    def op(input, axis=None, keep_dims=False):  # noqa: A002
        return fn(jnp.asarray(_v(input)).astype(bool), axis=_ax(axis), keepdims=keep_dims)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Logical {name.upper()} over ``axis`` (every axis when None); the input is read as bool."
    return _public(op)


all = _bool_reduce("all", jnp.all)  # noqa: A001
any = _bool_reduce("any", jnp.any)  # noqa: A001


def _reduce_fn(name, fn):
    def op(x, axis=()):
        return fn(_v(x), axis=_ax(axis))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{fn.__name__}`` over ``axis`` (every axis when ``()``), dimensions dropped."
    return _public(op)


reduce_sum = _reduce_fn("reduce_sum", jnp.sum)
reduce_max = _reduce_fn("reduce_max", jnp.max)
reduce_min = _reduce_fn("reduce_min", jnp.min)


@_public
def reduce_mean(x, axis=()):
    """Mean over ``axis`` (every axis when ``()``)."""
    return mean(x, _ax(axis))


def _moments(x, axis, ddof, keepdims):
    x = _tensor("std", x)
    _check_axis("std", x, _ax(axis))
    if isinstance(ddof, bool):
        ddof = int(ddof)
    return x, dict(axis=_ax(axis), ddof=ddof, keepdims=keepdims)


@_public
def var(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom (``True`` means 1)."""
    x, kw = _moments(input, axis, ddof, keepdims)
    return jnp.var(x, **kw)


@_public
def std(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """Standard deviation over ``axis`` with ``ddof`` delta degrees of freedom."""
    x, kw = _moments(input, axis, ddof, keepdims)
    return jnp.std(x, **kw)


@_public
def var_mean(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """``(variance, mean)`` over ``axis``."""
    x, kw = _moments(input, axis, ddof, keepdims)
    return jnp.var(x, **kw), jnp.mean(x, axis=kw["axis"], keepdims=keepdims)


@_public
def std_mean(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """``(standard deviation, mean)`` over ``axis``."""
    x, kw = _moments(input, axis, ddof, keepdims)
    return jnp.std(x, **kw), jnp.mean(x, axis=kw["axis"], keepdims=keepdims)


def _reduce_with_index(x, axis, keepdims, reduce, arg):
    x = _v(x)
    if axis is None:
        # MindSpore 2.10 returns index 0 here whatever the data; cellkit returns the flat index.
        return reduce(x), _int_index(arg(x.reshape(-1)))
    values = reduce(x, axis=axis, keepdims=keepdims)
    return values, _int_index(arg(x, axis=axis, keepdims=keepdims))


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
def amax(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A002
    """The maximum over ``axis`` (values only)."""
    _check_axis("amax", _v(input), _ax(axis))
    return jnp.max(_v(input), axis=_ax(axis), keepdims=keepdims, initial=initial, where=_v(where))


@_public
def amin(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A002
    """The minimum over ``axis`` (values only)."""
    return jnp.min(_v(input), axis=_ax(axis), keepdims=keepdims, initial=initial, where=_v(where))


@_public
def aminmax(input, *, axis=0, keepdims=False):  # noqa: A002
    """``(minimum, maximum)`` over ``axis``."""
    x = _v(input)
    return jnp.min(x, axis=axis, keepdims=keepdims), jnp.max(x, axis=axis, keepdims=keepdims)


@_public
def argmax(input, dim=None, keepdim=False):  # noqa: A002
    """Index of the maximum (a flat index when ``dim`` is None)."""
    _check_axis("argmax", _v(input), dim)
    return _int_index(jnp.argmax(_v(input), axis=dim, keepdims=keepdim))


@_public
def argmin(input, axis=None, keepdims=False):  # noqa: A002
    """Index of the minimum (a flat index when ``axis`` is None)."""
    _check_axis("argmin", _v(input), axis)
    return _int_index(jnp.argmin(_v(input), axis=axis, keepdims=keepdims))


@_public
def count_nonzero(x, axis=(), keep_dims=False, dtype=jnp.int32):
    """The number of non-zero elements over ``axis`` (every axis when ``()``)."""
    return jnp.count_nonzero(_v(x), axis=_ax(axis), keepdims=keep_dims).astype(_dtype(dtype))


@_public
def logsumexp(input, dim, keepdim=False):  # noqa: A002
    """``log(sum(exp(input)))`` over ``dim``, computed stably."""
    return jax.nn.logsumexp(_v(input), axis=_ax(dim), keepdims=keepdim)


def _median(x, axis, keepdims, nan):
    x = _v(x)
    if x.ndim == 0:
        return x, jnp.zeros((), default_int_dtype())
    axis = axis % x.ndim
    order = jnp.argsort(x, axis=axis)  # NaN sort last
    n = x.shape[axis]
    if nan:
        count = jnp.sum(~jnp.isnan(x), axis=axis, keepdims=True)
        k = jnp.maximum((count - 1) // 2, 0)
    else:
        k = jnp.full([1 if i == axis else s for i, s in enumerate(x.shape)], (n - 1) // 2)
        has_nan = jnp.any(jnp.isnan(x), axis=axis, keepdims=True) if jnp.issubdtype(x.dtype, jnp.inexact) else None
        if has_nan is not None:  # a NaN is the median of its slice, as in MindSpore
            first_nan = jnp.argmax(jnp.isnan(x), axis=axis, keepdims=True)
            k = jnp.where(has_nan, -1, k)
    index = jnp.take_along_axis(order, jnp.where(k < 0, 0, k).astype(order.dtype), axis=axis)
    if not nan and jnp.issubdtype(x.dtype, jnp.inexact):
        index = jnp.where(k < 0, first_nan, index)
    values = jnp.take_along_axis(x, index, axis=axis)
    if not keepdims:
        values, index = jnp.squeeze(values, axis), jnp.squeeze(index, axis)
    return values, _int_index(index)


@_public
def median(input, axis=-1, keepdims=False):  # noqa: A002
    """``(values, indices)`` of the median over ``axis`` (the lower of the two middle values)."""
    return _median(input, axis, keepdims, nan=False)


@_public
def nanmedian(input, axis=-1, keepdims=False):  # noqa: A002
    """``(values, indices)`` of the median over ``axis``, NaNs ignored."""
    return _median(input, axis, keepdims, nan=True)


@_public
def nanmean(input, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    """Mean over ``axis``, NaNs ignored."""
    return jnp.nanmean(_v(input), axis=_ax(axis), keepdims=keepdims, dtype=_dtype(dtype))


@_public
def nansum(input, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    """Sum over ``axis``, NaNs counted as zero."""
    return jnp.nansum(_v(input), axis=_ax(axis), keepdims=keepdims, dtype=_dtype(dtype))


@_public
def quantile(input, q, axis=None, keepdims=False):  # noqa: A002
    """The ``q``-th quantiles over ``axis`` (linear interpolation)."""
    return jnp.quantile(_v(input), _v(q), axis=axis, keepdims=keepdims)


@_public
def nanquantile(input, q, axis=None, keepdims=False):  # noqa: A002
    """The ``q``-th quantiles over ``axis``, NaNs ignored."""
    return jnp.nanquantile(_v(input), _v(q), axis=axis, keepdims=keepdims)


# Cumulative ops.

@_public
def cumsum(x, axis, dtype=None):
    """Cumulative sum along ``axis``."""
    x = _tensor("cumsum", x)
    _check_axis("cumsum", x, axis)
    return jnp.cumsum(x, axis=axis, dtype=_dtype(dtype, x.dtype))


@_public
def cumprod(input, dim, dtype=None):  # noqa: A002
    """Cumulative product along ``dim``."""
    x = _v(input)
    return jnp.cumprod(x, axis=dim, dtype=_dtype(dtype, x.dtype))


@_public
def logcumsumexp(input, axis):  # noqa: A002
    """``log(cumsum(exp(input)))`` along ``axis``, computed stably."""
    x = _v(input)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(f"ops.logcumsumexp: the input must be a floating-point tensor, got {x.dtype}")
    return jax.lax.cumlogsumexp(x, axis=axis % x.ndim)


@functools.partial(tiered_jit, static_argnums=(1, 2))
def _scan_extreme(x, axis, greater):
    better = jnp.greater if greater else jnp.less
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    idx = jnp.broadcast_to(jnp.arange(x.shape[axis]).reshape(shape), x.shape)

    def combine(a, b):
        (va, ia), (vb, ib) = a, b
        take_b = better(vb, va) | (vb == va) | jnp.isnan(vb)
        take_b = take_b & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)

    return jax.lax.associative_scan(combine, (x, idx), axis=axis)


def _cumulative_extreme(x, axis, greater):
    x = _tensor("cummax", x)
    _check_axis("cummax", x, axis)
    values, indices = _scan_extreme(x, axis % x.ndim, greater)
    return values, _int_index(indices)


@_public
def cummax(input, axis):  # noqa: A002
    """``(values, indices)``: the running maximum along ``axis`` and where it was (the last of ties)."""
    return _cumulative_extreme(input, axis, True)


@_public
def cummin(input, axis):  # noqa: A002
    """``(values, indices)``: the running minimum along ``axis`` and where it was (the last of ties)."""
    return _cumulative_extreme(input, axis, False)


@_public
def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis``."""
    return jnp.diff(_v(x), n=n, axis=axis, prepend=_v(prepend), append=_v(append))


@_public
def trapz(y, x=None, *, dx=1.0, dim=-1):
    """The trapezoidal rule along ``dim``."""
    return jnp.trapezoid(_v(y), _v(x), dx=dx, axis=dim)
