"""The reductions of ``mindspore.numpy`` (sums, means, extrema, spreads, cumulative sums, norms).

MindSpore's dtype rules, measured against MindSpore 2.10: ``sum`` and ``trace`` of integers or
bools give int64 (int32 with ``jax_enable_x64`` off); ``mean`` and ``average`` of integers
keep the integer dtype (the mean truncated); ``std``/``var`` and the ``nan*`` statistics of
integers are float32; ``cumsum`` of bool and 8/16-bit integers is int32; ``count_nonzero`` and
``argmin`` give int32, ``argmax`` int64.

>>> import cellkit as ms, cellkit.numpy as mnp
>>> x = ms.Tensor([[1, 2], [3, 5]], ms.int32)
>>> mnp.mean(x), mnp.std(x, axis=0)
(Array(2, dtype=int32), Array([1.5, 1.5], dtype=float32))
>>> mnp.sum(x).dtype in ("int64", "int32"), mnp.count_nonzero(x - 1)
(True, Array(3, dtype=int32))
"""

from __future__ import absolute_import

import jax.numpy as jnp

from . import dtypes
from .utils import cast, out_dtype, to_tensor
from .utils_const import check_axes, check_axis

__all__ = ["TABLE"]


def _axes(x, axis, where):
    axes = check_axes(axis, x.ndim, where)
    return axes if axes is None or len(axes) != 1 else axes[0]


def _int_to(x, dtype):
    return x.astype(out_dtype(dtype)) if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_ else x


def _f32(x):
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.float32)


def _sum(a, axis=None, dtype=None, keepdims=False, initial=None):
    x = _int_to(to_tensor(a), "int64")
    out = jnp.sum(x, axis=_axes(x, axis, "sum"), keepdims=keepdims)
    if initial is not None:
        out = out + jnp.asarray(initial, out.dtype)
    return cast(out, dtypes.check_dtype(dtype))


def _mean(a, axis=None, keepdims=False, dtype=None):
    x = to_tensor(a)
    out = jnp.mean(_f32(x), axis=_axes(x, axis, "mean"), keepdims=keepdims)
    if jnp.issubdtype(x.dtype, jnp.integer):
        out = jnp.trunc(out).astype(x.dtype)
    return cast(out, dtypes.check_dtype(dtype))


def _extremum(fn, name):
    def impl(a, axis=None, keepdims=False, initial=None, where=True):
        x = to_tensor(a)
        kw = {} if initial is None else {"initial": initial}
        if where is not True:
            kw["where"] = to_tensor(where)
        return fn(x, axis=_axes(x, axis, name), keepdims=keepdims, **kw).astype(x.dtype)
    return impl


def _spread(fn, name):
    def impl(x, axis=None, ddof=0, keepdims=False):
        x = to_tensor(x)
        return fn(_f32(x), axis=_axes(x, axis, name), ddof=ddof, keepdims=keepdims)
    return impl


def _ptp(x, axis=None, keepdims=False):
    x = to_tensor(x)
    return jnp.ptp(x, axis=_axes(x, axis, "ptp"), keepdims=keepdims)


def _nansum(a, axis=None, dtype=None, keepdims=False):
    x = to_tensor(a)
    out = jnp.nansum(x, axis=_axes(x, axis, "nansum"), keepdims=keepdims).astype(x.dtype)
    return cast(out, dtypes.check_dtype(dtype))


def _nan_stat(fn, name, keep=False):
    def impl(a, axis=None, dtype=None, keepdims=False):
        x = to_tensor(a)
        out = fn(x if keep else _f32(x), axis=_axes(x, axis, name), keepdims=keepdims)
        return cast(out.astype(x.dtype) if keep else out, dtypes.check_dtype(dtype))
    return impl


def _nan_spread(fn, name):
    def impl(a, axis=None, dtype=None, ddof=0, keepdims=False):
        x = to_tensor(a)
        out = fn(_f32(x), axis=_axes(x, axis, name), ddof=ddof, keepdims=keepdims)
        return cast(out, dtypes.check_dtype(dtype))
    return impl


def _count_nonzero(x, axis=None, keepdims=False):
    x = to_tensor(x)
    return jnp.count_nonzero(x, axis=_axes(x, axis, "count_nonzero"), keepdims=keepdims).astype(jnp.int32)


def _sometrue(a, axis=None, keepdims=False):
    x = to_tensor(a)
    return jnp.any(x, axis=_axes(x, axis, "sometrue"), keepdims=keepdims)


