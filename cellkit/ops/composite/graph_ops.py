"""The rest of MindSpore's ``ops.composite``: the overloaded operators its graph compiler calls.

``augassign_add`` ... ``augassign_mod`` are what ``x += y`` ... ``x %= y`` become in a MindSpore
graph; ``hyper_add`` adds (nested) tuples of gradients elementwise; ``tail``, ``zip_operation``,
``iter_converter``, ``ms_hasnext`` and ``ms_next`` are the sequence helpers of its ``for``
loops; ``recompute_block`` marks a block for recomputation. Here each is the Python operation it
stands for, so it works eagerly, under ``cellkit.jit`` and in GRAPH_MODE alike (MindSpore's own
sequence helpers return ``None`` outside a graph). ``env_get`` reads MindSpore's gradient
environment, which JAX has no counterpart of: it raises.

>>> import cellkit as ms
>>> from cellkit.ops import composite as C
>>> C.augassign_add((1, 2), (3,)), C.augassign_floordiv(7, 2)
((1, 2, 3), 3)
>>> C.hyper_add((ms.Tensor([1.]), 2), (ms.Tensor([3.]), 4))
(Array([4.], dtype=float32), 6)
"""

from __future__ import annotations

import operator

from ...engine import recompute
from ...parameter import Parameter
from .base import HyperMap

__all__ = ["augassign_add", "augassign_sub", "augassign_mul", "augassign_div", "augassign_floordiv",
           "augassign_mod", "hyper_add", "tail", "zip_operation", "iter_converter", "ms_hasnext", "ms_next",
           "env_get", "recompute_block"]


def _value(x):
    return x.value if isinstance(x, Parameter) else x


class _Operator:
    """A binary operator under MindSpore's name (a ``MultitypeFuncGraph`` there)."""

    def __init__(self, name, op):
        self.name = name
        self.op = op

    def __call__(self, x, y):
        return self.op(_value(x), _value(y))

    def __repr__(self):
        return f"<composite {self.name}>"


augassign_add = _Operator("augassign_add", operator.add)
augassign_sub = _Operator("augassign_sub", operator.sub)
augassign_mul = _Operator("augassign_mul", operator.mul)
augassign_div = _Operator("augassign_div", operator.truediv)
augassign_floordiv = _Operator("augassign_floordiv", operator.floordiv)
augassign_mod = _Operator("augassign_mod", operator.mod)
hyper_add = HyperMap(_Operator("hyper_add", operator.add))


def tail(sequence):
    """``sequence[1:]`` as a tuple."""
    return tuple(sequence)[1:]


def zip_operation(*sequences):
    """``tuple(zip(*sequences))``, each element a tuple."""
    return tuple(zip(*sequences))


def iter_converter(x):
    """``x`` as a tuple to iterate: a sequence's elements, a dict's keys, a Tensor's rows."""
    return tuple(_value(x))


def ms_hasnext(x):
    """Whether the sequence ``x`` has an element left."""
    return len(x) > 0


def ms_next(x):
    """``(x[0], rest)`` of the sequence ``x``."""
    x = tuple(x)
    return x[0], x[1:]


def env_get(env, parameter):
    """MindSpore's gradient-environment lookup: no JAX counterpart."""
    raise NotImplementedError("ops.composite.env_get reads MindSpore's internal gradient environment, which "
                              "JAX has no counterpart of; take gradients with ms.grad / ms.value_and_grad")


def recompute_block(block):
    """``block`` to be run with its activations recomputed in the backward pass (``ms.recompute``)."""
    def run(*args, **kwargs):
        return recompute(block, *args, **kwargs)
    return run
