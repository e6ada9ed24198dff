"""Creation, shape and layout, casting, joining and splitting (MindSpore's ``ops/function/array_func.py``).

Indexing, gathering and scattering live in ``index_func``; sorting, searching and
counting in ``sort_func``; triangles and diagonals in ``matrix_func``. Integer outputs that MindSpore makes Int64 are Int64
with ``jax_enable_x64`` on and Int32 otherwise (see docs/differences.md).

>>> import cellkit as ms
>>> x = ms.ops.arange(6).reshape(2, 3)
>>> [t.shape for t in ms.ops.split(x, [1, 2], axis=1)]
[(2, 1), (2, 2)]
>>> ms.ops.view_as(x, ms.ops.ones((3, 2))).shape
(3, 2)
"""

from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ...tensor import default_int_dtype
from ._utils import _dtype, _v, exporter, install_renames

__all__ = []
_public = exporter(__all__)

# name: (JAX function, MindSpore signature) — the op is that function, with Parameters accepted.
RENAMES = {
    "select": (jnp.where, "(condition, input, other)"),
    "where": (jnp.where, "(condition, input, other)"),
    "ravel": (jnp.ravel, "(input)"),
    "fliplr": (jnp.fliplr, "(input)"),
    "flipud": (jnp.flipud, "(input)"),
    "column_stack": (jnp.column_stack, "(tensors)"),
    "dstack": (jnp.dstack, "(tensors)"),
    "hstack": (jnp.hstack, "(tensors)"),
    "vstack": (jnp.vstack, "(inputs)"),
}
install_renames(globals(), __all__, RENAMES)


def _int(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(x).__name__}")
    return int(x)


def _check_axis(axis, ndim, what):
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(f"{what}: axis {axis} is out of range for a {ndim}-D input "
                         f"(expected -{max(ndim, 1)}..{max(ndim, 1) - 1})")
    return axis % max(ndim, 1)


def canonical(dtype):
    """``dtype`` as JAX holds it: 64-bit types narrow to 32 bits without ``jax_enable_x64``."""
    return jax.dtypes.canonicalize_dtype(np.dtype(dtype))


# ---- creation ---------------------------------------------------------------------------------

@_public
def fill(type, shape, value):  # noqa: A002 - MindSpore's argument name
    """A tensor of ``shape`` filled with ``value``; the dtype comes first, as in MindSpore.

    >>> import cellkit as ms
    >>> ms.ops.fill(ms.float32, (2,), 20)
    Array([20., 20.], dtype=float32)
    """
    return jnp.full(tuple(shape), _v(value), np.dtype(type))


@_public
def fills(x, value):
    """A tensor shaped and typed like ``x``, filled with ``value``."""
    x = _v(x)
    return jnp.full(x.shape, _v(value), x.dtype)


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
def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    """A tensor shaped like ``input`` filled with ``fill_value`` (``input``'s dtype unless given)."""
    x = _v(input)
    return jnp.full(x.shape, _v(fill_value), _dtype(dtype, x.dtype))


@_public
def eye(n, m=None, dtype=None):
    """The ``n`` x ``m`` identity (Float32 by default).

    >>> import cellkit as ms
    >>> ms.ops.eye(2, 3, ms.int32)
    Array([[1, 0, 0],
           [0, 1, 0]], dtype=int32)
    """
    return jnp.eye(_int(n, "eye: n"), None if m is None else _int(m, "eye: m"), dtype=_dtype(dtype, np.float32))


@_public
def arange(start=0, end=None, step=1, *, dtype=None):
    """``start, start+step, ...`` below ``end``; Int64 for int arguments, Float32 for floats.

    >>> import cellkit as ms
    >>> ms.ops.arange(0., 1., 0.25)
    Array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    """
    start, end, step = _v(start), _v(end), _v(step)
    if end is None:
        start, end = 0, start
    if not isinstance(step, jax.Array) and step == 0:
        raise ValueError("arange: step must not be 0")
    if dtype is None:
        kinds = [np.asarray(v).dtype.kind for v in (start, end, step)]
        dtype = np.float32 if "f" in kinds else default_int_dtype()
    return jnp.arange(start, end, step, dtype=np.dtype(dtype))


@_public
def range(start, end, step, maxlen=1000000):  # noqa: A001 - MindSpore's name
    """``arange`` over scalar tensors: Int64 for ints, else Float32 (``maxlen`` is accepted)."""
    start, end, step = (jnp.asarray(_v(v)) for v in (start, end, step))
    if float(step) == 0:
        raise ValueError("range: step must not be 0")
    ints = all(jnp.issubdtype(v.dtype, jnp.integer) for v in (start, end, step))
    return jnp.arange(start.item(), end.item(), step.item(), dtype=default_int_dtype() if ints else np.float32)


