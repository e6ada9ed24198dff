"""Indexing: gather, scatter (out of place), slicing, masks, one-hot and segment reductions.

Part of MindSpore's ``ops/function/array_func.py``. Ops whose output shape depends on
the values (``masked_select``, ``nonzero``, ``argwhere``) run eagerly only: inside
``jit`` they raise an error that says so (see docs/differences.md). Out-of-range
gather indices give zeros (MindSpore's GPU/Ascend behaviour) rather than an error.

>>> import cellkit as ms
>>> x = ms.Tensor([[1., 2.], [3., 4.]])
>>> ms.ops.gather_elements(x, 1, ms.Tensor([[1], [0]]))
Array([[2.],
       [3.]], dtype=float32)
>>> ms.ops.tensor_scatter_add(x, ms.Tensor([[0, 0]]), ms.Tensor([10.]))
Array([[11.,  2.],
       [ 3.,  4.]], dtype=float32)
"""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from ...tensor import default_int_dtype
from ...eager_jit import needs_values
from ._utils import _v, exporter

_S = builtins.slice  # the op ``slice`` below shadows the builtin
__all__ = []
_public = exporter(__all__)


def _arr(x):
    return jnp.asarray(_v(x))


def _concrete(x, what):
    """``x`` as a NumPy array; a clear error when it is traced (the output shape would depend on it)."""
    if isinstance(x, jax.core.Tracer):
        raise TypeError(f"{what}: the output's shape depends on the input's values, which JAX cannot "
                        "compile; call it outside jit (or use a fixed-size alternative such as ops.where)")
    return np.asarray(x)


def _axis(axis, ndim, what):
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(f"{what}: axis {axis} is out of range for a {ndim}-D input "
                         f"(expected -{max(ndim, 1)}..{max(ndim, 1) - 1})")
    return axis % max(ndim, 1)


def _index_grid(index, axis):
    """The full coordinates of every element of ``index`` with ``axis`` replaced by its values."""
    grid = list(jnp.indices(index.shape, sparse=True))
    grid[axis] = index
    return tuple(grid)


# ---- gather -----------------------------------------------------------------------------------

@_public
def gather(input_params, input_indices, axis, batch_dims=0):
    """Slices of ``input_params`` at ``input_indices`` along ``axis`` (out-of-range indices give 0).

    >>> import cellkit as ms
    >>> ms.ops.gather(ms.Tensor([[1, 2], [3, 4]]), ms.Tensor([1, 0]), 0).tolist()
    [[3, 4], [1, 2]]
    """
    x, idx = _arr(input_params), _arr(input_indices)
    axis = _axis(axis, x.ndim, "gather")
    if not 0 <= batch_dims <= min(axis, idx.ndim):
        raise ValueError(f"gather: batch_dims must be in [0, min(axis, rank of indices)], got {batch_dims}")

    def take(xb, ib, ax):
        return jnp.take(xb, ib, axis=ax, mode="fill", fill_value=0)
    fn = take
    for _ in range(batch_dims):
        fn = jax.vmap(fn, in_axes=(0, 0, None))
    return fn(x, idx, axis - batch_dims)


@_public
def gather_elements(input, dim, index):  # noqa: A002
    """``out[i][j] = input[index[i][j]][j]`` (for ``dim`` 0): PyTorch's ``gather``.

    ``index`` has ``input``'s rank and may be smaller than ``input`` on the other axes.
    """
    x, idx = _arr(input), _arr(index)
    if idx.ndim != x.ndim:
        raise ValueError(f"gather_elements: index must have the input's rank {x.ndim}, got shape {idx.shape}")
    dim = _axis(dim, x.ndim, "gather_elements")
    x = x[tuple(_S(None) if d == dim else _S(0, n) for d, n in enumerate(idx.shape))]
    return jnp.take_along_axis(x, idx, axis=dim)


@_public
def gather_d(x, dim, index):
    """``gather_elements`` with MindSpore's older argument names."""
    return gather_elements(x, dim, index)


