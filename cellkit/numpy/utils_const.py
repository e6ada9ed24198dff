"""Argument checks ``cellkit.numpy`` shares (MindSpore's ``utils_const``): axes and shapes.

>>> from cellkit.numpy import utils_const
>>> utils_const.check_axis(-1, 3, "sum")
2
>>> utils_const.check_shape([2, 3], "zeros")
(2, 3)
"""

from __future__ import absolute_import

import numbers

import numpy as np

__all__ = ["check_axis", "check_axes", "check_shape"]


def check_axis(axis, ndim, where):
    """A normalised axis in ``[0, ndim)``; ``ValueError`` naming the function otherwise."""
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"{where}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{where}: axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % max(ndim, 1)


def check_axes(axis, ndim, where):
    """``None`` (every axis), or a tuple of normalised axes."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        axes = tuple(check_axis(a, ndim, where) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{where}: duplicate value in axis {axis!r}")
        return axes
    return (check_axis(axis, ndim, where),)


def check_shape(shape, where):
    """A shape argument (an int, a list or tuple of ints) as a tuple of non-negative ints."""
    if hasattr(shape, "shape") and hasattr(shape, "tolist"):
        shape = np.asarray(shape).tolist()
    if isinstance(shape, bool) or not isinstance(shape, (numbers.Integral, list, tuple)):
        raise TypeError(f"{where}: only int, tuple, list and tensor are allowed for shape, got "
                        f"{type(shape).__name__}")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (numbers.Integral, np.integer)):
            raise TypeError(f"{where}: each entry in shape should be int, got {s!r}")
        if s < 0:
            raise ValueError(f"{where}: each entry in shape should be no less than 0, got {shape}")
    return tuple(int(s) for s in shape)
