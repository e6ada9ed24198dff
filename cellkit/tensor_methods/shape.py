"""Shape methods: ``view(*shape)``, ``unsqueeze``, ``permute``, ``expand``, ``flatten(start_dim, end_dim)``, ...

>>> import cellkit as ms
>>> x = ms.ops.ones((2, 3))
>>> x.view(3, -1).shape, x.unsqueeze(0).shape, x.permute(1, 0).shape, x.expand(4, 2, 3).shape
((3, 2), (1, 2, 3), (3, 2), (4, 2, 3))
>>> [c.shape for c in x.chunk(2, 1)], x.flatten(1).shape, x.view(ms.int32).dtype
([(2, 2), (2, 1)], (2, 3), dtype('int32'))
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ._common import arr, dims_arg, shape_arg

__all__ = ["METHODS", "PROPERTIES", "ADAPTERS"]


def _expand(x, *size):
    size = shape_arg(size)
    lead = len(size) - x.ndim
    if lead < 0:
        raise ValueError(f"Tensor.expand: the size {size} has fewer dimensions than the tensor's shape {x.shape}")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(size))
    return jnp.broadcast_to(x, shape)


def _narrow(x, dim, start, length):
    start = int(start) % x.shape[dim] if int(start) < 0 else int(start)
    return jax.lax.slice_in_dim(x, start, start + int(length), axis=dim)


def _flatten_dims(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start_dim % x.ndim, end_dim % x.ndim
    if s > e:
        raise ValueError(f"Tensor.flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"for a {x.ndim}-d tensor")
    return x.reshape(x.shape[:s] + (math.prod(x.shape[s:e + 1]),) + x.shape[e + 1:])


def _split(x, split_size_or_sections, dim=0, *, axis=None):
    dim = dim if axis is None else axis
    n = x.shape[dim]
    if isinstance(split_size_or_sections, int):
        points = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        points = np.cumsum(list(split_size_or_sections))[:-1].tolist()
    return tuple(jnp.split(x, points, axis=dim))


def _chunk(x, chunks, dim=0, *, axis=None):
    dim = dim if axis is None else axis
    step = -(-x.shape[dim] // chunks)
    return _split(x, step, dim)


def _tensor_split(x, indices_or_sections, axis=0, *, dim=None):
    return tuple(jnp.array_split(x, indices_or_sections, axis=axis if dim is None else dim))


def _unbind(x, dim=0):
    return tuple(jnp.moveaxis(x, dim, 0))


def _repeat_interleave(x, repeats, dim=None, output_size=None):
    return jnp.repeat(x, arr(repeats), axis=dim, total_repeat_length=output_size)


def _roll(x, shifts, dims=None):
    return jnp.roll(x, shifts, axis=dims)


def _flip(x, dims):
    return jnp.flip(x, axis=tuple(dims) if isinstance(dims, (list, tuple)) else dims)


def _resize(x, *new_shape):
    shape = dims_arg(new_shape)
    flat = x.reshape(-1)
    n = math.prod(shape)
    flat = flat[:n] if n <= flat.size else jnp.concatenate([flat, jnp.zeros(n - flat.size, x.dtype)])
    return flat.reshape(shape)


def _unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """im2col, as ``ops.unfold``: (N, C, H, W) -> (N, C*kh*kw, L)."""
    pair = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v, v)  # noqa: E731
    ph, pw = pair(padding)
    patches = jax.lax.conv_general_dilated_patches(
        x, pair(kernel_size), pair(stride), ((ph, ph), (pw, pw)), rhs_dilation=pair(dilation))
    return patches.reshape(patches.shape[0], patches.shape[1], -1)


def _new(fill):
    def new(x, *size, dtype=None, **_device):
        return jnp.full(shape_arg(size), fill, dtype=x.dtype if dtype is None else dtype)
    return new


def _new_full(x, size, fill_value, *, dtype=None, **_device):
    return jnp.full(tuple(size), fill_value, dtype=x.dtype if dtype is None else dtype)


METHODS = {
    "expand_dims": lambda x, axis: jnp.expand_dims(x, axis),
    "unsqueeze": lambda x, dim: jnp.expand_dims(x, dim),
    "view_as": lambda x, other: x.reshape(other.shape),
    "reshape_as": lambda x, other: x.reshape(other.shape),
    "expand": _expand,
    "expand_as": lambda x, other: jnp.broadcast_to(x, other.shape),
    "broadcast_to": lambda x, shape: _expand(x, shape),
    "permute": lambda x, *dims: jnp.transpose(x, dims_arg(dims)),
    "narrow": _narrow,
    "unbind": _unbind,
    "chunk": _chunk,
    "split": _split,
    "tensor_split": _tensor_split,
    "tile": lambda x, *dims: jnp.tile(x, dims_arg(dims)),
    "repeat_interleave": _repeat_interleave,
    "flip": _flip,
    "reverse": lambda x, axis: _flip(x, axis),
    "roll": _roll,
    "tril": lambda x, diagonal=0: jnp.tril(x, diagonal),
    "triu": lambda x, diagonal=0: jnp.triu(x, diagonal),
    "t": lambda x: x.T if x.ndim == 2 else x,
    "movedim": lambda x, source, destination: jnp.moveaxis(x, source, destination),
    "moveaxis": lambda x, source, destination: jnp.moveaxis(x, source, destination),
    "swapdims": lambda x, dim0, dim1: jnp.swapaxes(x, dim0, dim1),
    "resize": _resize,
    "unfold": _unfold,
    "new_zeros": _new(0),
    "new_ones": _new(1),
    "new_empty": _new(0),
    "new_full": _new_full,
    "new_tensor": lambda x, data, dtype=None: jnp.asarray(data, dtype=x.dtype if dtype is None else dtype),
}

PROPERTIES = {}


# ----- names jax.Array already has: JAX's calls keep JAX's meaning ---------------------

def _view(jax_view):
    def view(x, *args, **kwargs):
        """``x.view(2, -1)`` / ``x.view((2, -1))`` reshapes (MindSpore); ``x.view(dtype)`` is JAX's."""
        if kwargs or not args or not isinstance(args[0], (int, np.integer, tuple, list)) \
                or isinstance(args[0], bool):
            return jax_view(x, *args, **kwargs)
        return x.reshape(dims_arg(args))
    return view


