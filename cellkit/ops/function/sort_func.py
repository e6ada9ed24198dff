"""Sorting, searching, uniqueness and counting (part of MindSpore's ``ops/function/array_func.py``).

``sort``, ``argsort`` and ``topk`` give Int32 indices, as MindSpore does; ``unique``,
``unique_consecutive``, ``bincount`` and ``histc`` need concrete values (their
output's shape or range depends on them) and run eagerly only.

>>> import cellkit as ms
>>> values, indices = ms.ops.topk(ms.Tensor([1., 3., 2.]), 2)
>>> values, indices
(Array([3., 2.], dtype=float32), Array([1, 2], dtype=int32))
>>> ms.ops.unique(ms.Tensor([3, 1, 3]))[0].tolist()
[3, 1]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ...tensor import default_int_dtype
from ._utils import _v, exporter
from .index_func import _axis, _concrete

__all__ = []
_public = exporter(__all__)


def _arr(x):
    return jnp.asarray(_v(x))


@_public
def argsort(input, axis=-1, descending=False):  # noqa: A002
    """Int32 indices that sort ``input`` along ``axis`` (stable)."""
    x = _arr(input)
    return jnp.argsort(x, axis=axis, stable=True, descending=descending).astype(np.int32)


@_public
def sort(input_x, axis=-1, descending=False):
    """``(values, indices)`` sorted along ``axis``; the indices are Int32.

    >>> import cellkit as ms
    >>> ms.ops.sort(ms.Tensor([2., 1.]))[1].tolist()
    [1, 0]
    """
    x = _arr(input_x)
    idx = argsort(x, axis, descending)
    return jnp.take_along_axis(x, idx, axis=axis), idx


@_public
def topk(input, k, dim=None, largest=True, sorted=True):  # noqa: A002
    """The ``k`` largest (or smallest) values along ``dim`` (the last by default) and their Int32 indices."""
    x = _arr(input)
    dim = _axis(-1 if dim is None else dim, x.ndim, "topk")
    n = x.shape[dim] if x.ndim else 1
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"topk: k must be an int in [0, {n}] (the size of axis {dim}), got {k!r}")
    moved = jnp.moveaxis(x, dim, -1)
    key = moved if largest else (~moved if jnp.issubdtype(x.dtype, jnp.integer) else -moved)
    _, idx = jax.lax.top_k(key, int(k))
    values = jnp.take_along_axis(moved, idx, axis=-1)
    return jnp.moveaxis(values, -1, dim), jnp.moveaxis(idx.astype(np.int32), -1, dim)


@_public
def top_k(input_x, k, sorted=True):  # noqa: A002
    """``topk`` along the last axis (the older name)."""
    return topk(input_x, k, sorted=sorted)


def _index_dtype(x):
    return np.int64 if x.dtype == np.int64 else np.int32


@_public
def unique(input):  # noqa: A002
    """``(output, idx)``: the distinct values of the flattened ``input`` in order of first appearance,
    and for each element the position of its value in ``output`` (eager only)."""
    x = _concrete(_arr(input), "unique").reshape(-1)
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    dtype = _index_dtype(x)
    return jnp.asarray(values[order]), jnp.asarray(rank[inverse.reshape(-1)].astype(dtype))


@_public
def unique_with_pad(x, pad_num):
    """``unique``'s ``(output, idx)`` with ``output`` padded by ``pad_num`` to the input's length."""
    arr = _arr(x)
    values, idx = unique(arr)
    pad = jnp.full((arr.size - values.size,), pad_num, values.dtype)
    return jnp.concatenate([values, pad]), idx


@_public
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """Collapse runs of equal elements (or slices along ``dim``); optional inverse indices and run lengths."""
    x = _concrete(_arr(input), "unique_consecutive")
    if dim is None:
        x = x.reshape(-1)
        axis = 0
    else:
        axis = _axis(dim, x.ndim, "unique_consecutive")
    moved = np.moveaxis(x, axis, 0)
    n = moved.shape[0]
    if n:
        change = np.any((moved[1:] != moved[:-1]).reshape(n - 1, -1), axis=1)
        starts = np.concatenate([[True], change])
    else:
        starts = np.zeros(0, bool)
    out = np.moveaxis(moved[starts], 0, axis)
    result = [jnp.asarray(out)]
    int_dtype = default_int_dtype()
    if return_inverse:
        result.append(jnp.asarray((np.cumsum(starts) - 1).astype(int_dtype)))
    if return_counts:
        bounds = np.concatenate([np.flatnonzero(starts), [n]])
        result.append(jnp.asarray(np.diff(bounds).astype(int_dtype)))
    return result[0] if len(result) == 1 else tuple(result)


@_public
def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, sorter=None):
    """Insertion points of ``values`` in ``sorted_sequence`` (whose leading axes, if any, batch with
    ``values``'); Int64 unless ``out_int32``."""
    seq, vals = _arr(sorted_sequence), _arr(values)
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    if sorter is not None:
        seq = jnp.take_along_axis(seq, _arr(sorter), axis=-1)
    side = "right" if right else "left"
    fn = lambda s, v: jnp.searchsorted(s, v, side=side)  # noqa: E731
    for _ in range(seq.ndim - 1):
        fn = jax.vmap(fn)
    out = fn(seq, vals)
    return out.astype(np.int32 if out_int32 else default_int_dtype())


@_public
def bincount(input, weights=None, minlength=0):  # noqa: A002
    """How often each non-negative int occurs in the 1-D ``input`` (summed ``weights`` if given);
    negative entries are ignored. Float32, as MindSpore returns."""
    x = _arr(input)
    if x.ndim != 1 or not jnp.issubdtype(x.dtype, jnp.integer):
        raise ValueError(f"bincount: input must be a 1-D int tensor, got {x.dtype} of shape {x.shape}")
    top = int(_concrete(jnp.max(x), "bincount")) + 1 if x.size else 0
    length = max(top, int(minlength))
    w = jnp.ones(x.shape, np.float32) if weights is None else _arr(weights)
    w = jnp.where(x >= 0, w, 0)
    out = jnp.zeros(length, w.dtype).at[jnp.clip(x, 0)].add(w)
    return out if weights is not None else out.astype(np.float32)


@_public
def histc(input, bins=100, min=0.0, max=0.0):  # noqa: A002
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range when both are 0);
    values outside are ignored."""
    x = _arr(input)
    lo, hi = float(min), float(max)
    if lo == hi:
        lo, hi = float(_concrete(jnp.min(x), "histc")), float(_concrete(jnp.max(x), "histc"))
    if lo > hi:
        raise ValueError(f"histc: min must not exceed max, got {min} > {max}")
    flat = x.reshape(-1).astype(np.float32)
    inside = (flat >= lo) & (flat <= hi)
    width = (hi - lo) or 1.0
    which = jnp.clip(((flat - lo) * bins / width).astype(np.int32), 0, bins - 1)
    return jnp.zeros(bins, x.dtype).at[which].add(inside.astype(x.dtype))