@_public
def linspace(start, end, steps):
    """``steps`` evenly spaced Float32 values from ``start`` to ``end`` inclusive."""
    return jnp.linspace(_v(start), _v(end), _int(steps, "linspace: steps"), dtype=np.float32)


@_public
def logspace(start, end, steps, base=10, *, dtype=mstype.float32):
    """``base ** linspace(start, end, steps)``."""
    return jnp.logspace(_v(start), _v(end), _int(steps, "logspace: steps"), base=base, dtype=np.dtype(dtype))


@_public
def scalar_to_tensor(input_x, dtype=mstype.float32):
    """A 0-d tensor of ``dtype`` (Float32 by default)."""
    return jnp.asarray(_v(input_x), np.dtype(dtype))


@_public
def tuple_to_array(input_x):
    """A 1-D tensor from a tuple of numbers: Int32 for ints, Float32 when any is a float."""
    kind = np.float32 if any(isinstance(v, float) for v in input_x) else np.int32
    return jnp.asarray(input_x, kind)


@_public
def sequence_mask(lengths, maxlen=None):
    """``mask[..., j] = j < lengths[...]`` (Bool), ``maxlen`` columns (the largest length by default)."""
    lengths = jnp.asarray(_v(lengths))
    if maxlen is None:
        maxlen = int(jnp.max(lengths))
    return jnp.arange(maxlen) < lengths[..., None]


@_public
def meshgrid(*inputs, indexing="xy"):
    """Coordinate grids from 1-D tensors (``indexing`` "xy" or "ij")."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = inputs[0]
    return tuple(jnp.meshgrid(*[_v(t) for t in inputs], indexing=indexing))


# ---- dtype and shape --------------------------------------------------------------------------

@_public
def cast(input, dtype):  # noqa: A002
    """Convert to ``dtype``.

    >>> import cellkit as ms
    >>> ms.ops.cast(ms.Tensor([1.7]), ms.int32)
    Array([1], dtype=int32)
    """
    return jnp.asarray(_v(input)).astype(np.dtype(dtype))


@_public
def shape(input_x):
    """The shape as a tuple."""
    return tuple(jnp.shape(_v(input_x)))


@_public
def rank(input_x):
    """The number of dimensions."""
    return jnp.ndim(_v(input_x))


@_public
def size(input_x):
    """The number of elements."""
    return int(np.prod(jnp.shape(_v(input_x))))


@_public
def dtype(input_x):
    """The MindSpore dtype of a tensor."""
    return mstype.get_dtype(jnp.result_type(_v(input_x)))


@_public
def dyn_shape(input_x):
    """The shape as a 1-D Int64 tensor."""
    return jnp.asarray(jnp.shape(_v(input_x)), canonical(mstype.int64))


@_public
def is_tensor(obj):
    """Whether ``obj`` is a Tensor (a ``jax.Array`` or a Parameter)."""
    from ...tensor import is_tensor as _is_tensor
    return _is_tensor(obj)


@_public
def is_nonzero(input):  # noqa: A002
    """Whether the one element of ``input`` is non-zero."""
    x = jnp.asarray(_v(input))
    if x.size != 1:
        raise RuntimeError(f"is_nonzero: the input must have exactly one element, got shape {x.shape}")
    return bool(x.reshape(()))


@_public
def type_as(input, other):  # noqa: A002
    """``input`` cast to ``other``'s dtype."""
    return jnp.asarray(_v(input)).astype(jnp.result_type(_v(other)))


@_public
def view_as(input, other):  # noqa: A002
    """``input`` reshaped to ``other``'s shape."""
    return reshape(input, jnp.shape(_v(other)))


@_public
def deepcopy(input_x):
    """A copy of ``input_x``."""
    return jnp.array(_v(input_x), copy=True)


@_public
def padding(x, pad_dim_size=8):
    """Widen the last axis (of size 1) to ``pad_dim_size``, the new entries 0."""
    x = jnp.asarray(_v(x))
    if x.ndim < 1 or x.shape[-1] != 1 or pad_dim_size < 1:
        raise ValueError(f"padding: the last axis must have size 1 and pad_dim_size be >= 1, got shape {x.shape} "
                         f"and {pad_dim_size}")
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad_dim_size - 1)])


@_public
def scalar_cast(input_x, input_y):
    """A Python scalar converted to ``input_y`` (Int64, Float64 or Bool, MindSpore's choices)."""
    kind = np.dtype(input_y).kind
    if kind not in "ifb" or np.dtype(input_y).itemsize not in (1, 8):
        raise ValueError(f"scalar_cast: the type must be Int64, Float64 or Bool, got {input_y}")
    return {"i": int, "f": float, "b": bool}[kind](_v(input_x))