@_public
def gather_nd(input_x, indices):
    """Elements (or slices) of ``input_x`` at the coordinates in the last axis of ``indices``."""
    x, idx = _arr(input_x), _arr(indices)
    if idx.shape[-1] > x.ndim:
        raise ValueError(f"gather_nd: indices address {idx.shape[-1]} axes, the input has {x.ndim}")
    return x[tuple(jnp.moveaxis(idx, -1, 0))]


@_public
def index_select(input, axis, index):  # noqa: A002
    """The slices of ``input`` at the 1-D ``index`` along ``axis``."""
    x, idx = _arr(input), _arr(index)
    if idx.ndim != 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {idx.shape}")
    return jnp.take(x, idx, axis=_axis(axis, x.ndim, "index_select"), mode="fill", fill_value=0)


@_public
def take(input, index):  # noqa: A002
    """Elements of the flattened ``input`` at ``index`` (the output has ``index``'s shape)."""
    return jnp.take(_arr(input).reshape(-1), _arr(index), mode="fill", fill_value=0)


# ---- scatter (out of place) -------------------------------------------------------------------

def _scatter_elements(x, axis, index, src, reduction, what):
    x, idx, src = _arr(x), _arr(index), _arr(src)
    axis = _axis(axis, x.ndim, what)
    if idx.ndim != x.ndim:
        raise ValueError(f"{what}: indices must have the input's rank {x.ndim}, got shape {idx.shape}")
    if src.ndim == 0:
        src = jnp.broadcast_to(src, idx.shape)
    src = src[tuple(_S(0, n) for n in idx.shape)].astype(x.dtype)
    at = x.at[_index_grid(idx, axis)]
    if reduction == "none":
        return at.set(src)
    if reduction == "add":
        return at.add(src)
    if reduction == "mul":
        return at.multiply(src)
    raise ValueError(f"{what}: reduction must be 'none', 'add' or 'mul', got {reduction!r}")


@_public
def scatter(input, axis, index, src):  # noqa: A002
    """``out[index[i][j]][j] = src[i][j]`` (for ``axis`` 0): PyTorch's ``scatter``."""
    return _scatter_elements(input, axis, index, src, "none", "scatter")


@_public
def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    """``scatter`` with a ``reduction`` ("none" replaces, "add" accumulates)."""
    if reduction not in ("none", "add"):
        raise ValueError(f"tensor_scatter_elements: reduction must be 'none' or 'add', got {reduction!r}")
    return _scatter_elements(input_x, axis, indices, updates, reduction, "tensor_scatter_elements")


def _nd_target(x, idx, updates, what):
    """The ``at[...]`` of the coordinates in ``idx``'s last axis, after MindSpore's shape check."""
    expected = idx.shape[:-1] + x.shape[idx.shape[-1]:]
    if idx.shape[-1] > x.ndim or updates.shape != expected:
        raise ValueError(f"{what}: updates must have shape indices.shape[:-1] + input.shape[indices.shape[-1]:] "
                         f"= {expected}, got {updates.shape} (input {x.shape}, indices {idx.shape})")
    return x.at[tuple(jnp.moveaxis(idx, -1, 0))]


_ND_UPDATES = {
    "update": lambda at, u: at.set(u),
    "add": lambda at, u: at.add(u),
    "sub": lambda at, u: at.add(-u),
    "mul": lambda at, u, unique=False: at.multiply(u, unique_indices=unique),
    "div": lambda at, u, unique=False: (at.divide(u) if jnp.issubdtype(u.dtype, jnp.integer)
                                        else at.multiply(1 / u, unique_indices=unique)),
    "max": lambda at, u: at.max(u),
    "min": lambda at, u: at.min(u),
}


