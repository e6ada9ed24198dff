"""MindSpore's functional ops over ``jax.numpy`` and ``jax.lax``.

Where an op is a rename of a JAX function with the same argument order, it is
one line of :data:`RENAMES`; ops whose arguments differ (MindSpore's
``keep_dims`` / ``keepdim`` spellings, dtype-first ``fill``) are small
functions below. Every op accepts Parameters wherever it accepts Tensors and
returns ``jax.Array``\\ s, so all of them work eagerly, under ``cellkit.jit``
and under plain ``jax.jit``/``jax.grad``.

>>> import cellkit as ms
>>> from cellkit import ops
>>> x = ms.Tensor([[1., -2.], [3., 4.]])
>>> ops.relu(x)
Array([[1., 0.],
       [3., 4.]], dtype=float32)
>>> ops.sum(x, dim=1, keepdim=True).shape
(2, 1)
>>> values, indices = ops.max(x, axis=0)
>>> values, indices.tolist()
(Array([3., 4.], dtype=float32), [1, 1])
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import dtype as mstype
from ..parameter import Parameter
from ..tensor import default_int_dtype

__all__ = []  # filled in below


def _v(x):
    """A Parameter's value (lists/tuples of them too); anything else unchanged."""
    if isinstance(x, Parameter):
        return x.value
    if isinstance(x, (list, tuple)) and any(isinstance(e, Parameter) for e in x):
        return [_v(e) for e in x]
    return x


def _public(fn):
    __all__.append(fn.__name__)
    return fn


def _rename(name, jax_fn, doc):
    @functools.wraps(jax_fn)
    def op(*args, **kwargs):
        return jax_fn(*[_v(a) for a in args], **{k: _v(v) for k, v in kwargs.items()})
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"MindSpore ``ops.{name}{doc}``: ``{jax_fn.__module__}.{jax_fn.__name__}``."
    op.__wrapped__ = jax_fn
    return op


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
    "select": (jnp.where, "(condition, input, other)"),
    "where": (jnp.where, "(condition, input, other)"),
    "reshape": (jnp.reshape, "(input, shape)"),
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
    "sigmoid": (jax.nn.sigmoid, "(input)"),
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
    "tile": (jnp.tile, "(input, dims)"),
    "flip": (jnp.flip, "(input, dims)"),
    "outer": (jnp.outer, "(input, vec2)"),
    "dot": (jnp.dot, "(input, other)"),
    "bmm": (jnp.matmul, "(input_x, mat2)"),
    "softplus": (jax.nn.softplus, "(input)"),
    "silu": (jax.nn.silu, "(input)"),
    "relu6": (jax.nn.relu6, "(x)"),
}

for _name, (_fn, _sig) in RENAMES.items():
    globals()[_name] = _rename(_name, _fn, _sig)
    __all__.append(_name)


def _dtype(dtype, default=None):
    return default if dtype is None else np.dtype(dtype)


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


def _axis(dim):
    return tuple(dim) if isinstance(dim, list) else dim


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
def relu(input, inplace=False):  # noqa: A002
    """max(input, 0)."""
    return jax.nn.relu(_v(input))


@_public
def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    """Softmax over ``axis``."""
    x = _v(input)
    if dtype is not None:
        x = x.astype(np.dtype(dtype))
    return jax.nn.softmax(x, axis=axis)


@_public
def log_softmax(logits, axis=-1):
    """Log-softmax over ``axis``."""
    return jax.nn.log_softmax(_v(logits), axis=axis)


@_public
def gelu(input_x, approximate="none"):
    """GELU; ``approximate='tanh'`` for the tanh approximation."""
    return jax.nn.gelu(_v(input_x), approximate=approximate == "tanh")


@_public
def leaky_relu(input, alpha=0.2):  # noqa: A002
    """Leaky ReLU with slope ``alpha`` (MindSpore's default 0.2)."""
    return jax.nn.leaky_relu(_v(input), alpha)


@_public
def cast(input, dtype):  # noqa: A002
    """Convert to ``dtype``.

    >>> import cellkit as ms
    >>> ms.ops.cast(ms.Tensor([1.7]), ms.int32)
    Array([1], dtype=int32)
    """
    return jnp.asarray(_v(input)).astype(np.dtype(dtype))


@_public
def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """Clip to ``[clip_value_min, clip_value_max]`` (either bound may be None)."""
    return jnp.clip(_v(x), _v(clip_value_min), _v(clip_value_max))


clamp = clip = clip_by_value
__all__ += ["clamp", "clip"]


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
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: N803,A002
    """Vector or matrix norm."""
    return jnp.linalg.norm(_v(A), ord=ord, axis=_axis(dim), keepdims=keepdim)


@_public
def stop_gradient(x):
    """Block gradients through ``x``."""
    return jax.lax.stop_gradient(_v(x))


@_public
def depend(value, expr):
    """Return ``value`` (ordering is implicit in JAX's data flow)."""
    return value


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


@_public
def assign(variable, value):
    """Assign ``value`` to the Parameter ``variable`` in place; returns the new value.

    The shape must match exactly and the value's dtype must promote to the
    Parameter's (MindSpore's rule); inside ``cellkit.jit`` the assignment is
    written back after the call.

    >>> import cellkit as ms
    >>> b = ms.Parameter(ms.Tensor([1., 2.]), name="b")
    >>> _ = ms.ops.assign(b, ms.Tensor([7, 8]))
    >>> b.asnumpy()
    array([7., 8.], dtype=float32)
    """
    if not isinstance(variable, Parameter):
        raise TypeError(f"assign: variable must be a Parameter, got {type(variable).__name__}; "
                        "Tensors are immutable jax.Arrays in cellkit")
    label = f"assign to Parameter '{variable.name}'"
    target = np.dtype(variable.dtype)
    value = _v(value)
    if isinstance(value, (bool, int, float, complex)):
        kind = {bool: "b", int: "i", float: "f", complex: "c"}[type(value)]
        ok = "biufc".index(kind) <= "biufc".index(target.kind if target.kind in "biufc" else "c")
        if kind == "i" and target.kind == "u":
            ok = True
        if not ok:
            raise TypeError(f"{label}: a Python {type(value).__name__} cannot be stored in a "
                            f"{variable.dtype} Parameter without losing data")
    else:
        value = jnp.asarray(value)
        if jnp.promote_types(value.dtype, target) != target:
            raise TypeError(f"{label}: the value has dtype {mstype.get_dtype(value.dtype)}, which does "
                            f"not convert to {variable.dtype} without losing data (MindSpore's "
                            "promotion rule); cast it explicitly with ops.cast")
    return variable.assign_value(value).value


@_public
def isinstance_(x, t):
    """Python's isinstance (MindSpore exposes it for graph mode)."""
    return isinstance(x, t)
