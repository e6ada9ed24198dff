"""Creation, shape and layout, casting, indexing and selection (MindSpore's ``ops/function/array_func.py``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ._utils import _dtype, _v, exporter, install_renames

__all__ = []
_public = exporter(__all__)

# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {
    "select": (jnp.where, "(condition, input, other)"),
    "where": (jnp.where, "(condition, input, other)"),
    "reshape": (jnp.reshape, "(input, shape)"),
    "tile": (jnp.tile, "(input, dims)"),
    "flip": (jnp.flip, "(input, dims)"),
}
install_renames(globals(), __all__, RENAMES)


@_public
def fill(type, shape, value):  # noqa: A002 - MindSpore's argument name
    """A tensor of ``shape`` filled with ``value``; the dtype comes first, as in MindSpore.

    >>> import cellkit as ms
    >>> ms.ops.fill(ms.float32, (2,), 20)
    Array([20., 20.], dtype=float32)
    """
    return jnp.full(tuple(shape), _v(value), np.dtype(type))


@_public
def ones(shape, dtype=None):
    """Ones of ``shape`` (Float32 by default).

    >>> import cellkit as ms
    >>> ms.ops.ones((2, 1)).shape
    (2, 1)
    """
    return jnp.ones(shape, _dtype(dtype, np.float32))


@_public
def zeros(size, dtype=None):
    """Zeros of ``size`` (Float32 by default).

    >>> import cellkit as ms
    >>> ms.ops.zeros(3, ms.int32)
    Array([0, 0, 0], dtype=int32)
    """
    return jnp.zeros(size, _dtype(dtype, np.float32))


@_public
def ones_like(input, *, dtype=None):  # noqa: A002
    """Ones with the shape (and, unless given, dtype) of ``input``."""
    return jnp.ones_like(_v(input), dtype=_dtype(dtype))


@_public
def zeros_like(input, *, dtype=None):  # noqa: A002
    """Zeros with the shape (and, unless given, dtype) of ``input``."""
    return jnp.zeros_like(_v(input), dtype=_dtype(dtype))


@_public
def full(size, fill_value, *, dtype=None):
    """A tensor of ``size`` filled with ``fill_value``."""
    return jnp.full(size, _v(fill_value), _dtype(dtype))


@_public
def transpose(input, input_perm):  # noqa: A002
    """Permute the axes (``input_perm`` is MindSpore 2.10's ``dims``).

    >>> import cellkit as ms
    >>> ms.ops.transpose(ms.ops.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return jnp.transpose(_v(input), tuple(input_perm))


permute = transpose


__all__.append("permute")


@_public
def concat(tensors, axis=0):
    """Join tensors along an existing axis.

    >>> import cellkit as ms
    >>> ms.ops.concat((ms.ops.ones((1, 2)), ms.ops.zeros((1, 2)))).shape
    (2, 2)
    """
    return jnp.concatenate([_v(t) for t in tensors], axis=axis)


cat = concat


__all__.append("cat")


@_public
def stack(tensors, axis=0):
    """Join tensors along a new axis."""
    return jnp.stack([_v(t) for t in tensors], axis=axis)


@_public
def split(tensor, split_size_or_sections, axis=0):
    """Split into chunks of ``split_size_or_sections`` (an int size or a list of sizes)."""
    x = _v(tensor)
    if isinstance(split_size_or_sections, int):
        bounds = list(range(split_size_or_sections, x.shape[axis], split_size_or_sections))
    else:
        bounds = list(np.cumsum(split_size_or_sections)[:-1])
    return tuple(jnp.split(x, bounds, axis=axis))


@_public
def squeeze(input, axis=None):  # noqa: A002
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    return jnp.squeeze(_v(input), axis=axis)


@_public
def expand_dims(input_x, axis):
    """Insert an axis of size 1 at ``axis``."""
    return jnp.expand_dims(_v(input_x), axis)


unsqueeze = expand_dims


__all__.append("unsqueeze")


@_public
def flatten(input, order="C", *, start_dim=1, end_dim=-1):  # noqa: A002
    """Flatten dimensions ``start_dim..end_dim`` (MindSpore's default keeps the batch axis)."""
    x = _v(input)
    if x.ndim == 0:
        return x.reshape(1)
    start = start_dim % x.ndim
    end = end_dim % x.ndim
    return x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:])


@_public
def cast(input, dtype):  # noqa: A002
    """Convert to ``dtype``.

    >>> import cellkit as ms
    >>> ms.ops.cast(ms.Tensor([1.7]), ms.int32)
    Array([1], dtype=int32)
    """
    return jnp.asarray(_v(input)).astype(np.dtype(dtype))


@_public
def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1):
    """One-hot encode ``indices`` with ``depth`` classes."""
    hot = jax.nn.one_hot(_v(indices), depth, axis=axis)
    return jnp.where(hot > 0, _v(on_value), _v(off_value)).astype(jnp.result_type(_v(on_value), jnp.float32))


@_public
def gather(input_params, input_indices, axis, batch_dims=0):
    """Take slices of ``input_params`` at ``input_indices`` along ``axis``."""
    return jnp.take(_v(input_params), _v(input_indices), axis=axis)


@_public
def broadcast_to(input, shape):  # noqa: A002
    """Broadcast to ``shape`` (-1 keeps a dimension)."""
    x = _v(input)
    shape = tuple(x.shape[i - len(shape) + x.ndim] if s == -1 else s for i, s in enumerate(shape))
    return jnp.broadcast_to(x, shape)


@_public
def shape(input_x):
    """The shape as a tuple."""
    return tuple(jnp.shape(_v(input_x)))


@_public
def size(input_x):
    """The number of elements."""
    return int(np.prod(jnp.shape(_v(input_x))))


@_public
def dtype(input_x):
    """The MindSpore dtype of a tensor."""
    return mstype.get_dtype(jnp.result_type(_v(input_x)))
