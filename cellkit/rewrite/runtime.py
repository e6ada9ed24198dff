"""The helpers rewritten code calls (``import cellkit.rewrite.runtime as __cellkit_rw__``).

Each takes the current value of an assignment target and returns the value the
target's name must hold afterwards. On a ``jax.Array`` (or tracer) that is a new
array; on anything else (a Parameter, a list, a dict, a NumPy array) the
ordinary Python operation runs, in place, and the same object comes back, so
the rebinding the rewrite adds changes nothing.

>>> import cellkit as ms
>>> x = ms.Tensor([1., 2., 3.])
>>> setitem(x, 0, 5.).tolist()
[5.0, 2.0, 3.0]
>>> augsetitem(x, slice(1, None), "iadd", 1.).tolist()
[1.0, 3.0, 4.0]
>>> inplace(x, "mul_", 2).tolist()
[2.0, 4.0, 6.0]
>>> d = {}
>>> setitem(d, "k", 1) is d, d
(True, {'k': 1})
"""

from __future__ import annotations

import operator

import jax

from ..parameter import local
from ..tensor_methods.assignment import aug_item, set_item
from ..tensor_methods.inplace import apply

__all__ = ["setitem", "augsetitem", "store_back", "setattr_value", "inplace", "unbound"]

_Array = jax.Array


def setitem(obj, index, value):
    """What ``obj`` is after ``obj[index] = value``."""
    if isinstance(obj, _Array):
        return set_item(obj, index, value)
    obj[index] = value
    return obj


def augsetitem(obj, index, op, value):
    """What ``obj`` is after ``obj[index] <op>= value`` (``op`` names an ``operator.i*`` function)."""
    if isinstance(obj, _Array):
        return aug_item(obj, index, getattr(operator, op), value)
    current = obj[index]
    return setitem(obj, index, getattr(operator, op)(current, value))


def store_back(obj, index, new):
    """What ``obj`` is after its element ``obj[index]`` became ``new`` (a nested assignment)."""
    if isinstance(obj, _Array):
        return set_item(obj, index, new)
    if isinstance(new, _Array) and obj[index] is not new:  # an array element was replaced
        if isinstance(obj, tuple) and isinstance(index, int):  # a new tuple: tuples are immutable too
            items = list(obj)
            items[index] = new
            return type(obj)(items) if type(obj) is tuple else type(obj)._make(items)
        obj[index] = new
    return obj


def setattr_value(obj, name, new):
    """Set ``obj.<name>`` to ``new`` unless it already is that object (a Parameter updated in place).

    Inside a transform (``jit``, GRAPH_MODE, ``grad``), a traced array replacing an array attribute
    holds only until the transform ends, as in MindSpore's graph mode: the attribute is not
    written back (a Parameter is; keep state there).
    """
    old = getattr(obj, name)
    if old is new or not isinstance(old, _Array):
        return new  # changed in place (a Parameter, a container): nothing to rebind
    frame = local.frame
    if frame is not None and isinstance(new, jax.core.Tracer) and isinstance(old, _Array) \
            and name in getattr(obj, "__dict__", ()):
        if frame.restores is None:
            frame.restores = []
        frame.restores.append((obj, name, obj.__dict__[name]))
        obj.__dict__[name] = new
        return new
    setattr(obj, name, new)
    return new


def inplace(obj, name, *args, **kwargs):
    """What ``obj`` is after ``obj.<name>(*args, **kwargs)``, an in-place Tensor method."""
    if isinstance(obj, _Array):
        return apply(obj, name, *args, **kwargs)
    getattr(obj, name)(*args, **kwargs)
    return obj


def unbound(obj, index, value):
    """``obj[index] = value`` where the rewrite has no name to rebind (``f()[i] = v``)."""
    if isinstance(obj, _Array):
        raise TypeError("an assignment into a Tensor that no name holds (such as f()[i] = v) cannot "
                        "rebind anything: a cellkit Tensor is an immutable jax.Array; assign the "
                        "Tensor to a name first (y = f(); y[i] = v)")
    obj[index] = value