def _squeeze(jax_squeeze):
    def squeeze(x, *args, **kwargs):
        """Also ``squeeze(dim=...)``, ``squeeze(0, 2)``, and a named axis whose size is not 1 is kept."""
        if "dim" in kwargs:
            kwargs["axis"] = kwargs.pop("dim")
        if len(args) > 1:
            args = (tuple(args),)
        axis = args[0] if args else kwargs.get("axis")
        if axis is None:
            return jax_squeeze(x, *args, **kwargs)
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        return jax_squeeze(x, tuple(a for a in axes if x.shape[a] == 1))
    return squeeze


def _swapaxes(jax_swapaxes):
    def swapaxes(x, *args, **kwargs):
        """Also MindSpore's keywords ``axis0``/``axis1`` (JAX's are ``axis1``/``axis2``)."""
        if "axis0" in kwargs or (len(args) == 1 and "axis1" in kwargs and "axis2" not in kwargs):
            first = args[0] if args else kwargs.pop("axis0")
            return jax_swapaxes(x, first, kwargs.pop("axis1"))
        return jax_swapaxes(x, *args, **kwargs)
    return swapaxes


def _flatten(jax_flatten):
    def flatten(x, *args, **kwargs):
        """``flatten(order)`` is JAX's; ``flatten(start_dim, end_dim)`` is MindSpore's."""
        start = kwargs.pop("start_dim", None)
        end = kwargs.pop("end_dim", -1)
        if args and isinstance(args[0], (int, np.integer)) and not isinstance(args[0], bool):
            start, *rest = args
            end = rest[0] if rest else end
            args = ()
        if start is None and end == -1:
            return jax_flatten(x, *args, **kwargs)
        x = jax_flatten(x, *args, **kwargs).reshape(x.shape) if args or kwargs else x
        return _flatten_dims(x, 0 if start is None else start, end)
    return flatten


def _transpose(jax_transpose):
    def transpose(x, *args, **kwargs):
        """``transpose(dim0, dim1)`` swaps two axes of a tensor of any rank (MindSpore)."""
        if "dim0" in kwargs:
            return jnp.swapaxes(x, kwargs["dim0"], kwargs["dim1"])
        if len(args) == 2 and x.ndim != 2 and not kwargs and all(isinstance(a, (int, np.integer)) for a in args):
            return jnp.swapaxes(x, *args)
        return jax_transpose(x, *args, **kwargs)
    return transpose


ADAPTERS = {
    "view": _view,
    "squeeze": _squeeze,
    "flatten": _flatten,
    "transpose": _transpose,
    "swapaxes": _swapaxes,
}