@_public
def reshape(input, shape):  # noqa: A002
    """``input`` with a new ``shape`` (one entry may be -1).

    >>> import cellkit as ms
    >>> ms.ops.reshape(ms.ops.ones((2, 3)), (3, -1)).shape
    (3, 2)
    """
    x = _v(input)
    shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else np.asarray(shape).tolist()))
    known = int(np.prod([s for s in shape if s != -1]))
    if shape.count(-1) > 1 or (-1 in shape and (known == 0 or x.size % known)) or \
            (-1 not in shape and known != x.size):
        raise ValueError(f"reshape: shape {shape} is invalid for an input of {x.size} elements (shape {x.shape})")
    return jnp.reshape(x, shape)


reshape_ = reshape
shape_ = shape
__all__ += ["reshape_", "shape_"]


@_public
def transpose(input, input_perm):  # noqa: A002
    """Permute the axes (``input_perm`` is MindSpore 2.10's ``dims``).

    >>> import cellkit as ms
    >>> ms.ops.transpose(ms.ops.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = _v(input)
    perm = tuple(input_perm)
    if len(perm) != x.ndim or sorted(p % max(x.ndim, 1) for p in perm) != list(builtins.range(x.ndim)):
        raise ValueError(f"transpose: the permutation {perm} is not a permutation of the {x.ndim} axes of the input")
    return jnp.transpose(x, perm)


@_public
def permute(input, axis):  # noqa: A002
    """Permute the axes to ``axis``."""
    return transpose(input, axis)


@_public
def swapaxes(input, axis0, axis1):  # noqa: A002
    """Swap two axes."""
    return jnp.swapaxes(_v(input), axis0, axis1)


@_public
def swapdims(input, dim0, dim1):  # noqa: A002
    """Swap two axes."""
    return jnp.swapaxes(_v(input), dim0, dim1)


@_public
def moveaxis(x, source, destination):
    """Move axes ``source`` to positions ``destination``."""
    return jnp.moveaxis(_v(x), source, destination)


movedim = moveaxis
__all__.append("movedim")


@_public
def squeeze(input, axis=None):  # noqa: A002
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    return jnp.squeeze(_v(input), axis=tuple(axis) if isinstance(axis, list) else axis)


@_public
def expand_dims(input_x, axis):
    """Insert an axis of size 1 at ``axis``."""
    return jnp.expand_dims(_v(input_x), axis)


@_public
def unsqueeze(input, dim):  # noqa: A002
    """Insert an axis of size 1 at ``dim``."""
    return jnp.expand_dims(_v(input), dim)


@_public
def flatten(input, order="C", *, start_dim=1, end_dim=-1):  # noqa: A002
    """Flatten dimensions ``start_dim..end_dim`` (MindSpore's default keeps the batch axis)."""
    x = _v(input)
    if x.ndim == 0:
        return x.reshape(1)
    if order not in ("C", "F"):
        raise ValueError(f"flatten: order must be 'C' or 'F', got {order!r}")
    if order == "F":
        x = x.T
    start = start_dim % x.ndim
    end = end_dim % x.ndim
    return x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:])


@_public
def broadcast_to(input, shape):  # noqa: A002
    """Broadcast to ``shape`` (-1 keeps a dimension)."""
    x = _v(input)
    shape = tuple(shape)
    lead = len(shape) - x.ndim
    full_shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    if lead < 0 or any(d not in (1, s) for d, s in zip(x.shape, full_shape[lead:])):
        raise ValueError(f"broadcast_to: an input of shape {x.shape} cannot be broadcast to {shape}")
    return jnp.broadcast_to(x, full_shape)


@_public
def expand(input_x, size):
    """Broadcast to ``size`` (a tensor or tuple of ints; -1 keeps a dimension)."""
    return broadcast_to(input_x, tuple(int(s) for s in np.asarray(_v(size)).reshape(-1)))


@_public
def expand_as(input, other):  # noqa: A002
    """Broadcast ``input`` to ``other``'s shape."""
    return broadcast_to(input, jnp.shape(_v(other)))


# ---- joining and splitting --------------------------------------------------------------------

def _check_join(tensors, what, same_shape):
    arrays = [jnp.asarray(_v(t)) for t in tensors]
    if not arrays:
        raise ValueError(f"{what}: needs at least one tensor")
    first = arrays[0]
    for i, a in enumerate(arrays[1:], 1):
        if a.ndim != first.ndim or (same_shape and a.shape != first.shape):
            raise ValueError(f"{what}: tensor {i} has shape {a.shape}, tensor 0 has {first.shape}; "
                             f"{'shapes' if same_shape else 'ranks'} must match")
    return arrays


@_public
def concat(tensors, axis=0):
    """Join tensors along an existing axis.

    >>> import cellkit as ms
    >>> ms.ops.concat((ms.ops.ones((1, 2)), ms.ops.zeros((1, 2)))).shape
    (2, 2)
    """
    arrays = _check_join(tensors, "concat", False)
    return jnp.concatenate(arrays, axis=axis)