def nd_update(kind, x, indices, updates, what):
    """``x`` with ``updates`` combined (by ``kind``) into the coordinates of ``indices``."""
    x, idx, updates = _arr(x), _arr(indices), _arr(updates)
    target = _nd_target(x, idx, updates.astype(x.dtype), what)
    if kind in ("mul", "div"):
        # JAX differentiates a multiplying scatter only when told the indices are unique.
        return _ND_UPDATES[kind](target, updates.astype(x.dtype), _unique_rows(idx))
    return _ND_UPDATES[kind](target, updates.astype(x.dtype))


def _unique_rows(idx):
    """Whether the coordinate rows of ``idx`` are known (concrete) and distinct."""
    if isinstance(idx, jax.core.Tracer):
        needs_values()   # an eager call compiled whole would lose the distinct-rows fast path
        return False
    rows = np.asarray(idx).reshape(-1, idx.shape[-1])
    return len(np.unique(rows, axis=0)) == len(rows)


def _tensor_scatter(kind):
    name = f"tensor_scatter_{kind}"

    def op(input_x, indices, updates):
        return nd_update(kind, input_x, indices, updates, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``input_x`` with ``updates`` {'written' if kind == 'update' else kind + ' -combined'} "
                  "at the coordinates in the last axis of ``indices`` (out of place).")
    return op


for _kind in _ND_UPDATES:
    globals()[f"tensor_scatter_{_kind}"] = _tensor_scatter(_kind)
    __all__.append(f"tensor_scatter_{_kind}")


@_public
def scatter_nd(indices, updates, shape):
    """Zeros of ``shape`` with ``updates`` added at the coordinates of ``indices`` (duplicates add up)."""
    updates = _arr(updates)
    return nd_update("add", jnp.zeros(tuple(shape), updates.dtype), indices, updates, "scatter_nd")


@_public
def index_fill(x, axis, index, value):
    """``x`` with the slices at ``index`` along ``axis`` set to ``value``."""
    x = _arr(x)
    axis = _axis(axis, x.ndim, "index_fill")
    sel = (_S(None),) * axis + (_arr(index),)
    return x.at[sel].set(jnp.asarray(_v(value), x.dtype))


@_public
def select_scatter(input, src, axis, index):  # noqa: A002
    """``input`` with the slice at ``index`` along ``axis`` replaced by ``src``."""
    x = _arr(input)
    axis = _axis(axis, x.ndim, "select_scatter")
    return x.at[(_S(None),) * axis + (index,)].set(_arr(src).astype(x.dtype))


@_public
def slice_scatter(input, src, axis=0, start=None, end=None, step=1):  # noqa: A002
    """``input`` with ``input[start:end:step]`` along ``axis`` replaced by ``src``."""
    x = _arr(input)
    axis = _axis(axis, x.ndim, "slice_scatter")
    return x.at[(_S(None),) * axis + (_S(start, end, step),)].set(_arr(src).astype(x.dtype))


@_public
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):  # noqa: A002
    """``input`` with its diagonal (``offset``, in the ``dim1``/``dim2`` plane) replaced by ``src``."""
    x = _arr(input)
    moved = jnp.moveaxis(x, (dim1, dim2), (-2, -1))
    n = jnp.diagonal(moved, offset, -2, -1).shape[-1]
    i = jnp.arange(n)
    moved = moved.at[..., i + max(-offset, 0), i + max(offset, 0)].set(_arr(src).astype(x.dtype))
    return jnp.moveaxis(moved, (-2, -1), (dim1, dim2))


# ---- slicing ----------------------------------------------------------------------------------

def _bits(mask, i):
    return bool((mask >> i) & 1)


