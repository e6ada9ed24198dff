"""Ops that update Parameters in place (MindSpore's ``ops/function/parameter_func.py`` and its
``scatter_*`` state ops); inside ``cellkit.jit`` the updates are written back.

Every op here checks that its target is a Parameter, computes the new value and stores it
with ``Parameter.assign_value`` (the one write path, which ``jit`` and ``grad`` record), and
returns the new value, as MindSpore does.

>>> import cellkit as ms
>>> p = ms.Parameter(ms.Tensor([[1., 2.], [3., 4.]]), name="p")
>>> _ = ms.ops.scatter_add(p, ms.Tensor([1, 1]), ms.Tensor([[1., 1.], [2., 2.]]))
>>> p.asnumpy()
array([[1., 2.],
       [6., 7.]], dtype=float32)
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ... import dtype as mstype
from ...parameter import Parameter
from ._utils import _v, exporter
from .index_func import _ND_UPDATES, nd_update

# Stateful, host-side or transform ops: eager calls run op by op (see cellkit.eager_jit).
EAGER_JIT = False
__all__ = []
_public = exporter(__all__)


def _target(variable, what):
    if not isinstance(variable, Parameter):
        raise TypeError(f"{what}: variable must be a Parameter, got {type(variable).__name__}; "
                        "Tensors are immutable jax.Arrays in cellkit")
    return variable


def _checked(variable, value, label):
    """``value`` (an array or Python scalar) after MindSpore's rule: it must convert to the
    Parameter's dtype without losing data."""
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
        return value
    value = jnp.asarray(value)
    if jnp.promote_types(value.dtype, target) != target:
        raise TypeError(f"{label}: the value has dtype {mstype.get_dtype(value.dtype)}, which does "
                        f"not convert to {variable.dtype} without losing data (MindSpore's "
                        "promotion rule); cast it explicitly with ops.cast")
    return value


def _store(variable, new):
    return variable.assign_value(jnp.asarray(new).astype(variable.dtype)).value


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
    _target(variable, "assign")
    value = _checked(variable, value, f"assign to Parameter '{variable.name}'")
    return variable.assign_value(value).value


def _update(name, combine):
    def op(variable, value):
        _target(variable, name)
        value = _checked(variable, value, f"{name} to Parameter '{variable.name}'")
        if not isinstance(value, (bool, int, float, complex)) and value.ndim != len(variable.shape):
            raise ValueError(f"{name}: the value must have the rank of Parameter '{variable.name}' "
                             f"({len(variable.shape)}), got shape {value.shape}")
        current = variable.value
        return _store(variable, combine(current, jnp.broadcast_to(jnp.asarray(value, current.dtype), current.shape)))
    op.__name__ = op.__qualname__ = name
    return op


assign_add = _update("assign_add", jnp.add)
assign_add.__doc__ = """``variable += value`` in place (``value`` has the Parameter's rank and broadcasts); returns the new value.

>>> import cellkit as ms
>>> step = ms.Parameter(ms.Tensor([0]), name="step")
>>> ms.ops.assign_add(step, ms.Tensor([1])).tolist()
[1]
"""
assign_sub = _update("assign_sub", jnp.subtract)
assign_sub.__doc__ = "``variable -= value`` in place; returns the new value."
__all__ += ["assign_add", "assign_sub"]

_ROW_UPDATES = {"update": "set", "add": "add", "sub": "sub", "mul": "multiply", "div": "divide",
                "max": "max", "min": "min"}


def _scatter_rows(kind):
    name = f"scatter_{kind}"

    def op(input_x, indices, updates):
        _target(input_x, name)
        updates = _checked(input_x, updates, f"{name} on Parameter '{input_x.name}'")
        current, idx = input_x.value, jnp.asarray(_v(indices))
        updates = jnp.asarray(updates, current.dtype)
        expected = idx.shape + tuple(current.shape[1:])
        if updates.shape != expected:
            raise ValueError(f"{name}: updates must have shape indices.shape + input_x.shape[1:] = {expected}, "
                             f"got {updates.shape} (Parameter '{input_x.name}' {tuple(current.shape)})")
        at = current.at[idx]
        new = at.add(-updates) if kind == "sub" else getattr(at, _ROW_UPDATES[kind])(updates)
        return _store(input_x, new)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"Parameter rows ``input_x[indices]`` {'set to' if kind == 'update' else kind + '-combined with'} "
                  "``updates`` in place (repeated indices accumulate); returns the new value.")
    return op


def _scatter_nd(kind):
    name = f"scatter_nd_{kind}"

    def op(input_x, indices, updates, use_locking=False):
        _target(input_x, name)
        updates = _checked(input_x, updates, f"{name} on Parameter '{input_x.name}'")
        return _store(input_x, nd_update(kind, input_x.value, indices, updates, name))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"The Parameter's elements or slices at the coordinates of ``indices`` "
                  f"{'set to' if kind == 'update' else kind + '-combined with'} ``updates`` in place; "
                  "returns the new value.")
    return op


for _kind in _ROW_UPDATES:
    globals()[f"scatter_{_kind}"] = _scatter_rows(_kind)
    __all__.append(f"scatter_{_kind}")
for _kind in _ND_UPDATES:
    globals()[f"scatter_nd_{_kind}"] = _scatter_nd(_kind)
    __all__.append(f"scatter_nd_{_kind}")


@_public
def index_add(x, indices, y, axis, use_lock=True, check_index_bound=True):
    """Add the slices of ``y`` to the Parameter ``x`` at ``indices`` along ``axis``, in place."""
    _target(x, "index_add")
    y = jnp.asarray(_checked(x, y, f"index_add on Parameter '{x.name}'"))
    current, idx = x.value, jnp.asarray(_v(indices))
    axis = axis % current.ndim
    if idx.ndim != 1 or y.ndim != current.ndim or y.shape[axis] != idx.shape[0] or \
            any(a != b for d, (a, b) in enumerate(zip(y.shape, current.shape)) if d != axis):
        raise ValueError(f"index_add: y must have Parameter '{x.name}''s shape {tuple(current.shape)} with "
                         f"axis {axis} of size len(indices) = {idx.size}, got {y.shape}")
    return _store(x, current.at[(slice(None),) * axis + (idx,)].add(y.astype(current.dtype)))


@_public
def zero_(input):  # noqa: A002
    """Set the Parameter ``input`` to zeros in place (a Tensor, being immutable, gives new zeros)."""
    if isinstance(input, Parameter):
        return _store(input, jnp.zeros(input.shape, input.dtype))
    return jnp.zeros_like(jnp.asarray(input))