cat = concat
__all__.append("cat")


@_public
def stack(tensors, axis=0):
    """Join tensors of one shape along a new axis."""
    return jnp.stack(_check_join(tensors, "stack", True), axis=axis)


@_public
def split(tensor, split_size_or_sections, axis=0):
    """Split into chunks of ``split_size_or_sections`` (an int size or a list of sizes)."""
    x = _v(tensor)
    axis = _check_axis(axis, x.ndim, "split")
    n = x.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)):
        bounds = list(builtins.range(int(split_size_or_sections), n, int(split_size_or_sections)))
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != n:
            raise ValueError(f"split: the sections {sections} must add up to {n}, the size of axis {axis}")
        bounds = list(np.cumsum(sections)[:-1])
    return tuple(jnp.split(x, bounds, axis=axis))


@_public
def tensor_split(input, indices_or_sections, axis=0):  # noqa: A002
    """Split into ``n`` nearly equal parts (an int) or at the given indices (a list)."""
    x = _v(input)
    if not isinstance(indices_or_sections, (int, np.integer)):
        indices_or_sections = list(indices_or_sections)
    return tuple(jnp.array_split(x, indices_or_sections, axis=axis))


def _directional_split(axis, name):
    def op(input, indices_or_sections):  # noqa: A002
        x = _v(input)
        return tensor_split(x, indices_or_sections, axis if x.ndim > 1 or axis == 0 else 0)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``tensor_split`` along axis {axis}."
    return op


for _axis_, _name_ in ((0, "vsplit"), (1, "hsplit"), (2, "dsplit")):
    globals()[_name_] = _directional_split(_axis_, _name_)
    __all__.append(_name_)


@_public
def chunk(input, chunks, axis=0):  # noqa: A002
    """Split into ``chunks`` parts of ``ceil(n / chunks)`` (the last may be smaller)."""
    x = _v(input)
    n = x.shape[_check_axis(axis, x.ndim, "chunk")]
    size = -(-n // chunks)
    return split(x, size, axis)


@_public
def unstack(input_x, axis=0):
    """The slices along ``axis``, as a tuple."""
    x = _v(input_x)
    axis = _check_axis(axis, x.ndim, "unstack")
    return tuple(jnp.moveaxis(x, axis, 0))


@_public
def unbind(input, dim=0):  # noqa: A002
    """The slices along ``dim``, as a tuple."""
    return unstack(input, dim)


@_public
def tile(input, dims):  # noqa: A002
    """Repeat ``input`` ``dims[i]`` times along each axis."""
    return jnp.tile(_v(input), tuple(dims))


@_public
def repeat_interleave(input, repeats, axis=None):  # noqa: A002
    """Repeat each element ``repeats`` times (an int or a tensor of counts) along ``axis`` (flattened if None)."""
    repeats = _v(repeats)
    if isinstance(repeats, (jax.Array, np.ndarray)) and repeats.ndim:
        repeats = np.asarray(repeats)
    return jnp.repeat(_v(input), repeats, axis=axis)


@_public
def repeat_elements(x, rep, axis=0):
    """Repeat each element ``rep`` times along ``axis``."""
    return jnp.repeat(_v(x), _int(rep, "repeat_elements: rep"), axis=axis)


@_public
def flip(input, dims):  # noqa: A002
    """Reverse the order along the axes in ``dims`` (a tuple or list)."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"flip: dims must be a tuple or list of ints, got {type(dims).__name__}")
    return jnp.flip(_v(input), tuple(dims))


@_public
def reverse(x, axis):
    """Reverse the order along the axes in ``axis``."""
    return jnp.flip(_v(x), tuple(axis))


@_public
def rot90(input, k, dims):  # noqa: A002
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``."""
    return jnp.rot90(_v(input), k, tuple(dims))


@_public
def roll(input, shifts, dims=None):  # noqa: A002
    """Roll elements along ``dims`` (the flattened tensor when None) by ``shifts``."""
    return jnp.roll(_v(input), shifts, dims)


@_public
def reverse_sequence(x, seq_lengths, seq_dim, batch_dim=0):
    """Reverse the first ``seq_lengths[b]`` elements along ``seq_dim`` of each batch entry ``b``."""
    x = _v(x)
    lengths = jnp.asarray(_v(seq_lengths))
    n = x.shape[seq_dim]
    pos = jnp.arange(n)
    shape = [1] * x.ndim
    shape[seq_dim] = n
    lshape = [1] * x.ndim
    lshape[batch_dim] = x.shape[batch_dim]
    pos, lengths = pos.reshape(shape), lengths.reshape(lshape)
    src = jnp.where(pos < lengths, lengths - 1 - pos, pos)
    return jnp.take_along_axis(x, jnp.broadcast_to(src, x.shape), axis=seq_dim)