@_public
def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0):
    """``input_x[begin:end:strides]`` per axis, with TensorFlow's bit masks.

    Bit ``i`` of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]``; of
    ``ellipsis_mask`` makes position ``i`` an ``...``; of ``new_axis_mask`` inserts an
    axis; of ``shrink_axis_mask`` takes the single index ``begin[i]``.

    >>> import cellkit as ms
    >>> x = ms.ops.arange(12).reshape(3, 4)
    >>> ms.ops.strided_slice(x, (0, 1), (3, 4), (2, 1)).tolist()
    [[1, 2, 3], [9, 10, 11]]
    """
    x = _arr(input_x)
    begin, end, strides = tuple(begin), tuple(end), tuple(strides)
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"strided_slice: begin, end and strides must have one length, got {begin}, {end}, {strides}")
    if any(s == 0 for s in strides):
        raise ValueError(f"strided_slice: strides must not contain 0, got {strides}")
    items, seen_ellipsis = [], False
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if _bits(ellipsis_mask, i) and not seen_ellipsis:
            items.append(Ellipsis)
            seen_ellipsis = True
        elif _bits(new_axis_mask, i):
            items.append(None)
        elif _bits(shrink_axis_mask, i):
            items.append(int(b))
        else:
            items.append(_S(None if _bits(begin_mask, i) else int(b), None if _bits(end_mask, i) else int(e), int(s)))
    return x[tuple(items)]


@_public
def slice(input_x, begin, size):  # noqa: A001 - MindSpore's name
    """The block of ``size`` starting at ``begin`` (a size of -1 runs to the end)."""
    x = _arr(input_x)
    begin, size = tuple(begin), tuple(size)
    if not len(begin) == len(size) == x.ndim:
        raise ValueError(f"slice: begin {begin} and size {size} must each have one entry per axis of the "
                         f"{x.ndim}-D input")
    size = tuple(n - b if s == -1 else s for b, s, n in zip(begin, size, x.shape))
    if any(not 0 <= b <= b + s <= n for b, s, n in zip(begin, size, x.shape)):
        raise ValueError(f"slice: begin {begin} with size {size} does not fit the input's shape {x.shape}")
    return jax.lax.slice(x, begin, tuple(b + s for b, s in zip(begin, size)))


@_public
def narrow(input, axis, start, length):  # noqa: A002
    """``length`` elements from ``start`` along ``axis``."""
    x = _arr(input)
    axis = _axis(axis, x.ndim, "narrow")
    n = x.shape[axis]
    if not 0 <= start < n or not 0 <= length <= n - start:
        raise ValueError(f"narrow: start {start} and length {length} must satisfy 0 <= start < {n} and "
                         f"start + length <= {n} (the size of axis {axis})")
    return jax.lax.slice_in_dim(x, start, start + length, axis=axis)


tensor_slice = slice
__all__.append("tensor_slice")


