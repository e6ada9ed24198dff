"""``mindspore.numpy`` (a first part): the functions MindSpore's model zoos call, over ``jax.numpy``.

>>> import cellkit.numpy as mnp
>>> [a.tolist() for a in mnp.split(mnp.arange(5), [2, 3])]
[[0, 1], [2], [3, 4]]
"""

import jax.numpy as jnp

from ..dtype import float32

__all__ = ["arange", "ones", "zeros", "roll", "tile", "tensordot", "split"]


def arange(start, stop=None, step=None, dtype=None):
    """``mindspore.numpy.arange``: integers give int32 (int64 with x64), floats float32."""
    return jnp.arange(start, stop, step, dtype=dtype)


def ones(shape, dtype=float32):
    """``mindspore.numpy.ones`` (float32 by default)."""
    return jnp.ones(shape, dtype=dtype)


def zeros(shape, dtype=float32):
    """``mindspore.numpy.zeros`` (float32 by default)."""
    return jnp.zeros(shape, dtype=dtype)


def roll(a, shift, axis=None):
    """``mindspore.numpy.roll``."""
    return jnp.roll(a, shift, axis)


def tile(a, reps):
    """``mindspore.numpy.tile``."""
    return jnp.tile(a, reps)


def tensordot(a, b, axes=2):
    """``mindspore.numpy.tensordot``."""
    return jnp.tensordot(a, b, axes)


def split(x, indices_or_sections, axis=0):
    """``mindspore.numpy.split`` (MindSpore names the array ``x``); a list of arrays."""
    return jnp.split(x, indices_or_sections, axis)
