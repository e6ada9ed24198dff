"""Ops that update Parameters in place (MindSpore's ``ops/function/parameter_func.py``); inside ``cellkit.jit`` the updates are written back."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ...parameter import Parameter
from ._utils import _v, exporter

__all__ = []
_public = exporter(__all__)


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
