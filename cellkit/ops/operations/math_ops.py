"""Math Primitives (MindSpore's ``ops/operations/math_ops.py``): one table line each."""

from __future__ import annotations

import jax.numpy as jnp

from .. import function as F
from ..function._utils import _v
from ..primitive import install_primitives

__all__ = []


def _matmul(a, b, *, transpose_a, transpose_b):
    a, b = _v(a), _v(b)
    if transpose_a:
        a = jnp.swapaxes(a, -1, -2)
    if transpose_b:
        b = jnp.swapaxes(b, -1, -2)
    return jnp.matmul(a, b)


def _reduce(op, keyword):
    """A ReduceX Primitive's call ``(x, axis=())``: ``()`` reduces every axis."""
    def call(x, axis=(), *, keep_dims):
        return op(x, None if axis == () else axis, **{keyword: keep_dims})
    call.__name__ = f"reduce_{op.__name__}"
    return call


# Name: (op, constructor arguments with MindSpore's defaults[, check])
PRIMITIVES = {
    "MatMul": (_matmul, {"transpose_a": False, "transpose_b": False}),
    "ReduceSum": (_reduce(F.sum, "keepdim"), {"keep_dims": False}),
    "ReduceMean": (_reduce(F.mean, "keep_dims"), {"keep_dims": False}),
    "Add": (F.add, {}),
    "Mul": (F.mul, {}),
    "Sub": (F.sub, {}),
}
install_primitives(globals(), __all__, PRIMITIVES)
