"""The conversions every ``cellkit.numpy`` function shares: MindSpore's rules for Python data.

``to_tensor`` turns Python numbers, lists and tuples into 32-bit arrays (int32, float32 or
bool), as ``mindspore.numpy`` does, whatever ``jax_enable_x64`` says; an array (a Tensor, a
Parameter, a NumPy array) keeps its dtype. ``out_dtype`` names the 64-bit dtype MindSpore gives
where it gives one (``int64`` sums, ``argmax`` indices): with ``jax_enable_x64`` off it is the
32-bit one.

>>> import numpy as np
>>> from cellkit.numpy import utils
>>> print(utils.to_tensor([1, 2]).dtype, utils.to_tensor(2.5).dtype, utils.to_tensor(np.int8(3)).dtype)
int32 float32 int8
>>> utils.out_dtype("int64") in (np.int64, np.int32)
True
"""

from __future__ import absolute_import

import jax
import jax.numpy as jnp
import numpy as np

from ..parameter import Parameter
from ..tensor import as_array, to_array

__all__ = ["to_tensor", "to_tensors", "is_array", "out_dtype", "cast", "is_float", "is_int", "x64"]

_NUMBER = (int, float, bool, complex, np.number, np.bool_)


def x64():
    """Whether JAX computes in 64 bits (``jax_enable_x64``)."""
    return bool(jax.config.jax_enable_x64)


def is_array(x):
    return isinstance(x, (jax.Array, np.ndarray, Parameter)) or hasattr(x, "__jax_array__")


def _python_dtype(x):
    """MindSpore's dtype for Python data: bool, int32 or float32 (complex64 for complex)."""
    leaves = []

    def walk(v):
        if isinstance(v, (list, tuple)):
            for e in v:
                walk(e)
        else:
            leaves.append(v)
    walk(x)
    if not leaves:
        return jnp.float32
    if any(is_array(v) for v in leaves):
        return None
    if all(isinstance(v, (bool, np.bool_)) for v in leaves):
        return jnp.bool_
    if all(isinstance(v, (bool, int, np.bool_, np.integer)) for v in leaves):
        return jnp.int32
    if any(isinstance(v, (complex, np.complexfloating)) for v in leaves):
        return jnp.complex64
    return jnp.float32


def to_tensor(x, where="input"):
    """An array of ``x``: Python data as MindSpore converts it (32-bit), arrays as they are."""
    if isinstance(x, Parameter):
        return x.value
    if isinstance(x, jax.Array):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return as_array(x)   # (put on the device as jnp.asarray would, without a compiled copy per shape)
    if hasattr(x, "__jax_array__"):
        return jnp.asarray(x)
    if isinstance(x, _NUMBER) or isinstance(x, (list, tuple)):
        dtype = _python_dtype(x)
        if dtype is None:  # a list holding Tensors
            return jnp.asarray(jnp.stack([to_tensor(v, where) for v in x])) if x else jnp.zeros((0,), jnp.float32)
        try:
            return to_array(np.asarray(x), dtype)   # (converted with NumPy, as jnp.asarray does: no compile)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{where}: cannot make a Tensor of {x!r}: {e}") from None
    raise TypeError(f"{where}: expected a Tensor, a Python number, list or tuple, got {type(x).__name__}")


def to_tensors(*xs, where="input"):
    return tuple(to_tensor(x, where) for x in xs)


def out_dtype(name):
    """A dtype MindSpore gives, as JAX can hold it now (int64/float64 are 32-bit with x64 off)."""
    return jax.dtypes.canonicalize_dtype(np.dtype(name))


def cast(x, dtype):
    """``x`` as ``dtype`` (a cellkit, NumPy or JAX dtype, or None: unchanged)."""
    if dtype is None:
        return x
    dtype = jax.dtypes.canonicalize_dtype(np.dtype(dtype))
    return x if x.dtype == dtype else x.astype(dtype)


def is_float(x):
    return jnp.issubdtype(x.dtype, jnp.inexact)


def is_int(x):
    return jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_
