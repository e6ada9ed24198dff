"""Array Primitives (MindSpore's ``ops/operations/array_ops.py``): one table line each."""

from __future__ import annotations

from .. import function as F
from ..primitive import install_primitives

__all__ = []


def _concat(tensors, *, axis):
    return F.concat(tensors, axis)


def _squeeze(x, *, axis):
    return F.squeeze(x, axis if axis != () else None)


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "Cast": (F.cast, {}),
    "Reshape": (F.reshape, {}),
    "Transpose": (F.transpose, {}),
    "Concat": (_concat, {"axis": 0}),
    "Shape": (F.shape, {}),
    "Squeeze": (_squeeze, {"axis": ()}),
    "ExpandDims": (F.expand_dims, {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