def _arg(fn, dtype, name):
    def impl(a, axis=None):
        x = to_tensor(a)
        if axis is not None:
            axis = check_axis(axis, x.ndim, name)
        return fn(x, axis=axis).astype(out_dtype(dtype))
    return impl


def _average(x, axis=None, weights=None, returned=False):
    x = to_tensor(x)
    axes = _axes(x, axis, "average")
    w = None if weights is None else to_tensor(weights)
    avg, wsum = jnp.average(_f32(x), axis=axes, weights=w, returned=True)
    if jnp.issubdtype(x.dtype, jnp.integer):
        avg = jnp.trunc(avg).astype(x.dtype)
    if returned:
        return avg, wsum.astype(avg.dtype) if jnp.issubdtype(avg.dtype, jnp.inexact) else wsum
    return avg


def _cum(fn, name, nan=False):
    def impl(a, axis=None, dtype=None):
        x = to_tensor(a)
        if x.dtype in (jnp.bool_, jnp.int8, jnp.int16, jnp.uint8, jnp.uint16):
            x = x.astype(jnp.int32)
        if nan and jnp.issubdtype(x.dtype, jnp.inexact):
            x = jnp.where(jnp.isnan(x), 0, x)
        if axis is None:
            x, axis = x.reshape(-1), 0
        out = fn(x, axis=check_axis(axis, x.ndim, name)).astype(x.dtype)
        return cast(out, dtypes.check_dtype(dtype))
    return impl


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    x = _int_to(to_tensor(a), "int64")
    return cast(jnp.trace(x, offset=offset, axis1=axis1, axis2=axis2), dtypes.check_dtype(dtype))


def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - MindSpore's name
    x = _f32(to_tensor(x))
    if isinstance(axis, list):
        axis = tuple(axis)
    return jnp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _size(a, axis=None):
    x = to_tensor(a)
    if axis is None:
        return int(x.size)
    return int(x.shape[check_axis(axis, x.ndim, "size")])


R = "a, axis=None, keepdims=False, initial=None, where=True"
S = "x, axis=None, ddof=0, keepdims=False"
N = "a, axis=None, dtype=None, keepdims=False"

TABLE = {
    "sum": ("a, axis=None, dtype=None, keepdims=False, initial=None", _sum, "integers sum as int64"),
    "mean": ("a, axis=None, keepdims=False, dtype=None", _mean, "integers keep their dtype"),
    "amax": (R, _extremum(jnp.max, "amax")), "amin": (R, _extremum(jnp.min, "amin")),
    "max": (R, _extremum(jnp.max, "max")), "min": (R, _extremum(jnp.min, "min")),
    "std": (S, _spread(jnp.std, "std")), "var": (S, _spread(jnp.var, "var")),
    "ptp": ("x, axis=None, keepdims=False", _ptp),
    "nansum": (N, _nansum), "nanmean": (N, _nan_stat(jnp.nanmean, "nanmean")),
    "nanmax": (N, _nan_stat(jnp.nanmax, "nanmax", keep=True)), "nanmin": (N, _nan_stat(jnp.nanmin, "nanmin", keep=True)),
    "nanstd": ("a, axis=None, dtype=None, ddof=0, keepdims=False", _nan_spread(jnp.nanstd, "nanstd")),
    "nanvar": ("a, axis=None, dtype=None, ddof=0, keepdims=False", _nan_spread(jnp.nanvar, "nanvar")),
    "count_nonzero": ("x, axis=None, keepdims=False", _count_nonzero, "int32"),
    "sometrue": ("a, axis=None, keepdims=False", _sometrue),
    "argmax": ("a, axis=None", _arg(jnp.argmax, "int64", "argmax"), "int64 indices"),
    "argmin": ("a, axis=None", _arg(jnp.argmin, "int32", "argmin"), "int32 indices"),
    "average": ("x, axis=None, weights=None, returned=False", _average),
    "cumsum": ("a, axis=None, dtype=None", _cum(jnp.cumsum, "cumsum")),
    "cumprod": ("a, axis=None, dtype=None", _cum(jnp.cumprod, "cumprod")),
    "nancumsum": ("a, axis=None, dtype=None", _cum(jnp.cumsum, "nancumsum", nan=True)),
    "trace": ("a, offset=0, axis1=0, axis2=1, dtype=None", _trace),
    "norm": ("x, ord=None, axis=None, keepdims=False", _norm),
    "size": ("a, axis=None", _size),
}