@_public
def space_to_batch_nd(input_x, block_size, paddings):
    """Move blocks of the spatial axes into the batch axis (TensorFlow's ``space_to_batch_nd``)."""
    x = jnp.asarray(_v(input_x))
    m = len(paddings)
    block = [block_size] * m if isinstance(block_size, int) else list(block_size)
    x = jnp.pad(x, [(0, 0)] * (x.ndim - m) + [tuple(p) for p in paddings])
    n, spatial, rest = x.shape[0], x.shape[x.ndim - m:], x.shape[1:x.ndim - m]
    shape = [n, *rest]
    for s, b in zip(spatial, block):
        shape += [s // b, b]
    x = x.reshape(shape)
    lead = len(rest) + 1
    blocks = [lead + 2 * i + 1 for i in range(m)]
    outer = [lead + 2 * i for i in range(m)]
    x = x.transpose(blocks + [0] + list(range(1, lead)) + outer)
    return x.reshape((-1, *rest, *[s // b for s, b in zip(spatial, block)]))


@_public
def batch_to_space_nd(input_x, block_shape, crops):
    """Move blocks of the batch axis back into the spatial axes, then crop (the inverse of ``space_to_batch_nd``)."""
    x = jnp.asarray(_v(input_x))
    m = len(crops)
    block = [block_shape] * m if isinstance(block_shape, int) else list(block_shape)
    nb = int(np.prod(block))
    rest, spatial = x.shape[1:x.ndim - m], x.shape[x.ndim - m:]
    x = x.reshape(block + [x.shape[0] // nb, *rest, *spatial])
    lead = len(rest) + 1
    order = [m] + [m + 1 + i for i in range(len(rest))]
    for i in range(m):
        order += [m + lead + i, i]
    x = x.transpose(order)
    x = x.reshape((x.shape[0], *rest, *[s * b for s, b in zip(spatial, block)]))
    index = (_S(None),) * lead + tuple(_S(c0, x.shape[lead + i] - c1) for i, (c0, c1) in enumerate(crops))
    return x[index]


# ---- masks ------------------------------------------------------------------------------------

def _bool_mask(mask, what):
    mask = _arr(mask)
    if mask.dtype != jnp.bool_:
        raise TypeError(f"{what}: mask must be a Bool tensor, got {mask.dtype}")
    return mask


@_public
def masked_fill(input_x, mask, value):
    """``input_x`` with ``value`` where the Bool ``mask`` (broadcast) is True."""
    x = _arr(input_x)
    mask = _bool_mask(mask, "masked_fill")
    return jnp.where(mask, jnp.asarray(_v(value)).astype(x.dtype), x)


@_public
def masked_select(input, mask):  # noqa: A002
    """The 1-D tensor of ``input``'s elements where ``mask`` (broadcast) is True (eager only)."""
    x = _arr(input)
    mask = _bool_mask(mask, "masked_select")
    shape = jnp.broadcast_shapes(x.shape, mask.shape)
    keep = _concrete(jnp.broadcast_to(mask, shape), "masked_select")
    return jnp.broadcast_to(x, shape)[keep]


@_public
def masked_scatter(input, mask, source):  # noqa: A002
    """``input`` with the True positions of ``mask`` filled, in order, from the flattened ``source``."""
    x = _arr(input)
    mask = jnp.broadcast_to(_bool_mask(mask, "masked_scatter"), x.shape)
    pos = jnp.cumsum(mask.reshape(-1)) - 1
    src = _arr(source).reshape(-1).astype(x.dtype)
    return jnp.where(mask, src[jnp.clip(pos, 0, src.size - 1)].reshape(x.shape), x)


@_public
def nonzero(input, *, as_tuple=False):  # noqa: A002
    """The coordinates of the non-zero elements: an (N, ndim) Int64 tensor, or one 1-D tensor per axis."""
    coords = np.argwhere(_concrete(_arr(input), "nonzero")).astype(default_int_dtype())
    if as_tuple:
        return tuple(jnp.asarray(c) for c in coords.T)
    return jnp.asarray(coords)


@_public
def argwhere(input):  # noqa: A002
    """The (N, ndim) Int64 coordinates of the non-zero elements."""
    return nonzero(input)


@_public
def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """One-hot encode ``indices`` with ``depth`` classes along a new ``axis``; indices outside
    ``[0, depth)`` give all ``off_value``. The dtype is ``on_value``'s (Int64 for the default 1).

    >>> import cellkit as ms
    >>> ms.ops.one_hot(ms.Tensor([0, 2]), 3, ms.Tensor(1.), ms.Tensor(0.))
    Array([[1., 0., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    idx = _arr(indices)
    on, off = _v(on_value), _v(off_value)
    if isinstance(on, (bool, int, float)):
        dtype = np.dtype(default_int_dtype()) if isinstance(on, int) and not isinstance(on, bool) else \
            np.dtype(np.float32) if isinstance(on, float) else np.dtype(np.bool_)
    else:
        dtype = jnp.asarray(on).dtype
    axis = axis % (idx.ndim + 1)
    hot = jnp.expand_dims(idx, axis) == jnp.arange(depth).reshape((depth,) + (1,) * (idx.ndim - axis))
    return jnp.where(hot, jnp.asarray(on, dtype), jnp.asarray(off, dtype))


# ---- segment reductions -----------------------------------------------------------------------

def _segment(kind):
    name = f"unsorted_segment_{kind}"
    reducer = {"sum": jax.ops.segment_sum, "max": jax.ops.segment_max,
               "min": jax.ops.segment_min, "prod": jax.ops.segment_prod}[kind]

    def op(input_x, segment_ids, num_segments):
        x, ids = _arr(input_x), _arr(segment_ids)
        n = int(_v(num_segments))
        flat = x.reshape((-1,) + x.shape[ids.ndim:])
        out = reducer(flat, ids.reshape(-1), num_segments=n)
        if kind in ("max", "min"):
            count = jax.ops.segment_sum(jnp.ones(ids.size, jnp.int32), ids.reshape(-1), num_segments=n)
            info = jnp.finfo(x.dtype) if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype)
            empty = (count == 0).reshape((n,) + (1,) * (out.ndim - 1))
            out = jnp.where(empty, info.min if kind == "max" else info.max, out)
        return out
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"The {kind} of the rows of ``input_x`` with each segment id (``num_segments`` rows; "
                  "an empty segment gives 0 for sum, 1 for prod, the dtype's lowest/highest for max/min).")
    return op


for _kind in ("sum", "max", "min", "prod"):
    globals()[f"unsorted_segment_{_kind}"] = _segment(_kind)
    __all__.append(f"unsorted_segment_{_kind}")


# ---- mixture-of-experts token routing ---------------------------------------------------------

@_public
def moe_token_permute(tokens, indices, num_out_tokens=None, padded_mode=False):
    """Group tokens by expert: ``(permuted_tokens, sorted_indices)``.

    ``indices`` (num_tokens,) or (num_tokens, topk) gives each token's experts; the rows of
    ``tokens`` are ordered by expert (stably), each repeated once per expert it goes to, and
    ``sorted_indices`` (Int32) gives, for each (token, k), its row in ``permuted_tokens``.
    ``num_out_tokens`` keeps that many rows (the rest are dropped).

    >>> import cellkit as ms
    >>> out, where = ms.ops.moe_token_permute(ms.Tensor([[1.], [7.], [2.]]), ms.Tensor([2, 0, 1]))
    >>> out.tolist(), where.tolist()
    ([[7.0], [2.0], [1.0]], [2, 0, 1])
    """
    if padded_mode:
        raise ValueError("moe_token_permute: padded_mode can only be False (as in MindSpore 2.10)")
    x, idx = _arr(tokens), _arr(indices)
    if x.ndim != 2 or idx.ndim not in (1, 2) or idx.shape[0] != x.shape[0]:
        raise ValueError(f"moe_token_permute: tokens must be (num_tokens, hidden) and indices (num_tokens,) or "
                         f"(num_tokens, topk), got {x.shape} and {idx.shape}")
    if not jnp.issubdtype(idx.dtype, jnp.integer):
        raise TypeError(f"moe_token_permute: indices must be int32 or int64, got {idx.dtype}")
    topk = 1 if idx.ndim == 1 else idx.shape[1]
    order = jnp.argsort(idx.reshape(-1), stable=True)
    position = jnp.argsort(order).astype(np.int32)
    if num_out_tokens is not None:
        order = order[:num_out_tokens]
    return x[order // topk], position


@_public
def moe_token_unpermute(permuted_tokens, sorted_indices, probs=None, padded_mode=False, restore_shape=None):
    """Undo ``moe_token_permute``: gather each (token, k) row back and sum over k, weighted by ``probs``
    (num_tokens, topk) when given; dropped rows count as zeros."""
    if padded_mode:
        raise ValueError("moe_token_unpermute: padded_mode can only be False (as in MindSpore 2.10)")
    x, where = _arr(permuted_tokens), _arr(sorted_indices)
    rows = jnp.take(x, where, axis=0, mode="fill", fill_value=0)
    if probs is None:
        return rows
    p = _arr(probs)
    topk = p.shape[-1] if p.ndim > 1 else 1
    rows = rows.reshape(-1, topk, x.shape[-1]) * p.reshape(-1, topk, 1).astype(x.dtype)
    return rows.sum(axis=1)
