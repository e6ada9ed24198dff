"""Helpers shared by the Tensor-method families: argument spellings and dtype canonicalisation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["canon", "axis_kwargs", "arr", "dims_arg", "shape_arg", "MS_REDUCTION_KWARGS"]

# MindSpore spellings of the reduction keywords JAX spells ``axis``/``keepdims``.
MS_REDUCTION_KWARGS = ("dim", "keepdim", "keep_dims", "axis", "keepdims")


def canon(dtype):
    """``dtype`` as the dtype JAX will actually use (int64 -> int32 when 64-bit mode is off)."""
    return jax.dtypes.canonicalize_dtype(np.dtype(dtype))


def axis_kwargs(kwargs: dict) -> dict:
    """``kwargs`` with MindSpore's ``dim``/``keepdim``/``keep_dims`` renamed to JAX's ``axis``/``keepdims``."""
    if "dim" in kwargs:
        kwargs["axis"] = kwargs.pop("dim")
    for k in ("keepdim", "keep_dims"):
        if k in kwargs:
            kwargs["keepdims"] = kwargs.pop(k)
    return kwargs


def arr(x):
    """A Parameter's value, a list as an array, anything else as is."""
    if hasattr(x, "__cellkit_value__"):
        return x.__cellkit_value__()
    if isinstance(x, (list, tuple)):
        return jnp.asarray(x)
    return x


def dims_arg(args):
    """``f(1, 2)`` and ``f((1, 2))`` both mean the tuple ``(1, 2)`` (MindSpore's ``*shape`` spelling)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def shape_arg(args):
    """Like :func:`dims_arg`, and a 1-d integer array counts as a shape too."""
    if len(args) == 1 and hasattr(args[0], "shape") and not isinstance(args[0], (tuple, list)):
        return tuple(int(i) for i in np.asarray(args[0]).reshape(-1))
    return dims_arg(args)
