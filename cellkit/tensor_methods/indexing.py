"""Indexing methods: ``gather``, ``index_select``, ``masked_fill``, ``scatter``, ``topk``, ``unique``, ...

>>> import cellkit as ms
>>> x = ms.Tensor([[1., 5., 2.], [3., 0., 4.]])
>>> x.index_select(1, ms.Tensor([0, 2])).tolist(), x.masked_fill(x > 2, 0.).tolist()
([[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
>>> [t.tolist() for t in x.topk(1)]
[[[5.0], [4.0]], [[1], [2]]]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ._common import arr

__all__ = ["METHODS", "PROPERTIES", "ADAPTERS"]


def _eager(x, what):
    if isinstance(x, jax.core.Tracer):
        raise TypeError(f"Tensor.{what}: the size of its result depends on the data, which a traced "
                        "function (jit, grad, vmap) cannot have; call it outside the transform, or use "
                        "a fixed-size form (e.g. jnp.where(mask, x, fill) instead of masked_select)")
    return x


def _gather(x, *args, **kwargs):
    """``gather(dim, index)`` (take along an axis) or ``gather(input_indices, axis, batch_dims=0)`` (``ops.gather``)."""
    if "dim" in kwargs or (args and isinstance(args[0], (int, np.integer))):
        dim = kwargs.pop("dim", None)
        if dim is None:
            dim, *args = args
        index = arr(kwargs.pop("index", args[0] if args else None))
        return jnp.take_along_axis(x, index, axis=dim)
    indices = arr(kwargs.pop("input_indices", args[0] if args else None))
    axis = kwargs.pop("axis", args[1] if len(args) > 1 else 0)
    batch_dims = kwargs.pop("batch_dims", args[2] if len(args) > 2 else 0)
    take = lambda p, i: jnp.take(p, i, axis=axis - batch_dims)  # noqa: E731
    for _ in range(batch_dims):
        take = jax.vmap(take)
    return take(x, indices)


def _scatter_index(x, dim, index):
    index = arr(index)
    grids = jnp.meshgrid(*[jnp.arange(n) for n in index.shape], indexing="ij")
    grids[dim] = index
    return tuple(grids)


def _scatter(x, dim=None, index=None, src=None, *, value=None, reduce=None, axis=None, updates=None):
    dim = axis if dim is None else dim
    src = next(v for v in (src, value, updates) if v is not None)
    where = _scatter_index(x, dim, index)
    src = arr(src)
    if getattr(src, "ndim", 0):
        src = src[tuple(slice(0, n) for n in arr(index).shape)]
    at = x.at[where]
    if reduce is None:
        return at.set(src)
    if reduce == "add":
        return at.add(src)
    if reduce in ("multiply", "mul"):
        return at.multiply(src)
    raise ValueError(f"Tensor.scatter: reduce must be None, 'add' or 'multiply', got {reduce!r}")


def _scatter_add(x, dim, index, src):
    return _scatter(x, dim, index, src, reduce="add")


def _index_add(x, dim, index, source, *, alpha=1):
    where = (slice(None),) * (dim % x.ndim) + (arr(index),)
    return x.at[where].add(arr(source) * alpha)


def _index_fill(x, axis, index, value):
    where = (slice(None),) * (axis % x.ndim) + (arr(index),)
    return x.at[where].set(arr(value))


def _masked_fill(x, mask, value):
    return jnp.where(arr(mask), jnp.asarray(arr(value), x.dtype), x)


def _masked_select(x, mask):
    mask = arr(mask)
    _eager(x, "masked_select"), _eager(mask, "masked_select")
    shape = jnp.broadcast_shapes(x.shape, mask.shape)
    return jnp.broadcast_to(x, shape)[jnp.broadcast_to(mask, shape)]


def _masked_scatter(x, mask, source):
    mask = jnp.broadcast_to(arr(mask), x.shape).reshape(-1)
    pos = jnp.clip(jnp.cumsum(mask) - 1, 0, None)
    return jnp.where(mask, arr(source).reshape(-1)[pos], x.reshape(-1)).reshape(x.shape)


def _topk(x, k, dim=-1, largest=True, sorted=True, *, axis=None):  # noqa: A002
    dim = dim if axis is None else axis
    moved = jnp.moveaxis(x, dim, -1)
    values, idx = jax.lax.top_k(moved if largest else -moved, k)
    values = values if largest else -values
    return jnp.moveaxis(values, -1, dim), jnp.moveaxis(idx, -1, dim)


def _unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    _eager(x, "unique")
    out = jnp.unique(x, return_inverse=return_inverse, return_counts=return_counts, axis=dim)
    if return_inverse and dim is None and not isinstance(out, jax.Array):
        out = (out[0], out[1].reshape(x.shape)) + tuple(out[2:])
    return tuple(out) if isinstance(out, (tuple, list)) else out


def _unique_consecutive(x, return_inverse=False, return_counts=False, dim=None):
    _eager(x, "unique_consecutive")
    a = np.asarray(x)
    if dim is None:
        a = a.reshape(-1)
        dim = 0
    moved = np.moveaxis(a, dim, 0)
    change = np.ones(moved.shape[0], bool)
    if moved.shape[0] > 1:
        change[1:] = np.any(moved[1:] != moved[:-1], axis=tuple(range(1, moved.ndim)))
    out = [jnp.asarray(np.moveaxis(moved[change], 0, dim))]
    if return_inverse:
        out.append(jnp.asarray(np.cumsum(change) - 1))
    if return_counts:
        out.append(jnp.asarray(np.diff(np.append(np.flatnonzero(change), moved.shape[0]))))
    return out[0] if len(out) == 1 else tuple(out)


def _bincount(x, weights=None, minlength=0):
    _eager(x, "bincount")
    if weights is None:  # MindSpore counts in float32
        return jnp.bincount(x, minlength=minlength).astype(jnp.float32)
    return jnp.bincount(x, arr(weights), minlength=minlength)


def _histc(x, bins=100, min=0, max=0):  # noqa: A002 - MindSpore's names
    lo, hi = (min, max) if min != max else (x.min(), x.max())
    counts, _ = jnp.histogram(x, bins=bins, range=(lo, hi))
    return counts.astype(x.dtype)


METHODS = {
    "gather": _gather,
    "gather_nd": lambda x, indices: x[tuple(jnp.moveaxis(arr(indices), -1, 0))],
    "gather_elements": lambda x, dim, index: jnp.take_along_axis(x, arr(index), axis=dim),
    "index_select": lambda x, axis, index: jnp.take(x, arr(index), axis=axis),
    "index": lambda x, indices: x[tuple(arr(i) for i in indices)],
    "select": lambda x, dim, index: jnp.take(x, index, axis=dim),
    "masked_fill": _masked_fill,
    "masked_select": _masked_select,
    "masked_scatter": _masked_scatter,
    "scatter": _scatter,
    "scatter_add": _scatter_add,
    "index_add": _index_add,
    "index_fill": _index_fill,
    "topk": _topk,
    "top_k": lambda x, k, sorted=True: jax.lax.top_k(x, k),  # noqa: A002
    "unique": _unique,
    "unique_consecutive": _unique_consecutive,
    "argwhere": lambda x: jnp.argwhere(_eager(x, "argwhere")),
    "bincount": _bincount,
    "histc": _histc,
    "fill_diagonal": lambda x, fill_value, wrap=False: jnp.fill_diagonal(x, fill_value, wrap=wrap, inplace=False),
    "fill": lambda x, value: jnp.full_like(x, arr(value)),
}

PROPERTIES = {}
ADAPTERS = {}
