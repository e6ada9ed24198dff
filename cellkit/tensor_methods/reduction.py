"""Reductions with MindSpore's argument names: ``sum(dim=1, keepdim=True)``, ``max(dim=0)``, ``norm``, ...

JAX's own calls (``x.sum(axis=1, keepdims=True)``, ``x.max(0)``) keep JAX's meaning;
MindSpore's spellings (``dim``, ``keepdim``, ``keep_dims``, a bool second argument
for ``keepdim``) are translated. ``max``/``min``/``sort`` with ``dim=`` return
``(values, indices)``, as MindSpore does.

>>> import cellkit as ms
>>> x = ms.Tensor([[1., 5.], [3., 2.]])
>>> x.sum(dim=1, keepdim=True).tolist(), x.mean(0, True).tolist()
([[6.0], [5.0]], [[2.0, 3.5]])
>>> [v.tolist() for v in x.max(dim=1)]
[[5.0, 3.0], [1, 0]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._common import arr, axis_kwargs

__all__ = ["METHODS", "PROPERTIES", "ADAPTERS"]


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _ms_kwargs(args, kwargs, ddof_second=False):
    """JAX's (args, kwargs) for a MindSpore call: dim/keepdim/keep_dims renamed, a bool second
    positional argument is keepdim (JAX's second positional is dtype or out)."""
    axis_kwargs(kwargs)
    if args:
        kwargs["axis"] = _axis(args[0])
        rest = args[1:]
        if rest and isinstance(rest[0], bool):
            kwargs["keepdims"] = rest[0]
            rest = rest[1:]
            if rest:
                kwargs["dtype"] = rest[0]
        elif rest and ddof_second and isinstance(rest[0], (int, np.integer)):
            kwargs["ddof"] = rest[0]
            if len(rest) > 1:
                kwargs["keepdims"] = rest[1]
        elif rest:
            return args, kwargs
        args = ()
    elif "axis" in kwargs:
        kwargs["axis"] = _axis(kwargs["axis"])
    return args, kwargs


def _jax_only(kwargs) -> bool:
    return not kwargs or ("dim" not in kwargs and "keepdim" not in kwargs and "keep_dims" not in kwargs
                          and not isinstance(kwargs.get("axis"), list))


def _reduction(jax_fn, ddof_second=False):
    def method(x, *args, **kwargs):
        if len(args) < 2 and not (args and isinstance(args[0], list)) and _jax_only(kwargs):
            return jax_fn(x, *args, **kwargs)
        if "dim" in kwargs and ddof_second and "ddof" not in kwargs:
            kwargs.setdefault("correction", 1)  # MindSpore's std(dim=..., *, correction=1)
        args, kwargs = _ms_kwargs(args, dict(kwargs), ddof_second)
        return jax_fn(x, *args, **kwargs)
    return method


def _cumulative(jax_fn):
    def method(x, *args, **kwargs):
        if "dim" in kwargs:
            kwargs["axis"] = kwargs.pop("dim")
        return jax_fn(x, *args, **kwargs)
    return method


def _values_indices(x, axis, keepdims, arg_fn):
    idx = arg_fn(x, axis=axis, keepdims=True)
    values = jnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        values, idx = jnp.squeeze(values, axis), jnp.squeeze(idx, axis)
    return values, idx


def _max_min(jax_fn, arg_fn):
    def method(x, *args, **kwargs):
        """``max(dim=d, keepdim=False)`` gives ``(values, indices)`` (MindSpore); JAX's calls are JAX's."""
        if "dim" in kwargs or "keepdim" in kwargs or (len(args) == 2 and isinstance(args[1], bool)):
            axis = kwargs.pop("dim", args[0] if args else None)
            keepdims = kwargs.pop("keepdim", args[1] if len(args) == 2 else False)
            if axis is None:
                return jax_fn(x, keepdims=keepdims)
            return _values_indices(x, axis, keepdims, arg_fn)
        if kwargs:
            axis_kwargs(kwargs)
        return jax_fn(x, *args, **kwargs)
    return method


def _sort(jax_sort):
    def sort(x, *args, **kwargs):
        """``sort(dim=d, descending=...)`` gives ``(values, indices)`` (MindSpore); JAX's calls are JAX's."""
        if "dim" not in kwargs:
            return jax_sort(x, *args, **kwargs)
        dim, descending = kwargs.pop("dim"), kwargs.pop("descending", False)
        idx = jnp.argsort(x, axis=dim, descending=descending, stable=True)
        return jnp.take_along_axis(x, idx, axis=dim), idx
    return sort


def _nonzero(jax_nonzero):
    def nonzero(x, *args, **kwargs):
        """``nonzero(as_tuple=False)`` gives MindSpore's (N, ndim) indices; ``nonzero()`` is JAX's tuple."""
        if "as_tuple" not in kwargs:
            return jax_nonzero(x, *args, **kwargs)
        if kwargs.pop("as_tuple"):
            return jax_nonzero(x, *args, **kwargs)
        return jnp.stack(jax_nonzero(x, *args, **kwargs), axis=-1)
    return nonzero


def _second_as(keyword, kinds):
    """An adapter taking MindSpore's order too: a second positional argument of type ``kinds`` is
    ``keyword`` (JAX's second parameter there is ``out``, which it refuses)."""
    def adapter(jax_fn):
        def method(x, *args, **kwargs):
            if len(args) == 2 and isinstance(args[1], kinds):
                args, kwargs = args[:1], dict(kwargs, **{keyword: args[1]})
            return jax_fn(x, *args, **kwargs)
        method.__doc__ = f"Also MindSpore's order: the second positional argument may be ``{keyword}``."
        return method
    return adapter


def _median(x, axis=-1, keepdims=False, *, dim=None, keepdim=None):
    axis = axis if dim is None else dim
    keepdims = keepdims if keepdim is None else keepdim
    if axis is None:
        x, axis = x.reshape(-1), 0
    k = (x.shape[axis] - 1) // 2
    idx = jnp.take(jnp.argsort(x, axis=axis, stable=True), jnp.array([k]), axis=axis)
    values = jnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        values, idx = jnp.squeeze(values, axis), jnp.squeeze(idx, axis)
    return values, idx


def _norm(x, ord=None, dim=None, keepdim=False, *, dtype=None, p=None, axis=None, keepdims=None):  # noqa: A002
    ord = p if p is not None else ord
    dim = axis if axis is not None else dim
    keepdim = keepdims if keepdims is not None else keepdim
    if dtype is not None:
        x = x.astype(dtype)
    if dim is None and ord is not None and x.ndim > 2:
        x = x.reshape(-1)
    return jnp.linalg.norm(x, ord=ord, axis=_axis(dim), keepdims=keepdim)


def _with_value(arg_fn):
    def method(x, axis=0, keep_dims=False, *, dim=None, keepdim=None):
        return _values_indices(x, axis if dim is None else dim, keep_dims if keepdim is None else keepdim, arg_fn)
    return method


def _new_reduction(fn):
    def method(x, *args, **kwargs):
        args, kwargs = _ms_kwargs(args, dict(kwargs))
        return fn(x, *args, **kwargs)
    return method


METHODS = {
    "amax": _new_reduction(jnp.max),
    "amin": _new_reduction(jnp.min),
    "nansum": _new_reduction(jnp.nansum),
    "nanmean": _new_reduction(jnp.nanmean),
    "logsumexp": _new_reduction(jax.scipy.special.logsumexp),
    "count_nonzero": _new_reduction(jnp.count_nonzero),
    "aminmax": lambda x, *, axis=0, keepdims=False: (jnp.min(x, axis=axis, keepdims=keepdims),
                                                     jnp.max(x, axis=axis, keepdims=keepdims)),
    "argmax_with_value": _with_value(jnp.argmax),
    "argmin_with_value": _with_value(jnp.argmin),
    "median": _median,
    "norm": _norm,
    "cummax": lambda x, axis: _cum_extreme(x, axis, jnp.maximum),
    "cummin": lambda x, axis: _cum_extreme(x, axis, jnp.minimum),
    "msort": lambda x: jnp.sort(x, axis=0),
}


def _cum_extreme(x, dim, op):
    n = x.shape[dim]
    idx = jnp.broadcast_to(jnp.arange(n).reshape((-1,) + (1,) * (x.ndim - dim % x.ndim - 1)), x.shape)

    def combine(a, b):
        (va, ia), (vb, ib) = a, b
        take_b = op(va, vb) == vb
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    return jax.lax.associative_scan(combine, (x, idx), axis=dim)


PROPERTIES = {}

ADAPTERS = {
    "sum": _reduction,
    "mean": _reduction,
    "prod": _reduction,
    "all": _reduction,
    "any": _reduction,
    "argmax": _reduction,
    "argmin": _reduction,
    "std": lambda f: _reduction(f, ddof_second=True),
    "var": lambda f: _reduction(f, ddof_second=True),
    "cumsum": _cumulative,
    "cumprod": _cumulative,
    "argsort": _cumulative,
    "max": lambda f: _max_min(f, jnp.argmax),
    "min": lambda f: _max_min(f, jnp.argmin),
    "sort": _sort,
    "nonzero": _nonzero,
    "ptp": _second_as("keepdims", (bool, np.bool_)),
    "choose": _second_as("mode", str),
}
